"""The reply one model step builds: the parts said so far, its sources, and its tool calls.

A step starts from the stored reply, adds the previous step's tool results (stored with the
step's claim, before anything can fail), then what the model streams (text and the sources it
cites, through the step's one ``Sources``), and ends by storing the calls the model asked for
with the tool as the step offered it, or by handing its parts to the turn's ending.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, update

from webapp.extensions import db
from webapp.limits import setting_value
from webapp.models import Message, ToolCall, Turn
from webapp.turn.parts import Part, text_part, tool_call_part
from webapp.turn.replies import with_results
from webapp.turn.sources import Sources
from webapp.turn.state import turn_state
from workers.offer import Offered, owner_id
from workers.providers import ToolCallRequest

BAD_ARGUMENTS = "The arguments were not valid JSON."


def over_limit(limit: int) -> str:
    """Return the error of a call past the step's ``TOOL_CALLS_PER_STEP``."""
    calls = "tool call runs" if limit == 1 else "tool calls run"
    return (
        f"Only {limit} {calls} per step, so this one was not run. "
        "Call it again in your next step if you still need it."
    )


def over_turn_limit(limit: int) -> str:
    """Return the error of a call past the turn's ``QUOTA_TOOL_CALLS_PER_TURN``."""
    return (
        f"This answer has made {limit} tool calls, the most one answer may make, so this one "
        "was not run. Answer with what you have found."
    )


class StepReply:
    """The reply of one turn as one step builds it (within the step's database session)."""

    def __init__(self, turn: Turn, step: int) -> None:
        """Read the stored reply; from the second step on, add the previous step's results and
        keep them (uncommitted: they are committed with the claim)."""
        self.turn_id = turn.id
        self.step = step
        self.message_id = turn.assistant_message_id
        self.user_id = owner_id(turn)
        self.state = turn_state(turn.id)
        self.parts: list[Part] = list(db.session.get(Message, self.message_id).parts)
        self.sources = Sources(self.state, self.parts)
        if step > 0:
            self.parts = with_results(self.parts, turn.id, step - 1, self.sources)
            self.keep()

    def said(self) -> list[Part]:
        """Return a copy of the parts so far: the reply as the model's prompt replays it."""
        return list(self.parts)

    def add_streamed(self, text: str, sources: list[Part]) -> None:
        """Add what the model's stream said: the sources it cited, then its text."""
        self.parts.extend(sources)
        if text:
            self.parts.append(text_part(text))

    def store_calls(self, offers: list[Offered], calls: list[ToolCallRequest]) -> list[str]:
        """Store the tool calls the model asked for (rows with the tool as offered, and parts)
        and keep the parts; return the call ids in order (uncommitted).

        A call with arguments that are not JSON, past the step's ``TOOL_CALLS_PER_STEP`` or
        past the turn's ``QUOTA_TOOL_CALLS_PER_TURN`` (the user's own values when an admin set
        them) is stored with an error result the model reads, and never runs: one step, or one
        answer, cannot fan out into unbounded work. A call of a tool the step did not offer is
        stored without an owner, and its task answers that it was not offered.
        """
        offered = {o.tool.name: o for o in offers}
        per_step = setting_value(self.user_id, "toolCallsPerStep")
        per_turn = setting_value(self.user_id, "toolCallsPerTurn")
        taken = set(db.session.scalars(db.select(ToolCall.call_id).filter_by(turn_id=self.turn_id)))
        ran = self.calls_run()
        ids = []
        for position, call in enumerate(calls):
            call_id = call.id if call.id and call.id not in taken else f"call_{uuid.uuid4().hex}"
            taken.add(call_id)
            ids.append(call_id)
            offer = offered.get(call.name)
            error = (
                BAD_ARGUMENTS if call.arguments is None
                else over_limit(per_step) if position >= per_step
                else over_turn_limit(per_turn) if ran >= per_turn
                else None
            )  # fmt: skip
            ran += error is None
            db.session.add(
                ToolCall(
                    turn_id=self.turn_id,
                    call_id=call_id,
                    step=self.step,
                    position=position,
                    name=call.name,
                    plugin=offer.plugin if offer else None,
                    source=offer.source if offer else None,
                    untrusted=offer.untrusted if offer else True,
                    input=call.arguments if call.arguments is not None else {},
                    citations=[],
                    **({"outcome": "error", "error": error} if error else {}),
                )
            )
            self.parts.append(tool_call_part(call_id, call.name, call.arguments or {}))
        self.keep()
        return ids

    def calls_run(self) -> int:
        """Return how many tool calls the turn's earlier steps ran (calls refused when they
        were stored never started)."""
        return db.session.scalar(
            db.select(func.count())
            .select_from(ToolCall)
            .filter(
                ToolCall.turn_id == self.turn_id,
                ToolCall.step < self.step,
                ToolCall.started_at.is_not(None),
            )
        )

    def keep(self) -> None:
        """Set the stored reply's parts to everything said so far (committed with what
        follows)."""
        db.session.execute(
            update(Message)
            .where(Message.id == self.message_id)
            .values(parts=self.parts)
            .execution_options(synchronize_session=False)
        )


def stored_call_ids(turn_id: str, step: int) -> list[str]:
    """Return the ids of a step's stored tool calls, in order."""
    return list(
        db.session.scalars(
            db.select(ToolCall.call_id)
            .filter_by(turn_id=turn_id, step=step)
            .order_by(ToolCall.position)
        )
    )
