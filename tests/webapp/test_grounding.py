"""The grounding line of a reply, derived from its calls' grounding kinds and outcomes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from core.turn.grounding import ERROR_CHARS, WITHOUT_THE_WEB, grounding_of, without_the_web

TIMED_OUT = "SearXNG did not answer within 15 seconds."


def call(grounding: str | None, outcome: str = "ok", error: str | None = None):
    return SimpleNamespace(grounding=grounding, outcome=outcome, error=error)


@pytest.mark.parametrize(
    ("calls", "summary"),
    [
        ([call("search"), call("search"), *[call("read")] * 3], "Searched 2 times, read 3 pages"),
        ([call("search")], "Searched 1 time"),
        ([call("read")], "Read 1 page"),
        ([call("search", "timeout", TIMED_OUT)], f"Search failed: {TIMED_OUT}"),
        ([call("search", "error", "No."), call("search")], "Searched 1 time (1 failed)"),
        ([call("read"), call("search", "refused", "No.")], "Read 1 page. Search failed: No."),
        ([call("read", "error", "Gone.")], "Reading failed: Gone."),
    ],
)
def test_a_reply_says_what_it_searched_and_read(calls, summary):
    assert grounding_of(calls)["summary"] == summary


def test_calls_of_other_tools_and_stopped_calls_ground_nothing():
    assert grounding_of([call(None), call("search", "cancelled"), call("read", "skipped")]) is None
    assert without_the_web()["summary"] == WITHOUT_THE_WEB


def test_a_failed_calls_error_is_quoted_on_one_bounded_line():
    said = grounding_of([call("search", "error", "Line one\n\n" + "x" * 5000)])["summary"]
    assert "\n" not in said and len(said) <= len("Search failed: ") + ERROR_CHARS


def test_the_counts_go_with_the_sentence():
    grounding = grounding_of([call("search"), call("read", "timeout", "Slow.")])
    assert grounding == {
        "summary": "Searched 1 time. Reading failed: Slow.",
        "searches": 1,
        "reads": 0,
        "failed": 1,
    }
