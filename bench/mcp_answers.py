"""CPU an MCP server's answer costs in Lookout's HTTP transport (``tools.mcp.guard``): the
mending, and on a checkout that has them the bounds, without a server or the SDK's parse.

Run from the project root of either checkout: ``.venv/bin/python -m bench.mcp_answers
[--rounds 2000]`` (or with this file's path, from a checkout without it). Each case passes one
answer through the transport's body stream ``--rounds`` times on one event loop: a 10 KB tool
result as a JSON body and as an event, and a 1 MB one of each in 64 KB chunks, as a socket
delivers it. Prints µs of process CPU an answer, the best of three passes.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from collections.abc import AsyncIterator

import anyio
import httpx2

from tools.mcp import guard

CHUNK = 65536


class _Chunks(httpx2.AsyncByteStream):
    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), CHUNK):
            yield self.data[start : start + CHUNK]


def _body(chars: int, events: bool) -> bytes:
    result = {"content": [{"type": "text", "text": ("word " * chars)[:chars]}]}
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "result": result}).encode()
    return b"event: message\r\ndata: " + body + b"\r\n\r\n" if events else body


# A checkout with the bounds passes each body a session's limit.
BOUNDED = "limit" in inspect.signature(guard._MendedStream).parameters  # noqa: SLF001


def _stream(data: bytes, events: bool) -> httpx2.AsyncByteStream:
    if BOUNDED:
        from tools.mcp.limits import AnswerLimit

        return guard._MendedStream(_Chunks(data), events, AnswerLimit())  # noqa: SLF001
    return guard._MendedStream(_Chunks(data), events)  # noqa: SLF001


async def _pass(data: bytes, events: bool, rounds: int) -> float:
    started = time.process_time()
    for _ in range(rounds):
        async for _piece in _stream(data, events):
            pass
    return (time.process_time() - started) / rounds * 1e6


def main() -> None:
    """Print each case's µs an answer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    for chars, label in ((10_000, "10 KB"), (1_000_000, "1 MB")):
        for events in (False, True):
            data = _body(chars, events)
            n = max(1, rounds * 10_000 // chars)
            best = min(anyio.run(_pass, data, events, n) for _ in range(3))
            kind = "event" if events else "JSON body"
            print(f"{label} {kind}: {best:.1f} us an answer")


if __name__ == "__main__":
    main()
