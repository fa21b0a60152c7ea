"""A small MCP server written with the SDK, run by tests on loopback over streamable HTTP.

Its tools fail, wait, answer hugely or wait to be cancelled, and it writes what it saw (a tool
that started, a call the client cancelled) to ``<record dir>/events``, one word a line, so tests
assert what the server itself observed.

Run as ``python -m tests.support.mcp_server PORT RECORD_DIR``; ``MCPTestServer`` does so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.processes import ROOT, free_port, start_process, stop_process, wait_for_port

HUGE_CHARS = 1_000_000


def serve(port: int, record: Path) -> None:
    """Run the server on 127.0.0.1:``port`` until stopped."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("testing")

    def note(word: str) -> None:
        with open(record / "events", "a") as events:
            events.write(word + "\n")

    @server.tool()
    def echo(text: str) -> str:
        """Say the text back."""
        note("echo")
        return f"Echo: {text}"

    @server.tool()
    def broken() -> str:
        """Fail, always."""
        raise ValueError("the ledger is locked")

    @server.tool()
    def huge() -> str:
        """Answer with a million characters."""
        return "x" * HUGE_CHARS

    @server.tool()
    async def wait_for_cancel() -> str:
        """Wait a minute, noting a cancel."""
        note("started")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            note("cancelled")
            raise
        return "waited"

    server.run("streamable-http", host="127.0.0.1", port=port)


class MCPTestServer:
    """The test server in its own process on a free loopback port; ``url`` is its endpoint."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def events(self) -> list[str]:
        """Return what the server noted so far."""
        path = self.directory / "events"
        return path.read_text().split() if path.exists() else []

    def __enter__(self) -> MCPTestServer:
        args = [
            sys.executable,
            "-m",
            "tests.support.mcp_server",
            str(self.port),
            str(self.directory),
        ]
        self.process = start_process(args, self.directory / "server.log", cwd=ROOT)
        wait_for_port("127.0.0.1", self.port, timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.process)


if __name__ == "__main__":
    serve(int(sys.argv[1]), Path(sys.argv[2]))
