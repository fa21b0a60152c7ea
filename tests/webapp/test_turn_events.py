"""A turn's events: named once, published with DESIGN.md's payloads, the same list in the pages."""

from __future__ import annotations

import ast
import re
import uuid
from pathlib import Path

import pytest
import redis

from core.turn import events
from core.turn.state import TurnState

ROOT = Path(__file__).resolve().parents[2]
EVENTS_MODULE = ROOT / "webapp" / "turn" / "events.py"


@pytest.fixture
def state(redis_url) -> TurnState:
    return TurnState(redis.Redis.from_url(redis_url), f"t-{uuid.uuid4().hex}")


def test_the_page_script_lists_the_same_events_as_the_server():
    written = events.PAGE_SCRIPT.read_text(encoding="utf-8")
    assert written == events.page_script(), (
        "webapp/static/events.js is out of date: run `python -m core.turn.events`."
    )
    for name in events.NAMES:
        assert f'"{name}"' in written


def test_every_event_of_design_md_is_named_once():
    """DESIGN.md's events, and reasoning.delta (issue 27: reasoning shown apart, docs/api.md)."""
    assert events.NAMES == (
        "turn.started",
        "reasoning.delta",
        "text.delta",
        "tool.started",
        "tool.finished",
        "source.added",
        "turn.completed",
        "turn.failed",
        "turn.cancelled",
        "stream.closed",
    )


def test_no_python_module_but_the_events_module_spells_an_event_name():
    offences = []
    for package in ("webapp", "workers", "tools"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == EVENTS_MODULE:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in events.NAMES:
                    offences.append(f"{path.relative_to(ROOT)}: {node.value!r}")
    assert offences == []


def test_no_page_script_but_the_generated_one_spells_an_event_name():
    quoted = re.compile("|".join(re.escape(f'"{name}"') for name in events.NAMES))
    offences = [
        path.name
        for path in sorted((ROOT / "webapp" / "static").glob("*.js"))
        if path != events.PAGE_SCRIPT and quoted.search(path.read_text(encoding="utf-8"))
    ]
    assert offences == []


def test_a_finished_call_carries_its_error_or_else_its_output(state):
    events.tool_finished(state, "c1", "web_fetch", "error", None, "The page was empty.")
    events.tool_finished(state, "c2", "web_fetch", "ok", {"text": "hi"}, None)
    assert [(name, data) for _, name, data in state.read()] == [
        (
            "tool.finished",
            {
                "callId": "c1",
                "name": "web_fetch",
                "outcome": "error",
                "error": "The page was empty.",
            },
        ),
        (
            "tool.finished",
            {"callId": "c2", "name": "web_fetch", "outcome": "ok", "output": {"text": "hi"}},
        ),
    ]


@pytest.mark.parametrize(
    ("status", "error", "event", "data"),
    [
        ("completed", None, "turn.completed", {}),
        (
            "failed",
            "The model is unreachable.",
            "turn.failed",
            {"error": "The model is unreachable."},
        ),
        ("cancelled", None, "turn.cancelled", {}),
    ],
)
def test_a_turn_ends_with_the_event_of_its_status(state, status, error, event, data):
    events.turn_ended(state, status, error)
    assert [(name, payload) for _, name, payload in state.read()] == [(event, data)]


def test_reasoning_is_published_apart_from_the_text(state):
    events.reasoning_delta(state, "Thinking it over.")
    events.text_delta(state, "Answer.")
    assert [(name, data) for _, name, data in state.read()] == [
        ("reasoning.delta", {"text": "Thinking it over."}),
        ("text.delta", {"text": "Answer."}),
    ]


def test_a_source_is_published_as_it_is_claimed(state):
    claimed = state.cite(
        events.SOURCE_ADDED, [("https://a.example/", events.source_data("https://a.example/", "A"))]
    )
    assert claimed == [True]
    source = {"url": "https://a.example/", "title": "A"}
    assert [(name, data) for _, name, data in state.read()] == [("source.added", source)]
