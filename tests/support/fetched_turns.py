"""A turn as its first step and its one ``web_fetch`` call leave it, for measuring and testing
the step after a tool call."""

from __future__ import annotations

from typing import Any

from core.extensions import db
from core.models import ToolCall
from core.models.base import utcnow
from core.turn import queued
from core.turn.lifecycle import claim_step
from core.turn.replies import StepOutput, record_step, write_reply


def store_fetched_call(turn_id: str, output: dict[str, Any], title: str | None) -> None:
    """Claim a queued turn's first step and store what it and its ``web_fetch`` call left: an
    empty step record, the call with ``output`` citing ``output["url"]`` (``title``), and the
    reply derived from them; commit, and mark step 1 queued as the last call's dispatch does."""
    claim_step(turn_id, 0)
    record_step(turn_id, 0, StepOutput(""))
    now = utcnow()
    db.session.add(
        ToolCall(
            turn_id=turn_id,
            call_id="call_1",
            step=0,
            position=0,
            name="web_fetch",
            plugin="tools.web_fetch",
            untrusted=True,
            grounding="read",
            input={"url": output["url"]},
            output=output,
            outcome="ok",
            error=None,
            citations=[{"url": output["url"], "title": title}],
            task_id=f"task-{turn_id}",
            started_at=now,
            finished_at=now,
        )  # fmt: skip
    )
    db.session.flush()
    write_reply(turn_id)
    db.session.commit()
    queued.mark_queued(turn_id, queued.step_work(1), f"step-{turn_id}")
