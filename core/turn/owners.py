"""Who owns a conversation, read from the database once per process."""

from __future__ import annotations

from core.extensions import db
from core.models import Conversation

# Conversations whose owner a process keeps (two ids each: about 200 bytes); past it, it
# starts again.
OWNERS_KEPT = 10_000
_OWNERS: dict[str, str] = {}


def conversation_owner(conversation_id: str) -> str:
    """Return the id of the user who owns a conversation; raise NoResultFound when there is
    none.

    Kept once read: an owner is set when the conversation is made and never changes, and a
    step, each tool call and the turn's ending each asked the database again.
    """
    owner = _OWNERS.get(conversation_id)
    if owner is None:
        owner = db.session.scalars(
            db.select(Conversation.owner_id).filter_by(id=conversation_id)
        ).one()
        remember_owner(conversation_id, owner)
    return owner


def remember_owner(conversation_id: str, owner_id: str) -> None:
    """Keep a conversation's owner read along with something else (a step's claim)."""
    if len(_OWNERS) >= OWNERS_KEPT:
        _OWNERS.clear()
    _OWNERS[conversation_id] = owner_id
