"""Which of a turn's work waits in the broker's queue: a marker per step or tool call whose task
was published and has not started, so the reaper sends again only work that is lost.

The markers live in the Redis that holds the queue: ``REDIS_URL`` is the Celery broker and the
turn's state alike (``core.broker.client_settings``, ``extensions.init_redis``), so a Redis that
restarts without its data loses the queued tasks and their markers together, and one that
keeps its data keeps both. Every publish of a step or tool-call task sets its marker, whoever
publishes it (a Celery signal): the web side's first step, a step's calls, the next step
(sent by the task of the step's last call to end), a task's retry, the reaper. The task
clears it as it starts, before it claims its work, so a task that fails or gives up before its
claim leaves its work unmarked: lost, for the reaper; so does a task
the worker drops unrun (revoked, expired, rejected: ``workers.turn_task``). The same round
trip records the task's id in the turn's ``tasks``, which a Stop revokes (each sender recorded
it apart, in a round trip of its own). A sender that has a round trip of its own to make after
the publish can take the marker into it (``marks_deferred``): the web's first step does, in the
start lock's release (``core.turn_starts``), before the POST is answered.

A marker is read only for work nobody claimed, so one left behind on claimed work (a task that
started before its publisher set the marker, a duplicate of a claimed call) misleads nobody.
The turn's end deletes its markers (``TurnState.end``), and a publish after the end (a Stop's
revoked tasks, a late callback) marks nothing, so no marker outlives its turn.

Key: ``lookout:turn:<id>:queued``, a set of ``step:<n>`` and ``call:<id>``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from celery.signals import after_task_publish
from flask import Flask, current_app, has_app_context
from redis.client import Pipeline

from core import broker
from core.turn.state import TurnState, key

_app: Flask | None = None
_deferring = threading.local()  # .marks: where this thread's publishes leave their markers


def step_work(step: int) -> str:
    """Return the marker of a turn's step ``step``."""
    return f"step:{step}"


def call_work(call_id: str) -> str:
    """Return the marker of a turn's tool call ``call_id``."""
    return f"call:{call_id}"


def work_of(task_name: str, args: Sequence[Any]) -> tuple[str, str] | None:
    """Return (turn id, marker) of a step or tool-call task; None for any other task."""
    if task_name == broker.RUN_TURN_STEP and len(args) == 2:
        return str(args[0]), step_work(int(args[1]))
    if task_name == broker.RUN_TOOL_CALL and len(args) == 2:
        return str(args[0]), call_work(str(args[1]))
    return None


def mark_queued(turn_id: str, work: str, task_id: str | None = None) -> None:
    """Record that a task for ``work`` was published, unless its turn has ended; with
    ``task_id``, the task's id too, in the same round trip (a cancel revokes it)."""
    state = TurnState(_client(), turn_id)
    if task_id is None:
        state.add_unless_ended("queued", work)
    else:
        state.queue(work, task_id)


def mark_left(turn_id: str, work: str, pipe: Pipeline | None = None) -> None:
    """Record that a task for ``work`` left the queue: it runs, or the worker dropped it; in
    ``pipe`` (a pipeline of the app's client), when given, for the caller to execute."""
    (pipe if pipe is not None else _client()).srem(key(turn_id, "queued"), work)


def all_queued(turn_id: str, works: Sequence[str]) -> bool:
    """Whether a task for each of ``works`` waits in the queue (published, not started)."""
    if not works:
        return False
    return all(_client().smismember(key(turn_id, "queued"), list(works)))


@contextmanager
def marks_deferred(marks: list[tuple[str, str, str]]) -> Iterator[None]:
    """Within, a step or tool-call task this thread publishes leaves (turn id, marker, task id)
    in ``marks`` instead of setting them in a round trip of its own: the caller sets them
    (``TurnState.queue``'s script) in a round trip it makes anyway."""
    previous = getattr(_deferring, "marks", None)
    _deferring.marks = marks
    try:
        yield
    finally:
        _deferring.marks = previous


def init_app(app: Flask) -> None:
    """Mark every step and tool-call task this process publishes; a publish made outside an
    app context (a signal handler's, or a sender without an app) goes through
    ``app``'s Redis (a worker process has one app)."""
    global _app
    _app = app
    after_task_publish.connect(_published, weak=False, dispatch_uid=__name__)


def _published(
    sender: str | None = None, body: Any = None, headers: Any = None, **_kwargs: Any
) -> None:
    args = body[0] if isinstance(body, (tuple, list)) and body else ()
    found = work_of(sender or "", args)
    if found is None:
        return
    task_id = headers.get("id") if isinstance(headers, dict) else None
    deferred = getattr(_deferring, "marks", None)
    if deferred is not None and task_id is not None:
        deferred.append((*found, task_id))
    elif has_app_context():
        mark_queued(*found, task_id)
    elif _app is not None:
        with _app.app_context():
            mark_queued(*found, task_id)


def _client():
    return current_app.extensions["lookout_redis"]
