"""A turn's lifecycle: every write of its status (and of its heartbeat), in the order they happen.

    queued     ``start_turn``       the user's message and the turn stored, the first step queued
    running    ``claim_step``       a worker claims step 0 (and makes the reply), or step n
               ``take_over``        a step whose worker stopped beating is claimed again
    completed  ``finish_turn``      the one way a turn ends, whoever ends it: a worker
    failed                          (completed, failed), the reaper (failed), the web side
    cancelled  ``cancel_turn``      (cancelled; a queue that could not be reached: failed)

Each change is one conditional UPDATE, so two processes racing for the same change see one win.
The lifecycle owns the cancel flag: ``finish_turn`` raises it when the turn ends cancelled, in
the same Redis round trip as the end, and nothing lowers it (it expires with the event stream),
so a later ending can never hide the cancel from work of the turn still running.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import redis
from flask import current_app
from sqlalchemy import inspect, update
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value

from core import metrics, quotas, turn_starts
from core.broker import QueueError
from core.extensions import db
from core.models import Conversation, Message, Turn
from core.models.base import aware, new_id, utcnow
from core.models.usage import add_usage
from core.turn import events, start_statements, statements
from core.turn.endings import noted_error, prepare_ending
from core.turn.owners import conversation_owner
from core.turn.replies import (
    Records,
    StepOutput,
    read_records,
    record_step,
    store_reply,
    write_reply,
)
from core.turn.state import turn_state
from core.turn.states import OPEN_STATUSES, StepClaim, TurnStatus

QUEUE_DOWN = "The task queue could not be reached. Send it again soon."
LIMITS_DOWN = (
    "Lookout could not check your limits because Redis could not be reached. Send it again in "
    "a moment."
)
log = logging.getLogger("lookout.turns")


class TurnRefused(Exception):
    """The turn cannot start; ``message`` is the sentence the user reads, ``status`` the HTTP
    status the API answers with, ``fields`` per-field messages, ``retry_after`` the seconds
    after which trying again may pass (over a limit)."""

    def __init__(
        self,
        message: str,
        status: int,
        fields: dict[str, list[str]] | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        self.fields = fields
        self.retry_after = retry_after


def open_turns(conversation_id: str):
    """Return the select of a conversation's queued or running turns."""
    return db.select(Turn).filter(
        Turn.conversation_id == conversation_id, Turn.status.in_(OPEN_STATUSES)
    )


def start_turn(
    conversation: Conversation,
    user_message: Message,
    model: str,
    generation: dict[str, Any],
    roles: list[str],
    send: Callable[[str], str],
    title: str | None = None,
) -> Turn:
    """Store the user's message (new or answered again) and a queued turn (with the
    conversation's new ``title``, if given), commit, and queue the first step with ``send``
    (the turn's id → the task's id; ``broker.QueueError`` when the queue cannot be reached:
    the web side's ``webapp.queue.send_first_step``); raise
    TurnRefused while the conversation has an open turn (409), when the user is over a turn
    limit (429), or (after failing the stored turn) when the queue cannot be reached (503).

    The checks and the store run under the user's start lock (``turn_starts.starting``): two
    requests at the same instant see each other's turn, so neither limit can be passed.
    """
    return begin_turn(
        conversation,
        lambda: store_turn(conversation, user_message, model, generation, roles, title),
        send,
    )


def begin_turn(
    conversation: Conversation, store: Callable[[], Turn], send: Callable[[str], str]
) -> Turn:
    """Run ``store`` (which stores and commits a queued turn) under the owner's start lock once
    the conversation has no open turn and the owner is within their turn limits, then queue
    the turn's first step with ``send``; raise TurnRefused as ``start_turn`` says.

    The step is sent before the lock is let go, so that the release marks it queued in its own
    round trip (``TurnStart.queueing``) where the publish signal made one more."""
    sent = False
    try:
        with turn_starts.starting(conversation.owner_id) as start:
            turn_starts.check_turn(start, conversation.id)
            turn = store()
            with start.queueing():
                enqueue_first_step(turn, send)
            sent = True
    except quotas.TurnRunning as running:
        raise TurnRefused(
            "A turn is still running in this conversation. Wait for it, or cancel it first.",
            409,
        ) from running
    except quotas.QuotaExceeded as over:
        raise TurnRefused(over.message, 429, retry_after=over.retry_after) from over
    except redis.RedisError as exc:
        if sent:  # the step is queued; only its marker is lost (the reaper sends it again)
            log.warning("turn %s: its start lock could not be let go: %s", turn.id, exc)
            return turn
        raise TurnRefused(LIMITS_DOWN, 503) from exc
    return turn


