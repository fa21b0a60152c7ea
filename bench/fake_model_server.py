"""Runs the tests' fake model in a process of its own and prints its port, for the benchmarks.

    .venv/bin/python -m bench.fake_model_server stream --tokens 50 --seconds 2
    .venv/bin/python -m bench.fake_model_server tool --tool noop --arguments '{}'

``stream`` answers every request with ``--tokens`` tokens spread over ``--seconds``. ``tool``
asks for one call of ``--tool`` while the request offers tools and carries no tool result, at
once, and answers a short text otherwise: at once, or in ``--answer-tokens`` tokens spread over
``--answer-seconds``. The first line printed is the port; the
server stops when its standard input closes or it gets SIGTERM. In the benchmark's own process
the fake would share a GIL with the web server and the clients, and its timing would drift.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

from tests.support.fake_model import FakeModel, Reply


def stream_responder(tokens: int, seconds: float):
    """Return a responder streaming ``tokens`` tokens over ``seconds``."""
    reply = Reply.text("tok " * tokens, chunks=tokens, delay=seconds / max(1, tokens))
    return lambda request: reply


def tool_responder(tool: str, arguments: dict[str, Any], tokens: int = 1, seconds: float = 0.0):
    """Return a responder asking for one tool call, then answering once it has the result
    (``tokens`` tokens over ``seconds``; "Done." at once by default)."""
    call = Reply.tool_calls([(tool, arguments)])
    answer = Reply.text("Done.")
    if seconds > 0:
        answer = Reply.text("tok " * tokens, chunks=tokens, delay=seconds / max(1, tokens))

    def respond(request: dict[str, Any]) -> Reply:
        answered = any(m.get("role") == "tool" for m in request.get("messages", []))
        return answer if answered or not request.get("tools") else call

    return respond


def main(argv: list[str] | None = None) -> None:
    """Start the fake, print its port, and serve until stdin closes or SIGTERM."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    stream = modes.add_parser("stream")
    stream.add_argument("--tokens", type=int, default=50)
    stream.add_argument("--seconds", type=float, default=2.0)
    tool = modes.add_parser("tool")
    tool.add_argument("--tool", default="noop")
    tool.add_argument("--arguments", default="{}")
    tool.add_argument("--answer-tokens", type=int, default=1)
    tool.add_argument("--answer-seconds", type=float, default=0.0)
    args = parser.parse_args(argv)
    if args.mode == "stream":
        responder = stream_responder(args.tokens, args.seconds)
    else:
        responder = tool_responder(
            args.tool, json.loads(args.arguments), args.answer_tokens, args.answer_seconds
        )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    fake = FakeModel(responder=responder, models=["tooly"]).start()
    print(fake.base_url.rsplit(":", 1)[1].split("/")[0], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    try:
        done.wait()
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
