"""A tool call's parsing (web_fetch's pages and files) counts against the share of the user
whose turn made the call, though the tool runs in a thread of its own (issue 24)."""

from __future__ import annotations

from types import SimpleNamespace

from marshmallow import Schema

from tools.api import Signal, Tool
from tools.parser_shares import FairParsers, acting_for
from tools.parsers import InlineParsers
from workers.toolcalls import execute_with_deadline


def test_a_tool_calls_parsing_is_counted_against_the_user_of_its_turn():
    shares = FairParsers(InlineParsers(), slots=2, queue_seconds=30)
    seen: list[dict[str, int]] = []

    def read(text: str) -> str:
        seen.append(shares.held())
        return text.upper()

    def execute(input, ctx) -> str:
        return shares.run(read, "page", signal=ctx.signal, what="https://example.test/")

    tool = Tool("fetchlike", "Read a page.", Schema, execute)
    with acting_for("user-1"):
        outcome = execute_with_deadline(tool, {}, SimpleNamespace(signal=Signal.after(10)))
    assert (outcome.outcome, outcome.output) == ("ok", "PAGE")
    assert seen == [{"user-1": 1}]
    assert shares.held() == {}
