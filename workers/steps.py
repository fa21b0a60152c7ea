"""The model-step task: stream one model call of a turn, then end the turn or fan out its tools.

A step is claimed atomically in the database before it runs, so a task delivered twice runs
once; a step whose worker died (its heartbeat went stale) is taken over and run again. Tool
calls go out as a chord of ``run_tool_call`` tasks whose callback is the next step: no task
ever waits on another task's result.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from celery import chord
from flask import current_app
from sqlalchemy import update
from sqlalchemy.exc import OperationalError

from webapp import broker, turn_events
from webapp.extensions import db
from webapp.models import Message, ToolCall, Turn
from webapp.models.base import aware, utcnow
from webapp.replies import step_shown, with_results
from webapp.turn_parts import source_urls, text_part, tool_call_part
from webapp.turns import finish_turn, turn_state
from workers.celery_app import RETRY_WHILE_DATABASE_DOWN, celery
from workers.prompts import StoredMessage, build_messages
from workers.providers import (
    ProviderError,
    ToolCallRequest,
    ToolSpec,
)
from workers.reaper import fail_dead_turn
from workers.runtime import get_provider
from workers.selection import Offered, TurnFailed
from workers.streaming import add_usage, stream_reply
from workers.toolcalls import run_tool_call
from workers.turn_tools import get_turn_model, is_untrusted_name, offered_tools

BAD_ARGUMENTS = {"outcome": "error", "error": "The arguments were not valid JSON."}
log = logging.getLogger("lookout.turns")


@celery.task(
    name=broker.RUN_TURN_STEP,
    bind=True,
    ignore_result=True,
    **{**RETRY_WHILE_DATABASE_DOWN, "max_retries": None},  # "busy" retries are unbounded too
)
def run_turn_step(self, turn_id: str, step: int) -> str:
    """Run step ``step`` of a turn, once (again when the database did not answer: the claim
    and the step's end are each one transaction)."""
    claim, turn = claim_step(turn_id, step)
    if claim == "busy":
        raise self.retry(countdown=5)
    if claim not in ("claimed", "started"):
        return claim
    try:
        model_step(turn, step, announce=claim == "started")
    except (TurnFailed, ProviderError) as exc:
        end(turn_id, "failed", exc.message, keep=True)
    except OperationalError:
        raise
    except Exception:
        log.exception("turn %s failed in step %s", turn_id, step)
        end(turn_id, "failed", "Something went wrong while answering. Send the message again.")
    return "done"


def claim_step(turn_id: str, step: int) -> tuple[str, Turn | None]:
    """Claim the step: "claimed", "started" (claimed, and its reply made), "busy" (another
    worker runs it), or why it will not run; with the turn.

    A claim and the reply it makes are committed with the step's reads, before the model is
    called.
    """
    now = utcnow()
    if step == 0:
        where = [Turn.status == "queued"]
        values: dict[str, Any] = {"status": "running", "started_at": now, "step": 0}
    else:
        where = [Turn.status == "running", Turn.step == step - 1]
        values = {"step": step}
    turn = db.session.scalars(
        update(Turn)
        .where(Turn.id == turn_id, *where)
        .values(heartbeat_at=now, **values)
        .returning(Turn),
        execution_options={"populate_existing": True},
    ).one_or_none()
    if turn is not None:
        if step == 0:
            start_reply(turn)
            return "started", turn
        return "claimed", turn
    turn = db.session.get(Turn, turn_id)
    if turn is None:
        return "gone", None
    if turn.status == "cancelled" and step > 0:
        return close_cancelled(turn, step), turn
    if turn.status != "running" or turn.step != step:
        return ("ended" if turn.status not in ("queued", "running") else "stale-task"), turn
    return take_over(turn, step), turn


def close_cancelled(turn: Turn, step: int) -> str:
    """Keep the results of the tool calls a cancel interrupted, once, and lower the flag.

    They replace the results the cancel kept for calls still running then."""
    claimed = db.session.execute(
        update(Turn)
        .where(Turn.id == turn.id, Turn.status == "cancelled", Turn.step == step - 1)
        .values(step=step)
        .execution_options(synchronize_session=False)
    ).rowcount
    if claimed and turn.assistant_message_id:
        message = db.session.get(Message, turn.assistant_message_id)
        message.parts = with_results(list(message.parts), turn.id, step - 1)
    db.session.commit()
    turn_state(turn.id).clear_cancel()
    return "ended"


def take_over(turn: Turn, step: int) -> str:
    """Run a step again whose worker stopped beating; "busy" while its heartbeat is fresh.

    Stale means what it means to the reaper (``TURN_STALE_SECONDS``). A step whose stream was
    already shown ends the turn as the reaper would: run again, it would show its text twice.
    """
    stale_before = utcnow() - timedelta(seconds=current_app.config["TURN_STALE_SECONDS"])
    if turn.heartbeat_at is not None and aware(turn.heartbeat_at) > stale_before:
        return "busy"
    taken = db.session.execute(
        update(Turn)
        .where(Turn.id == turn.id, Turn.step == step, Turn.heartbeat_at == turn.heartbeat_at)
        .values(heartbeat_at=utcnow())
        .execution_options(synchronize_session=False)
    ).rowcount
    db.session.commit()
    if not taken:
        return "busy"
    log.warning("turn %s: taking over step %s from a worker that stopped", turn.id, step)
    if step == 0 and turn.assistant_message_id is None:
        start_reply(turn)
        return "started"
    calls = db.session.scalars(db.select(ToolCall).filter_by(turn_id=turn.id, step=step)).all()
    if calls:  # the step had written its tool calls: only their dispatch may be missing
        dispatch(turn.id, step, [c.call_id for c in sorted(calls, key=lambda c: c.position)])
        return "redispatched"
    if step_shown(turn_state(turn.id)):
        fail_dead_turn(turn.id)
        return "ended"
    return "claimed"


def start_reply(turn: Turn) -> None:
    """Add the assistant message the turn writes into (committed with the step's reads)."""
    message = Message(
        conversation_id=turn.conversation_id,
        parent_id=turn.user_message_id,
        role="assistant",
        parts=[],
        status="running",
    )
    db.session.add(message)
    db.session.flush()
    turn.assistant_message_id = message.id


def branch(conversation_id: str, message_id: str) -> list[Message]:
    """Return the messages from the conversation's start down to ``message_id``.

    One query loads the conversation's messages and the path is walked in memory: a query per
    message made every step of a long conversation slower than the last.
    """
    by_id = {
        m.id: m
        for m in db.session.scalars(db.select(Message).filter_by(conversation_id=conversation_id))
    }
    path: list[Message] = []
    current: Message | None = by_id.get(message_id)
    while current is not None and len(path) <= len(by_id):  # a cycle cannot loop forever
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return list(reversed(path))


def model_step(turn: Turn, step: int, announce: bool = False) -> None:
    """Stream one model call and store what it said; end the turn or dispatch its tools.

    The previous step's tool results join the reply with the claim, before anything can fail,
    and whatever the stream said is kept however it ends. ``announce`` publishes
    ``turn.started`` once the claim that made the reply is committed.
    """
    config = current_app.config
    message = db.session.get(Message, turn.assistant_message_id)
    already_cited = source_urls(message.parts)
    said = list(message.parts)
    if step > 0:
        said = with_results(said, turn.id, step - 1, already_cited)
        keep_parts(message.id, said)
    provider_row, model = get_turn_model(turn)
    offers = offered_tools(turn, model)
    last_step = step >= config["TURN_MAX_STEPS"] - 1
    history = [StoredMessage(m.role, m.parts) for m in branch(turn.conversation_id, message.id)]
    history[-1] = StoredMessage("assistant", said)
    messages = build_messages(
        history, is_untrusted_name(offers), config["CONTEXT_TOOL_CHARS"], config["APP_NAME"]
    )
    specs = [] if last_step else [spec_of(o) for o in offers]
    provider = get_provider(provider_row)
    turn_id, message_id, usage = turn.id, message.id, turn.usage
    db.session.commit()  # the claim and the reads: no connection held while the model streams
    if announce:
        turn_events.turn_started(turn_state(turn_id), message_id)
    reply = stream_reply(turn_id, provider, model["name"], messages, specs, already_cited)
    parts = said + reply.sources
    if reply.text:
        parts.append(text_part(reply.text))
    usage = add_usage(usage, reply.usage)
    if reply.cancelled:
        end(turn_id, "cancelled", usage=usage, parts=parts)
    elif reply.error is not None:
        end(turn_id, "failed", reply.error.message, usage=usage, parts=parts)
    elif reply.calls:
        if not record_usage(turn_id, usage):
            db.session.rollback()  # the turn ended meanwhile (a Stop): its ending kept the reply
            return
        call_ids = store_calls(turn_id, step, offers, reply.calls, parts)
        keep_parts(message_id, parts)
        db.session.commit()
        dispatch(turn_id, step, call_ids)
    else:
        end(turn_id, "completed", usage=usage, parts=parts)


def record_usage(turn_id: str, usage: dict | None) -> bool:
    """Set a running turn's token usage (uncommitted); False when the turn has ended."""
    return bool(
        db.session.execute(
            update(Turn)
            .where(Turn.id == turn_id, Turn.status == "running")
            .values(usage=usage)
            .execution_options(synchronize_session=False)
        ).rowcount
    )


def spec_of(offered: Offered) -> ToolSpec:
    """Return the tool as offered to the model, its JSON Schema derived from its input schema."""
    tool = offered.tool
    return ToolSpec(tool.name, tool.description, tool.json_schema())


def store_calls(
    turn_id: str,
    step: int,
    offers: list[Offered],
    calls: list[ToolCallRequest],
    parts: list[dict[str, Any]],
) -> list[str]:
    """Store the tool calls (rows and parts) of a step and return their ids in order.

    Calls past ``TOOL_CALLS_PER_STEP`` are stored with an error result the model reads, and
    never run: one step cannot fan out into unbounded work.
    """
    plugins = {o.tool.name: o.plugin for o in offers}
    limit = current_app.config["TOOL_CALLS_PER_STEP"]
    over_limit = {
        "outcome": "error",
        "error": (
            f"Only {limit} tool calls run per step, so this one was not run. "
            "Call it again in your next step if you still need it."
        ),
    }
    taken = {
        c for (c,) in db.session.execute(db.select(ToolCall.call_id).filter_by(turn_id=turn_id))
    }
    ids = []
    for position, call in enumerate(calls):
        call_id = call.id if call.id and call.id not in taken else f"call_{uuid.uuid4().hex}"
        taken.add(call_id)
        ids.append(call_id)
        db.session.add(
            ToolCall(
                turn_id=turn_id,
                call_id=call_id,
                step=step,
                position=position,
                name=call.name,
                plugin=plugins.get(call.name),
                input=call.arguments if call.arguments is not None else {},
                citations=[],
                **(
                    BAD_ARGUMENTS
                    if call.arguments is None
                    else over_limit
                    if position >= limit
                    else {}
                ),
            )
        )
        parts.append(tool_call_part(call_id, call.name, call.arguments or {}))
    return ids


def keep_parts(message_id: str, parts: list[dict[str, Any]]) -> None:
    """Set the reply's parts to everything said so far (committed with what follows)."""
    db.session.execute(
        update(Message)
        .where(Message.id == message_id)
        .values(parts=parts)
        .execution_options(synchronize_session=False)
    )


def dispatch(turn_id: str, step: int, call_ids: list[str]) -> None:
    """Send the step's tool calls as a chord whose callback runs the next step."""
    state = turn_state(turn_id)
    header = []
    for call_id in call_ids:
        task_id = uuid.uuid4().hex
        state.remember_task(task_id)
        header.append(run_tool_call.si(turn_id, call_id).set(task_id=task_id))
    callback = run_turn_step.si(turn_id, step + 1)
    chord(header)(callback)


def end(
    turn_id: str,
    status: str,
    error: str | None = None,
    usage: dict | None = None,
    keep: bool = False,
    parts: list[dict[str, Any]] | None = None,
) -> None:
    """End the turn (if nothing ended it already) and forget its per-process state.

    ``parts`` are the reply's, when the step knows them; without them the ending keeps what
    the user saw (see ``finish_turn``). ``keep`` commits what the session holds with the
    ending; without it (and without ``parts``), whatever a failed step left unsaved is
    dropped first.
    """
    if not keep and parts is None:
        db.session.rollback()
    finish_turn(turn_id, status, error, usage, parts)
    if status == "cancelled":
        turn_state(turn_id).clear_cancel()
