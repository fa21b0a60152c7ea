"""The statements of the web's start of a turn (``lifecycle.store_turn``, ``store_queued_turn``):
the user's message, the queued turn and the conversation's touch, each built once per process,
where the unit of work's flush built and ordered them anew on every POST. Run with
``core.turn.statements.run``, on the session's connection and in its transaction.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import bindparam, func, insert, update

from core.models import Conversation, Message, Turn

_TURNS = Turn.__table__
_MESSAGES = Message.__table__
_CONVERSATIONS = Conversation.__table__


def _insert_bound(table: Any, bound: dict[str, str], **fixed: Any) -> Any:
    """The INSERT into ``table`` of each column of ``bound`` from the parameter it names
    (typed as the column is), and of the ``fixed`` values."""
    values = {column: bindparam(name, type_=table.c[column].type) for column, name in bound.items()}
    return insert(table).values(**values, **fixed)


@cache
def new_message() -> Any:
    """Return the INSERT of a message (``new_id``, ``new_conversation``, ``new_parent``,
    ``new_role``, ``new_parts``, ``new_status``, ``new_created_at``)."""
    bound = {
        "id": "new_id",
        "conversation_id": "new_conversation",
        "parent_id": "new_parent",
        "role": "new_role",
        "parts": "new_parts",
        "status": "new_status",
        "created_at": "new_created_at",
    }
    return _insert_bound(_MESSAGES, bound)


@cache
def new_turn() -> Any:
    """Return the INSERT of a queued turn (``new_id``, ``new_conversation``, ``new_question``,
    ``new_reply``, ``new_model``, ``new_generation``, ``new_roles``, ``new_created_at``)."""
    bound = {
        "id": "new_id",
        "conversation_id": "new_conversation",
        "user_message_id": "new_question",
        "assistant_message_id": "new_reply",
        "model": "new_model",
        "generation": "new_generation",
        "roles": "new_roles",
        "created_at": "new_created_at",
    }
    return _insert_bound(_TURNS, bound, status="queued", step=0)


@cache
def touched_conversation(with_title: bool) -> Any:
    """Return the UPDATE of a conversation's (``conversation``) ``updated_at`` to the database's
    now, and its title (``new_title``) when ``with_title``."""
    values: dict[str, Any] = {"updated_at": func.now()}
    if with_title:
        values["title"] = bindparam("new_title")
    return (
        update(_CONVERSATIONS)
        .where(_CONVERSATIONS.c.id == bindparam("conversation"))
        .values(**values)
    )
