"""Sends a step's tool calls, and the next step once the last of them has its outcome; the
model step and the reaper (a turn whose calls wait in the queue) both send calls here.

A step's calls go out as plain ``run_tool_call`` tasks, not a chord: the calls' outcomes are
in the database, so the task of a call that ends reads there whether any call of its step is
still without one (``next_step_due``), and the call that finds none runs the next step in its
own task (``workers.toolcalls``: a Celery publish, a delivery and a task's start fewer a tool
round), or sends it (``send_next_step``: a step another worker holds, a call run outside its
task). A chord stored each call's result in Redis and counted them there (a result write, a
script, the group's read and clean-up a call, a size set and deleted a step), which no one read.

The tasks are named, not imported, so the reaper needs no task module: a call or a step sent
twice runs once (each claims its work atomically), so sending again is always safe. Two calls
of a step that end at the same moment may both find the other's outcome: the turn's Redis
set of steps sent lets the first of them run or send the next step (the other's would wait
on the step's claim, looking again every few seconds while the step runs). After a Stop the
step always goes: it derives the cancelled reply again with the calls' results. A call
whose task stops between storing its outcome and claiming the step leaves the turn waiting
with every call done, which the reaper sees and sends the step for (``workers.stale``).
Every task sent here marks its work queued and records its id for a Stop to revoke, as it
is published (``core.turn.queued``).
"""

from __future__ import annotations

from core import broker
from core.extensions import db
from core.turn import statements
from core.turn.state import turn_state
from workers.celery_app import celery


def dispatch(turn_id: str, step: int, call_ids: list[str]) -> None:
    """Send the step's tool calls; the last to end runs the next step."""
    for call_id in call_ids:
        send(broker.RUN_TOOL_CALL, turn_id, call_id)


def send_step(turn_id: str, step: int) -> None:
    """Send step ``step`` of a turn on its own (its tool calls all have their results)."""
    send(broker.RUN_TURN_STEP, turn_id, step)


def send(task_name: str, turn_id: str, work: str | int) -> None:
    """Publish a step or tool-call task of a turn (``work``: the step, or the call's id)."""
    # Neither task stores a result, so the worker does not subscribe to one: Celery would
    # otherwise SUBSCRIBE this process's result consumer to every task sent here. The
    # arguments' display is given, as Celery's ``saferepr`` would write it (as the web's).
    # The queue is not declared again: this worker declared it as it began consuming it, and
    # a direct queue's task goes to the default exchange, which needs no binding (kombu would
    # bind a copy of the queue to the channel on every send only to find it declared).
    celery.send_task(
        task_name,
        args=[turn_id, work],
        ignore_result=True,
        declare=[],
        argsrepr=f"[{turn_id!r}, {work!r}]",
        kwargsrepr="{}",
    )


def next_step_due(turn_id: str, step: int) -> bool:
    """Whether the caller is to run or send step ``step + 1``: every tool call of step ``step``
    has its outcome (committed: read after the caller's commit, so of two calls that end at
    once one sees the other's), and no other call took the step on while the turn ran. A
    caller that then cannot run or send it gives it back (``TurnState.unsend``)."""
    waiting = db.session.scalar(statements.waiting_call(), {"turn": turn_id, "step": step})
    db.session.rollback()  # ends the read: no connection held
    return waiting is None and turn_state(turn_id).first_to_send(step + 1)


def send_next_step(turn_id: str, step: int) -> bool:
    """Send step ``step + 1`` if it is due (``next_step_due``); return whether it was sent."""
    if not next_step_due(turn_id, step):
        return False
    try:
        send_step(turn_id, step + 1)
    except Exception:
        turn_state(turn_id).unsend(step + 1)  # a later delivery of a call may send it
        raise
    return True
