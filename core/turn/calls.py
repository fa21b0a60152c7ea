"""A tool call's whole life in the database: stored (within the step's and the turn's limits),
claimed by the task that runs it, finished with its outcome.

    store_calls   a step stores the calls the model asked for, with its own output, at once
    claim_call    the first delivery of a call's task claims it; only that task runs it again
                  (``take_call``: with the rows it read)
    finish_call   the raw output or the error, stored once, and what the call spent counted

A call's task can be delivered more than once: the reaper sends again the calls of a turn that
waits in the queue (a restarted Redis may have lost them), and a step taken over sends its
calls again. Each delivery claims the call with one conditional UPDATE, so one of them runs
the tool; the claim stores the task's id, so that task's own retries (the database did not
answer) and its redelivery by Redis (its worker died) run the call again, and nothing else does.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from core.extensions import db
from core.limits import setting_values
from core.models import ToolCall, Turn
from core.models.base import utcnow
from core.models.usage import add_usage
from core.turn import statements
from core.turn.replies import Records, StepOutput, record_step, write_records, write_reply
from core.turn.states import FAILED_OUTCOMES, CallClaim, CallOutcome

BAD_ARGUMENTS = "The arguments were not valid JSON."


class Requested(Protocol):
    """A tool call the model asked for (``workers.providers.ToolCallRequest``)."""

    id: str
    name: str
    arguments: dict[str, Any] | None


class OfferedTool(Protocol):
    """The tool as the step offered it (``workers.offer.Offered``)."""

    plugin: str | None
    source: str | None
    untrusted: bool
    grounding: str | None


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


def store_calls(
    turn_id: str,
    step: int,
    user_id: str,
    output: StepOutput,
    offered: Mapping[str, OfferedTool],
    requested: Sequence[Requested],
    records: Records | None = None,
) -> list[str]:
    """Store the step's output and the tool calls the model asked for (each with the tool as
    ``offered`` by name), and write the reply; return the call ids in order (uncommitted).
    ``records``: the reply's records as the step read them, before this step stored anything
    (the reply is then derived from them and what is stored here, without reading them again).

    A call with arguments that are not JSON, past the step's ``TOOL_CALLS_PER_STEP`` or past
    the turn's ``QUOTA_TOOL_CALLS_PER_TURN`` (the user's own values when an admin set them) is
    stored with an error result the model reads, and never runs: one step, or one answer,
    cannot fan out into unbounded work. A call of a tool the step did not offer is stored
    without an owner, and its task answers that it was not offered.
    """
    limits = setting_values(user_id, ("toolCallsPerStep", "toolCallsPerTurn"))
    per_step, per_turn = limits["toolCallsPerStep"], limits["toolCallsPerTurn"]
    # One read of the turn's calls for both uses: their ids are taken, and those of earlier
    # steps that started count against the turn's limit (refused ones never started).
    stored = statements.run(statements.turn_calls(), {"turn": turn_id}).all()
    taken = {row.call_id for row in stored}
    ran = sum(1 for row in stored if row.step < step and row.started_at is not None)
    ids = []
    rows = []
    record_step(turn_id, step, output)
    for position, call in enumerate(requested):
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
        rows.append(
            {
                "turn_id": turn_id,
                "call_id": call_id,
                "step": step,
                "position": position,
                "name": call.name,
                "plugin": offer.plugin if offer else None,
                "source": offer.source if offer else None,
                "untrusted": offer.untrusted if offer else True,
                "grounding": offer.grounding if offer else None,
                "input": call.arguments or {},
                "citations": [],
                "outcome": "error" if error else None,
                "error": error,
            }
        )
    # One INSERT for the step's calls, written against the table: the unit of work's flush of
    # new objects cost as much as the rest of the step's writes.
    statements.run(statements.new_calls(), rows)
    if records is None:
        write_reply(turn_id)
    else:  # the reply derives from the calls as stored: objects kept out of the session
        write_records(records.with_step(output, [ToolCall(**row) for row in rows]))
    return ids


def stored_call_ids(turn_id: str, step: int) -> list[str]:
    """Return the ids of a step's stored tool calls, in order."""
    return list(
        db.session.scalars(
            db.select(ToolCall.call_id)
            .filter_by(turn_id=turn_id, step=step)
            .order_by(ToolCall.position)
        )
    )


def claim_call(turn_id: str, call_id: str, task_id: str) -> CallClaim:
    """Claim a tool call for the task ``task_id``: "claimed", "again" (this task claimed it
    before), "busy" (another task runs it), "done" (it has its outcome) or "gone" (as
    ``take_call``, without the rows)."""
    return take_call(turn_id, call_id, task_id)[0]


def take_call(
    turn_id: str, call_id: str, task_id: str
) -> tuple[CallClaim, ToolCall | None, Turn | None]:
    """Claim a tool call for the task ``task_id`` (see ``claim_call``); with the call as the
    claim read it, and the turn as its beat returned it (None when the turn is not running).

    A claim also beats for the turn: from here on the call's work is held by this worker.
    Uncommitted: the caller commits it with the call's reads, before the tool runs. A claim's
    call and turn come detached with every column loaded, so the caller holds the two
    returned here rather than reading them again.
    """
    now = utcnow()
    # The claimed row is the call, and the beat's the turn, built detached (``detached``):
    # the ORM's loading of a returned row cost as much as the claim.
    claimed = statements.run(
        statements.call_claim(), {"turn": turn_id, "call": call_id, "now": now, "new_task": task_id}
    ).first()
    if claimed is not None:
        call = statements.detached(ToolCall, claimed._mapping)
    else:
        call = db.session.get(ToolCall, (turn_id, call_id), populate_existing=True)
        if call is None:
            return "gone", None, None
        if call.outcome is not None:
            return "done", call, None
        if call.task_id != task_id:
            return "busy", call, None
        call.started_at = now
    beaten = statements.run(statements.beat(), {"turn": turn_id, "now": now}).first()
    turn = None if beaten is None else statements.detached(Turn, beaten._mapping)
    return ("claimed" if claimed is not None else "again"), call, turn


def finish_call(
    call: ToolCall,
    outcome: CallOutcome,
    output: Any,
    error: str | None,
    spent: Sequence[tuple[str, str, int]],
    user_id: str,
    tool_label: str,
    citations: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Store a call's raw output (for ``ok``) or its error, and the sources its result cites
    (``citations``, ``{url, title}``), once, and count what it spent in the user's usage in
    the same transaction (a failed call counts as a tool error under ``tool_label``);
    commits."""
    # One UPDATE by the call's key, written against the table: the unit of work's flush of
    # the changed object cost as much as the UPDATE and the usage's upsert together.
    with_output = outcome == "ok" and output is not None
    values = {
        "turn": call.turn_id,
        "call": call.call_id,
        "new_outcome": outcome,
        "new_error": error,
        "new_citations": list(citations),
        "now": utcnow(),
    }
    if with_output:
        values["new_output"] = output
    statements.run(statements.call_ending(with_output), values)
    failed = [("toolErrors", tool_label, 1)] if outcome in FAILED_OUTCOMES else []
    add_usage(user_id, [*spent, *failed])
    db.session.commit()