def store_turn(
    conversation: Conversation,
    user_message: Message,
    model: str,
    generation: dict[str, Any],
    roles: list[str],
    title: str | None = None,
) -> Turn:
    """Store the user's message and a queued turn (and the conversation's new ``title``), and
    commit."""
    if inspect(user_message).transient:  # new, and in no session: one INSERT built once
        store_message(user_message)
    else:  # answered again, or added to the session with the conversation's earlier messages
        db.session.add(user_message)
        db.session.flush()
    return store_queued_turn(conversation, user_message.id, model, generation, roles, title=title)


def store_message(message: Message) -> None:
    """Insert a new message (uncommitted), leaving it detached with its id and creation time."""
    message.id, message.created_at = message.id or new_id(), message.created_at or utcnow()
    statements.run(
        start_statements.new_message(),
        {
            "new_id": message.id,
            "new_conversation": message.conversation_id,
            "new_parent": message.parent_id,
            "new_role": message.role,
            "new_parts": message.parts if message.parts is not None else [],
            "new_status": message.status or "completed",
            "new_created_at": message.created_at,
        },
    )
    make_transient_to_detached(message)


def store_queued_turn(
    conversation: Conversation,
    user_message_id: str,
    model: str,
    generation: dict[str, Any],
    roles: list[str],
    assistant_message_id: str | None = None,
    title: str | None = None,
) -> Turn:
    """Store a queued turn answering ``user_message_id`` (writing on in
    ``assistant_message_id``'s reply when given: a continuation), touch the conversation (and
    set its ``title``, when given), and commit."""
    # Statements built once rather than the unit of work's flush, which built, sorted and ran
    # them anew each time. The turn is kept, detached, past the commit: its id is sent to the
    # queue and answered at once, and what is answered (id, status "queued", who it answers)
    # is what was just written.
    turn = Turn(
        id=new_id(),
        conversation_id=conversation.id,
        user_message_id=user_message_id,
        assistant_message_id=assistant_message_id,
        model=model,
        generation=generation,
        roles=list(roles),
        status="queued",
        error=None,
        usage=None,
        step=0,
        heartbeat_at=None,
        created_at=utcnow(),
        started_at=None,
        finished_at=None,
    )
    values = {
        "new_id": turn.id,
        "new_conversation": turn.conversation_id,
        "new_question": user_message_id,
        "new_reply": assistant_message_id,
        "new_model": model,
        "new_generation": generation,
        "new_roles": turn.roles,
        "new_created_at": turn.created_at,
    }
    statements.run(start_statements.new_turn(), values)
    statements.run(
        start_statements.touched_conversation(title is not None),
        {"conversation": conversation.id, "new_title": title},
    )
    if title is not None:
        set_committed_value(conversation, "title", title)
    make_transient_to_detached(turn)
    commit_loaded()
    return turn


def commit_loaded() -> None:
    """Commit, leaving what the session loaded as it is rather than expired: for a caller
    that reads afterwards only what it wrote itself or what no other process changes, for
    which the expiry cost a SELECT of each object read again."""
    session = db.session()
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = True


def enqueue_first_step(turn: Turn, send: Callable[[str], str]) -> Turn:
    """Queue a stored turn's first step with ``send``; fail the turn and raise TurnRefused
    (503) when the queue cannot be reached."""
    try:
        send(turn.id)
    except QueueError as exc:
        finish_turn(turn.id, "failed", QUEUE_DOWN)
        raise TurnRefused(
            "Your message was saved, but no worker could be reached to answer it. "
            "Try again in a moment.",
            503,
        ) from exc
    return turn  # its task's id was recorded as it was published (``core.turn.queued``)


