"""Sends a step's tool calls as a chord of ``run_tool_call`` tasks whose callback runs the next
step; the model step and the reaper (a turn whose calls wait in the queue) both send it here.

The tasks are named, not imported, so the reaper needs no task module: a call or a step sent
twice runs once (each claims its work atomically), so sending again is always safe. Every
task sent, here or by the chord, marks its work queued and records its id for a Stop to
revoke, as it is published (``core.turn.queued``).
"""

from __future__ import annotations

from celery import chord

from core import broker
from workers.celery_app import celery


def dispatch(turn_id: str, step: int, call_ids: list[str]) -> None:
    """Send the step's tool calls as a chord whose callback runs the next step."""
    header = [
        celery.signature(broker.RUN_TOOL_CALL, args=(turn_id, call_id), immutable=True)
        for call_id in call_ids
    ]
    callback = celery.signature(broker.RUN_TURN_STEP, args=(turn_id, step + 1), immutable=True)
    chord(header)(callback)


def send_step(turn_id: str, step: int) -> None:
    """Send step ``step`` of a turn on its own (its tool calls all have their results)."""
    celery.send_task(broker.RUN_TURN_STEP, args=[turn_id, step])
