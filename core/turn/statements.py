"""The statements every step and tool call of a turn sends, each built once per process.

Building an ORM statement (its clauses, then the cache key SQLAlchemy looks its compiled form
up by) cost a step about as much CPU as running it: the claim, the reply's row, the usage and
the ending were each built anew on every step. Each is made here once, with its values as
bound parameters, and run with them (``core.turn.lifecycle``, ``core.turn.calls``). Those
whose caller needs no ORM object back (the reply's row, the usage, the ending) are written
against the tables and run on the session's connection (``run``): the ORM's bulk paths made a
new statement and its cache key for every INSERT, and took as long again to set up an UPDATE.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import bindparam, func, insert, literal, or_, select, update
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.orm.attributes import instance_state

from core.extensions import db
from core.models import Conversation, Message, ToolCall, Turn
from core.turn.owners import remember_owner
from core.turn.states import OPEN_STATUSES

_TURNS = Turn.__table__
_MESSAGES = Message.__table__
_CONVERSATIONS = Conversation.__table__
_CALLS = ToolCall.__table__
# Returned by a step's claim beside the turn: the owner a step needs (``claimed_turn``), in the
# claim's statement rather than a SELECT of its own.
_OWNER = (
    select(_CONVERSATIONS.c.owner_id)
    .where(_CONVERSATIONS.c.id == _TURNS.c.conversation_id)
    .scalar_subquery()
    .label("lookout_owner")
)


def run(statement: Any, values: Any) -> Any:
    """Run a statement written against a table on the session's connection, in its
    transaction, after flushing what the session holds (as the ORM's own statements do)."""
    session = db.session()
    session.flush()
    return session.connection().execute(statement, values)


def _now() -> Any:
    # Typed as the columns are, so that each dialect stores the time as it does a column's.
    return bindparam("now", type_=_TURNS.c.heartbeat_at.type)


def _returning_update(
    target: Any, where: list[Any], values: dict[str, Any], returned: tuple[Any, ...]
) -> Any:
    """The UPDATE of the rows of ``target`` matching ``where``, setting ``values``, returning
    ``returned``."""
    return update(target).where(*where).values(**values).returning(*returned)


def claimed_turn(row: Any) -> Turn | None:
    """Return the turn a claim returned (``first_claim``, ``next_claim``: every column), as a
    detached object with every column loaded, as a step keeps it; None for no row. The
    conversation's owner, returned with it, is kept (``core.turn.owners``)."""
    if row is None:
        return None
    columns = dict(row._mapping)
    owner = columns.pop(_OWNER.name)
    turn = detached(Turn, columns)
    if owner is not None:
        remember_owner(turn.conversation_id, owner)
    return turn


def detached(model: Any, columns: Any) -> Any:
    """Return the ``model`` object of a row's ``columns`` (every column, as a statement
    returned them: the models name their attributes as their columns), detached with every
    column loaded. Built here, it costs a tenth of the ORM's loading of a returned row: its
    state is filled as loading fills it, without the constructor's event for each attribute
    set (a quarter of the cost of ``model(**columns)``)."""
    found = model._sa_class_manager.new_instance()
    instance_state(found).dict.update(columns)
    make_transient_to_detached(found)
    return found


@cache
def first_claim() -> Any:
    """Return the claim of a queued turn's first step (``turn``, ``now``), returning its row
    (``claimed_turn``); it makes ``reply`` the turn's reply unless it has one (a
    continuation's), as ``first_reply`` inserted it just before, in the same transaction."""
    return _returning_update(
        _TURNS,
        [_TURNS.c.id == bindparam("turn"), _TURNS.c.status == "queued"],
        {
            "heartbeat_at": _now(),
            "status": "running",
            "started_at": _now(),
            "step": 0,
            "assistant_message_id": func.coalesce(
                _TURNS.c.assistant_message_id, bindparam("reply")
            ),
        },
        (*_TURNS.c, _OWNER),
    )


@cache
def first_reply() -> Any:
    """Return the INSERT of the empty running reply (``reply``, ``now``) of a queued turn
    (``turn``) without one, which the turn's first claim then takes (``first_claim``): the
    reply's row and the turn's link to it in the claim's two statements rather than three.
    It inserts nothing for a turn that has a reply or is not queued; the claim fails then too,
    but for a turn with a reply (a continuation)."""
    turns = _TURNS.c
    made = select(
        bindparam("reply", type_=_MESSAGES.c.id.type),
        turns.conversation_id,
        turns.user_message_id,
        literal("assistant", _MESSAGES.c.role.type),
        literal([], _MESSAGES.c.parts.type),
        literal("running", _MESSAGES.c.status.type),
        bindparam("now", type_=_MESSAGES.c.created_at.type),
    ).where(
        turns.id == bindparam("turn"),
        turns.status == "queued",
        turns.assistant_message_id.is_(None),
    )
    columns = ["id", "conversation_id", "parent_id", "role", "parts", "status", "created_at"]
    return insert(_MESSAGES).from_select(columns, made)


@cache
def next_claim() -> Any:
    """Return the claim of a running turn's step ``new_step`` after ``previous`` (``turn``,
    ``now``), returning its row (``claimed_turn``)."""
    return _returning_update(
        _TURNS,
        [
            _TURNS.c.id == bindparam("turn"),
            _TURNS.c.status == "running",
            _TURNS.c.step == bindparam("previous"),
        ],
        {"heartbeat_at": _now(), "step": bindparam("new_step")},
        (*_TURNS.c, _OWNER),
    )


@cache
def new_reply() -> Any:
    """Return the INSERT of a turn's empty running reply (``new_id``, ``new_conversation``,
    ``new_parent``, ``new_parts``, ``new_created_at``)."""
    return insert(_MESSAGES).values(
        id=bindparam("new_id"),
        conversation_id=bindparam("new_conversation"),
        parent_id=bindparam("new_parent"),
        role="assistant",
        parts=bindparam("new_parts", type_=_MESSAGES.c.parts.type),
        status="running",
        created_at=bindparam("new_created_at", type_=_MESSAGES.c.created_at.type),
    )


@cache
def reply_of_turn() -> Any:
    """Return the UPDATE that sets a turn's (``turn``) reply (``reply``)."""
    return (
        update(_TURNS)
        .where(_TURNS.c.id == bindparam("turn"))
        .values(assistant_message_id=bindparam("reply"))
    )


@cache
def running_usage() -> Any:
    """Return the UPDATE of a running turn's (``turn``) token usage (``new_usage``)."""
    return (
        update(_TURNS)
        .where(_TURNS.c.id == bindparam("turn"), _TURNS.c.status == "running")
        .values(usage=bindparam("new_usage", type_=_TURNS.c.usage.type))
    )


@cache
def ending(with_usage: bool, unless_beaten: bool) -> Any:
    """Return the UPDATE that ends an open turn (``turn``: ``new_status``, ``new_error``,
    ``now``; ``new_usage`` when ``with_usage``; only if nothing beat since ``stale_before``
    when ``unless_beaten``), returning what the ending counts and writes."""
    turns = _TURNS.c
    where = [turns.id == bindparam("turn"), turns.status.in_(OPEN_STATUSES)]
    if unless_beaten:  # a queued turn never beat: a claim would have beaten
        stale = bindparam("stale_before", type_=turns.heartbeat_at.type)
        where.append(or_(turns.heartbeat_at.is_(None), turns.heartbeat_at < stale))
    values: dict[str, Any] = {
        "status": bindparam("new_status"),
        "error": bindparam("new_error"),
        "finished_at": _now(),
        "heartbeat_at": _now(),
    }
    if with_usage:
        values["usage"] = bindparam("new_usage", type_=turns.usage.type)
    return (
        update(_TURNS)
        .where(*where)
        .values(**values)
        .returning(
            turns.assistant_message_id,
            turns.step,
            turns.conversation_id,
            turns.model,
            turns.usage,
        )
    )


@cache
def call_claim() -> Any:
    """Return the claim of a tool call nobody started (``turn``, ``call``; sets ``now`` and
    ``new_task``), returning the call's row (``detached``)."""
    return _returning_update(
        _CALLS,
        [
            _CALLS.c.turn_id == bindparam("turn"),
            _CALLS.c.call_id == bindparam("call"),
            _CALLS.c.started_at.is_(None),
            _CALLS.c.outcome.is_(None),
        ],
        {"started_at": _now(), "task_id": bindparam("new_task")},
        tuple(_CALLS.c),
    )


@cache
def beat() -> Any:
    """Return the beat of a running turn (``turn``, ``now``), returning the turn's row
    (``detached``)."""
    return _returning_update(
        _TURNS,
        [_TURNS.c.id == bindparam("turn"), _TURNS.c.status == "running"],
        {"heartbeat_at": _now()},
        tuple(_TURNS.c),
    )


@cache
def turn_calls() -> Any:
    """Return the SELECT of a turn's (``turn``) stored calls: ``call_id``, ``step``,
    ``started_at``."""
    return select(_CALLS.c.call_id, _CALLS.c.step, _CALLS.c.started_at).where(
        _CALLS.c.turn_id == bindparam("turn")
    )


@cache
def new_calls() -> Any:
    """Return the INSERT of a step's tool calls, run with one row of column values a call
    (every row naming the same columns: those of ``outcome`` and ``error`` too, None for a call
    that runs; ``output`` is left NULL)."""
    return insert(_CALLS)


@cache
def waiting_call() -> Any:
    """Return the SELECT of one call of a turn's (``turn``) step (``step``) that has no
    outcome yet."""
    return (
        select(_CALLS.c.call_id)
        .where(
            _CALLS.c.turn_id == bindparam("turn"),
            _CALLS.c.step == bindparam("step"),
            _CALLS.c.outcome.is_(None),
        )
        .limit(1)
    )


@cache
def call_ending(with_output: bool) -> Any:
    """Return the UPDATE that stores a call's (``turn``, ``call``) outcome (``new_outcome``,
    ``new_error``, ``new_citations``, ``now``; ``new_output`` when ``with_output``: an ``ok``
    call's, the others' left NULL)."""
    calls = _CALLS.c
    values: dict[str, Any] = {
        "outcome": bindparam("new_outcome"),
        "error": bindparam("new_error"),
        "citations": bindparam("new_citations", type_=calls.citations.type),
        "finished_at": bindparam("now", type_=calls.finished_at.type),
    }
    if with_output:
        values["output"] = bindparam("new_output", type_=calls.output.type)
    return (
        update(_CALLS)
        .where(calls.turn_id == bindparam("turn"), calls.call_id == bindparam("call"))
        .values(**values)
    )