def claim_step(turn_id: str, step: int) -> tuple[StepClaim, Turn | None, bool]:
    """Claim a step for this worker: "claimed", "started" (claimed, and its reply made),
    "taken" (claimed from a worker that stopped beating), "busy" (another worker runs it), or
    why it will not run ("gone", "ended", "stale-task"); with the turn, and whether the claim
    made the turn's reply (so nothing is stored to derive it from, and no earlier turn wrote
    it: the turn is no continuation).

    The claim and the reply it makes stay in the session's transaction, committed by the
    caller with the step's reads, before the model is called.
    """
    # The claim's returned row is the turn, built detached (``claimed_turn``): nothing else in
    # the session needs the ORM's evaluation of the WHERE against loaded objects, which cost a
    # fifth of the claim, nor its loading of the row.
    # A first step's claim makes the turn's reply: its row inserted, then taken by the claim's
    # UPDATE (the message first: the turn's link to it is checked as it is written).
    if step == 0:
        reply = new_id()
        claim, values = statements.first_claim(), {"turn": turn_id, "now": utcnow(), "reply": reply}
        statements.run(statements.first_reply(), values)
    else:
        claim = statements.next_claim()
        values = {"turn": turn_id, "now": utcnow(), "previous": step - 1, "new_step": step}
    turn = statements.claimed_turn(statements.run(claim, values).first())
    if turn is not None:
        if step == 0:
            made = turn.assistant_message_id == reply
            return "started", turn, made or start_reply(turn)
        return "claimed", turn, False
    if step == 0:  # a claim that lost a race on PostgreSQL may have inserted its reply
        db.session.rollback()
    turn = db.session.get(Turn, turn_id)
    if turn is None:
        return "gone", None, False
    if turn.status == "cancelled" and step > 0:
        close_cancelled(turn, step)
        return "ended", turn, False
    if turn.status != "running" or turn.step != step:
        return ("ended" if turn.status not in OPEN_STATUSES else "stale-task"), turn, False
    claim = take_over(turn, step)
    return claim, turn, claim == "started"


def close_cancelled(turn: Turn, step: int) -> None:
    """Derive the reply again, once, now that the tool calls a cancel interrupted have their
    results (the cancel showed them unfinished)."""
    claimed = db.session.execute(
        update(Turn)
        .where(Turn.id == turn.id, Turn.status == "cancelled", Turn.step == step - 1)
        .values(step=step)
        .execution_options(synchronize_session=False)
    ).rowcount
    if claimed:
        write_reply(turn.id)
    db.session.commit()


def take_over(turn: Turn, step: int) -> StepClaim:
    """Claim again a step whose worker stopped beating: "taken", or "started" when it had not
    made the reply yet; "busy" while its heartbeat is fresh or another worker took it. Stale
    means what it means to the reaper (``TURN_STALE_SECONDS``)."""
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
    return "taken"


def start_reply(turn: Turn) -> bool:
    """Add the assistant message the turn writes into, or mark the reply a continuation writes
    on as being written again (committed with the step's reads); return whether it added it."""
    if turn.assistant_message_id is not None:  # a continuation: its reply exists
        db.session.execute(
            update(Message)
            .where(Message.id == turn.assistant_message_id)
            .values(status="running")
            .execution_options(synchronize_session=False)
        )
        return False
    # Two statements rather than the unit of work's flush of a new object and a changed turn,
    # which cost as much CPU as the claim itself.
    message_id = new_id()
    statements.run(
        statements.new_reply(),
        {
            "new_id": message_id,
            "new_conversation": turn.conversation_id,
            "new_parent": turn.user_message_id,
            "new_parts": [],
            "new_created_at": utcnow(),
        },
    )
    statements.run(statements.reply_of_turn(), {"turn": turn.id, "reply": message_id})
    set_committed_value(turn, "assistant_message_id", message_id)
    return True


