"""The next model step, run in the task of the tool call that left its step without a call
waiting, rather than sent to the queue as a task of its own.

The step is claimed, watched, beats, stops on a Stop and ends its turn exactly as a delivered
``run_turn_step`` does (``workers.steps.run_claimed_step``, under its own read of the kept
rows' versions, so a change committed while the tool ran is seen); it saves a Celery publish,
its delivery and a task's start (the queued marker cleared, the versions read, the task's
watcher registration) and the queue's hop of latency on every tool round.

What the task does when the step cannot run here:

- another worker holds the step (``busy``: a copy sent by the reaper, or this task's own step
  run before a database failure): the step goes to the queue as before, and its task waits on
  the claim there, so this task neither waits nor blocks a worker thread;
- the step fails on the database (``OperationalError``): the step is given back (the turn's
  set of steps sent forgets it) before the call's task runs again (``workers.turn_task``), so
  that the run again, which finds its call done, runs or sends the step rather than taking it
  for sent already;
- the task's worker dies between the call's outcome and the step's claim: every call is done
  and the step unclaimed and not queued, which the reaper sees and sends (``workers.stale``).
"""

from __future__ import annotations

import logging

import redis

from core.kept import versions_read_once
from core.turn.state import turn_state
from workers.fanout import next_step_due, send_step
from workers.steps import run_claimed_step

log = logging.getLogger("lookout.turns")


class StepBusy(Exception):
    """Another worker holds the step: it goes to the queue, whose task waits on its claim."""


class RunsHere:
    """Stands for a ``run_turn_step`` task to ``run_claimed_step``: a step that another worker
    holds raises ``StepBusy`` rather than retrying the tool call's task."""

    def wait(self, countdown: float) -> BaseException:
        """Return the exception that tells the caller to send the step instead."""
        return StepBusy(f"the step is held elsewhere; its task would look again in {countdown}s")


def run_next_step(turn_id: str, step: int, call_id: str) -> str | None:
    """Run step ``step + 1`` here if every call of step ``step`` has its outcome and no other
    call took the step on (``fanout.next_step_due``); return how the step went ("sent" when
    another worker holds it), or None when it was not this call's to run."""
    if not next_step_due(turn_id, step):
        return None
    try:
        try:
            with versions_read_once():
                ran = run_claimed_step(RunsHere(), turn_id, step + 1)
        except StepBusy:
            send_step(turn_id, step + 1)
            ran = "sent"
    except Exception:  # a database failure, or a publish that failed: run it again later
        give_back(turn_id, step + 1)
        raise
    log.info(
        "turn=%s step=%s ran in the task of tool call %s: %s",
        turn_id,
        step + 1,
        call_id,
        ran,
        extra={"turn": turn_id, "step": step + 1, "call": call_id, "ran": ran},
    )
    return ran


def give_back(turn_id: str, step: int) -> None:
    """Forget that ``step`` was taken on, so the call's task run again (or another call's
    delivery) runs or sends it; without Redis, the reaper takes the turn on."""
    try:
        turn_state(turn_id).unsend(step)
    except redis.RedisError:
        log.warning("turn=%s: step %s stays marked sent; left to the reaper", turn_id, step)
