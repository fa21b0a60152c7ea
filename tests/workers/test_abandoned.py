"""The abandoned-work gate: past ABANDONED_MAX stuck tool threads a worker pauses, then resumes."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

from marshmallow import Schema

from tools.api import Signal, Tool
from workers.abandoned import AbandonedWork
from workers.toolcalls import execute_with_deadline


def test_the_worker_pauses_above_the_limit_and_resumes_at_it(caplog):
    calls: list[str] = []
    gate = AbandonedWork(pause=lambda: calls.append("pause"), resume=lambda: calls.append("resume"))
    with caplog.at_level(logging.INFO, "lookout.tools"):
        gate.adopt(limit=1)
        assert calls == [] and not gate.paused
        gate.adopt(limit=1)
        gate.adopt(limit=1)
        assert calls == ["pause"] and gate.paused and gate.count == 3
        gate.release(limit=1)
        assert calls == ["pause"]
        gate.release(limit=1)
        assert calls == ["pause", "resume"] and not gate.paused and gate.count == 1
    assert "takes no new task: 2 tool threads are still running" in caplog.text
    assert "takes tasks again: 1 abandoned tool threads left" in caplog.text


def test_a_tool_that_ignores_its_deadline_is_counted_until_its_thread_ends(monkeypatch):
    gate = AbandonedWork(pause=lambda: None, resume=lambda: None)
    monkeypatch.setattr("workers.toolcalls.abandoned", gate)
    release = threading.Event()
    tool = Tool("stubborn", "Sleep.", Schema, lambda input, ctx: release.wait(10))
    ctx = SimpleNamespace(signal=Signal.after(0.1))
    monkeypatch.setattr("workers.toolcalls.GRACE_SECONDS", 0.1)
    outcome = execute_with_deadline(tool, {}, ctx, abandoned_max=8)
    assert outcome.outcome == "timeout"
    assert gate.count == 1
    release.set()
    deadline = time.monotonic() + 5
    while gate.count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gate.count == 0


def test_a_tool_that_stops_in_time_is_not_counted(monkeypatch):
    gate = AbandonedWork(pause=lambda: None, resume=lambda: None)
    monkeypatch.setattr("workers.toolcalls.abandoned", gate)
    tool = Tool("quick", "Answer.", Schema, lambda input, ctx: "done")
    outcome = execute_with_deadline(tool, {}, SimpleNamespace(signal=Signal.after(5)))
    assert (outcome.outcome, outcome.output, gate.count) == ("ok", "done", 0)