def record_heartbeats(turn_ids: list[str]) -> None:
    """Record that work on these running turns is alive (one statement for all; committed):
    the reaper fails a running turn whose heartbeat is older than ``TURN_STALE_SECONDS``."""
    db.session.execute(
        update(Turn)
        .where(Turn.id.in_(turn_ids), Turn.status == "running")
        .values(heartbeat_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def record_usage(turn_id: str, usage: dict | None) -> bool:
    """Set a running turn's token usage (uncommitted); False when the turn has ended."""
    return bool(
        statements.run(statements.running_usage(), {"turn": turn_id, "new_usage": usage}).rowcount
    )


def finish_turn(
    turn_id: str,
    status: TurnStatus,
    error: str | None = None,
    usage: dict | None = None,
    output: StepOutput | None = None,
    stale_before: datetime | None = None,
    records: Records | None = None,
) -> bool:
    """End an open turn with ``status``; return False when it had already ended (or, given
    ``stale_before``, when something beat for it since: the reaper's ending, which work
    claimed meanwhile must win).

    ``output`` is what the step ending the turn said, stored with the ending; without it the
    reply keeps what the page showed of the last step (``shown_output``), stored as that step's
    output unless the step stored its calls. The reply is derived (and its citations checked)
    before anything is written, from one read each of the turn, its step records and its
    calls, so the check's CPU is spent while no write lock is held; the write reuses it. An
    ending without ``output`` (a Stop, the reaper, a failure) reads the records again inside
    the write, for a step may have stored its calls or a call finished meanwhile: only a text
    or a source that changed is checked again. A failure that keeps anything says so in its
    error. Nothing is written when someone else ended the turn first. Commits, with whatever
    the session holds besides. ``usage`` replaces the turn's token usage. A turn ended
    ``cancelled`` raises its cancel flag. ``records``: the reply's records as the step ending
    the turn with ``output`` read them while it ran (nothing else writes them meanwhile: a
    Stop ends the turn, and this ending then writes nothing), so they are not read again.
    """
    if records is None or output is None:
        records = read_records(turn_id)
    ending = None
    if records is not None and records.turn.status in OPEN_STATUSES:
        ending = prepare_ending(records, status, output)
    noted = noted_error(status, error, ending.parts if ending else None)
    values: dict[str, Any] = {
        "turn": turn_id,
        "new_status": status,
        "new_error": noted,
        "now": utcnow(),
    }
    if usage is not None:
        values["new_usage"] = usage
    if stale_before is not None:
        values["stale_before"] = stale_before
    ended = statements.run(
        statements.ending(usage is not None, stale_before is not None), values
    ).first()
    if ended is not None:
        count_turn(ended, status)
    if ended is not None and ended.assistant_message_id:
        if ending is None or output is None or ending.step != ended.step:
            ending = prepare_ending(read_records(turn_id), status, output)
        if ending.output is not None:
            record_step(turn_id, ending.step, ending.output)
        store_reply(ended.assistant_message_id, ending.parts, ending.grounding, status)
        if noted_error(status, error, ending.parts) != noted:
            noted = noted_error(status, error, ending.parts)
            db.session.execute(
                update(Turn)
                .where(Turn.id == turn_id)
                .values(error=noted)
                .execution_options(synchronize_session=False)
            )
    db.session.commit()
    if ended is None:
        return False
    metrics.turn_finished(status)
    state = turn_state(turn_id)
    state.end(
        current_app.config["EVENT_STREAM_TTL_SECONDS"],
        cancelled=status == "cancelled",
        event=events.ending(status, noted),
    )
    log.info("turn=%s status=%s", turn_id, status)
    return True


def count_turn(ended: Any, status: str) -> None:
    """Count the ended turn and its model's tokens in its owner's usage, in the ending's
    transaction: a turn ends once, so it is counted once."""
    owner = conversation_owner(ended.conversation_id)
    tokens = ended.usage or {}
    add_usage(
        owner,
        [
            ("turns", status, 1),
            ("inputTokens", ended.model, tokens.get("inputTokens") or 0),
            ("outputTokens", ended.model, tokens.get("outputTokens") or 0),
            ("estimatedTokens", ended.model, tokens.get("estimatedTokens") or 0),
            ("reasoningTokens", ended.model, tokens.get("reasoningTokens") or 0),
        ],
    )


def cancel_turn(turn: Turn, revoke: Callable[[str], None]) -> bool:
    """Cancel an open turn at once: end it, keeping what its reply showed (its running work
    sees the flag the ending raised), then revoke its queued work with ``revoke`` (a task's
    id; the web side's ``webapp.queue.revoke``); False if it had already ended.

    Ending first means a step that notices the flag cannot end the turn itself in between and
    turn the user's Stop into a conflict.
    """
    state = turn_state(turn.id)
    task_ids = state.task_ids()  # the ending forgets them
    if not finish_turn(turn.id, "cancelled"):
        return False
    for task_id in task_ids:
        revoke(task_id)
    return True
