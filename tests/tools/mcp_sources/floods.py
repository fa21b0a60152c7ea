"""Hand-written MCP servers that answer without end: over streamable HTTP on loopback, or a
command over stdio (``python -m tests.tools.mcp_sources.floods KIND``). ``... floods probe
SECONDS [KIND ...]`` calls each from a child process and prints what it read (docs/benchmarks.md).

Each answers ``initialize`` as a server should, then floods the answer named by its kind:

- ``json``: a tool result as one JSON body of ``FLOOD_BYTES`` (the text never ends sooner);
- ``line``: an event stream whose one ``data:`` line never ends;
- ``events``: an event stream of small events that are never the answer;
- ``tools``: a listing of ``MANY_TOOLS`` tools in one page;
- over stdio, a tool result on one line of ``FLOOD_BYTES`` with no newline, or (``halves``)
  a text with half a UTF-16 pair in it.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tools.mcp import ServerSpec

# JSON text as a server writes it: "\\ud83d" alone is half of 😀 ("\\ud83d\\ude00").
HALF = "half \\ud83d here, whole \\ud83d\\ude00"
FLOOD_BYTES = 256 * 1024 * 1024
MANY_TOOLS = 1_000
BLOCK = b"x" * 65536


def _answer(message: dict[str, Any], result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()


def _initialized(message: dict[str, Any]) -> bytes:
    return _answer(
        message,
        {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "flood", "version": "1"},
        },
    )


def _unknown(message: dict[str, Any]) -> bytes:
    error = {"code": -32601, "message": "Method not found"}
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode()


def _endless_text(message: dict[str, Any]) -> Iterator[bytes]:
    """A tool result whose text runs to ``FLOOD_BYTES`` and is never closed."""
    yield (
        b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "'
        % (message["id"])
    )
    for _ in range(FLOOD_BYTES // len(BLOCK)):
        yield BLOCK


def _many_tools(message: dict[str, Any]) -> bytes:
    tools = [
        {"name": f"tool{i}", "description": "A tool.", "inputSchema": {"type": "object"}}
        for i in range(MANY_TOOLS)
    ]
    return _answer(message, {"tools": tools})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        kind = self.server.kind  # type: ignore[attr-defined]
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif message["method"] == "initialize":
            self.send("application/json", [_initialized(message)])
        elif message["method"] == "tools/list" and kind == "tools":
            self.send("application/json", [_many_tools(message)])
        elif message["method"] == "tools/list":
            tool = {"name": "flood", "description": "Floods.", "inputSchema": {"type": "object"}}
            self.send("application/json", [_answer(message, {"tools": [tool]})])
        elif message["method"] != "tools/call":
            self.send("application/json", [_unknown(message)])
        elif kind == "json":
            self.send("application/json", _endless_text(message))
        elif kind == "line":
            self.send("text/event-stream", _as_event(_endless_text(message)))
        else:
            note = b'event: message\r\ndata: {"jsonrpc": "2.0", "method": "ping"}\r\n\r\n'
            self.send("text/event-stream", (note for _ in range(FLOOD_BYTES // len(note))))

    def send(self, content_type: str, pieces: Any) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for piece in (*pieces, b"") if isinstance(pieces, list) else _then_end(pieces):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # the client stopped reading, as it should
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _as_event(pieces: Iterator[bytes]) -> Iterator[bytes]:
    yield b"event: message\r\ndata: "
    yield from pieces


def _then_end(pieces: Iterator[bytes]) -> Iterator[bytes]:
    yield from pieces
    yield b""


class FloodServer:
    """A flooding server of ``kind`` on 127.0.0.1 while in a ``with`` block; ``url`` is its
    MCP endpoint."""

    def __init__(self, kind: str) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.kind = kind  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def spec(self) -> ServerSpec:
        """Return the server as a spec an admin allowed on a private address."""
        return ServerSpec("flood", url=self.url, allow_private=True)

    def __enter__(self) -> FloodServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def serve_stdio(kind: str) -> None:
    """Answer over stdio: initialize, a one-tool listing, then a call as ``kind`` says."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            out.write(_initialized(message) + b"\n")
        elif message["method"] == "tools/list":
            tool = {"name": "flood", "description": "Floods.", "inputSchema": {"type": "object"}}
            out.write(_answer(message, {"tools": [tool]}) + b"\n")
        elif message["method"] != "tools/call":
            out.write(_unknown(message) + b"\n")
        elif kind == "halves":
            text = {"content": [{"type": "text", "text": "@"}], "isError": False}
            out.write(_answer(message, text).replace(b'"@"', f'"{HALF}"'.encode()) + b"\n")
        else:
            try:
                for piece in _endless_text(message):
                    out.write(piece)
            except BrokenPipeError:  # the client stopped reading, as it should
                return
        out.flush()


def measure_call(where: str, seconds: float) -> dict[str, Any]:
    """Call the flood tool of the server at ``where`` (a URL, or a stdio kind) as a worker
    does; return the tools listed, what the model reads (``output`` or ``error``) and how far
    this process's peak memory grew, in bytes."""
    import resource

    from tools.api import Signal
    from tools.mcp import MCPToolSource, list_server_tools
    from tools.testing import tool_context_for_test

    if not where.startswith("http"):
        command = (sys.executable, "-m", "tests.tools.mcp_sources.floods", where)
        spec = ServerSpec("flood", command=command)
    else:
        spec = ServerSpec("flood", url=where, allow_private=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    said: dict[str, Any] = {}
    try:
        listed = list_server_tools(spec, seconds)
        said["tools"] = len(listed)
        source = MCPToolSource(spec, listed[:1], timeout_seconds=seconds)
        ctx, _ = tool_context_for_test(signal=Signal.after(seconds))
        said["output"] = source.list_tools()[0].execute({}, ctx)
    except Exception as exc:  # noqa: BLE001 — what the model would read
        said["error"] = f"{type(exc).__name__}: {exc}"[:600]
    said["grew"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return said


def probe(seconds: float, kinds: list[str]) -> None:
    """Print, for each kind (HTTP kinds and stdio ``flood``/``halves``), what a call read,
    how long it took and how far its child process grew."""
    import subprocess
    import time
    from contextlib import nullcontext

    for kind in kinds:
        started = time.monotonic()
        server = None if kind in ("flood", "halves") else FloodServer(kind)
        with server or nullcontext():
            target = server.url if server else kind
            command = [sys.executable, "-m", __spec__.name, "measure", target, str(seconds)]
            said = subprocess.run(command, capture_output=True, text=True).stdout.strip()
        load = open("/proc/loadavg").read().split()[:3]
        print(kind, f"{time.monotonic() - started:.1f}s", said, "load", *load)


if __name__ == "__main__":
    if sys.argv[1:2] == ["measure"]:
        print(json.dumps(measure_call(sys.argv[2], float(sys.argv[3]))))
    elif sys.argv[1:2] == ["probe"]:
        probe(float(sys.argv[2]), sys.argv[3:] or ["json", "line", "events", "tools", "flood"])
    else:
        serve_stdio(sys.argv[1])
