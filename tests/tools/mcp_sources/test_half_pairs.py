"""An MCP server whose JSON holds half a UTF-16 pair: read as U+FFFD, as Lookout reads all JSON."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.tools.mcp_sources.conftest import LOOPBACK_IS_PUBLIC
from tools.api import Signal
from tools.mcp import MCPToolSource, ServerSpec, list_server_tools
from tools.mcp.guard import mend_json
from tools.testing import tool_context_for_test

# JSON text as a server writes it: "\\ud83d" alone is half of 😀 ("\\ud83d\\ude00").
HALF = "half \\ud83d here, whole \\ud83d\\ude00"
READ = "half \ufffd here, whole \U0001f600"


def public(address: str) -> bool:
    return LOOPBACK_IS_PUBLIC(address)


class _Handler(BaseHTTPRequestHandler):
    """A hand-written MCP server over streamable HTTP whose texts hold ``HALF``: each answer is
    JSON, or an event stream written in two pieces that cut the half pair's escape in two."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "halves", "version": "1"},
            }
        elif method == "tools/list":
            result = {
                "tools": [{"name": "say", "description": "@", "inputSchema": {"type": "object"}}]
            }
        else:
            result = {"content": [{"type": "text", "text": "@"}], "isError": False}
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        body = json.dumps(answer).replace('"@"', f'"{HALF}"')
        if self.server.events:  # type: ignore[attr-defined]
            self.answer_as_events(body.encode())
        else:
            self.answer(body.encode(), "application/json")

    def answer(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer_as_events(self, data: bytes) -> None:
        stream = b"event: message\r\ndata: " + data + b"\r\n\r\n"
        cut = stream.find(b"\\ud83d") + 3 if b"\\ud83d" in stream else len(stream) // 2
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in (stream[:cut], stream[cut:], b""):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(params=["json", "events"])
def halves(request) -> Iterator[ServerSpec]:
    """The server, answering JSON or event streams, as a spec the public policy lets through."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.events = request.param == "events"  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield ServerSpec(name="halves", url=f"http://127.0.0.1:{server.server_address[1]}/mcp")
    server.shutdown()
    server.server_close()


def test_half_a_pair_in_a_tool_result_is_read_as_a_replacement_character(halves):
    """Regression: the SDK refused the message, and the call failed as "The MCP server halves
    ... could not be reached (Failed to parse JSON response: ...)", a traceback logged."""
    source = MCPToolSource(halves, list_server_tools(halves, 30, policy=public), policy=public)
    ctx, _ = tool_context_for_test(signal=Signal.after(30))
    output = source.list_tools()[0].execute({}, ctx)
    assert output == {"text": READ}


def test_half_a_pair_in_a_listed_description_is_read_as_a_replacement_character(halves):
    listed = list_server_tools(halves, 30, policy=public)
    assert [(tool.name, tool.description) for tool in listed] == [("say", READ)]


def test_json_without_half_a_pair_or_that_does_not_parse_is_passed_on_as_it_came():
    whole = b'{"text": "\\ud83d\\ude00 \xc3\xa9"}'
    assert mend_json(b'{"a": "caf\xc3\xa9"}') == b'{"a": "caf\xc3\xa9"}'
    assert json.loads(mend_json(whole)) == json.loads(whole)
    assert mend_json(b'{"cut": "\\ud83d') == b'{"cut": "\\ud83d'
