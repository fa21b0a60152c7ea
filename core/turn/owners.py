"""Who owns a conversation, read from the database once per process."""

from __future__ import annotations

import functools

from core.extensions import db
from core.models import Conversation

# Conversations whose owner a process keeps (two ids each: about 200 bytes).
OWNERS_KEPT = 10_000


@functools.lru_cache(maxsize=OWNERS_KEPT)
def conversation_owner(conversation_id: str) -> str:
    """Return the id of the user who owns a conversation; raise NoResultFound when there is
    none.

    Kept once read: an owner is set when the conversation is made and never changes, and a
    step, each tool call and the turn's ending each asked the database again.
    """
    return db.session.scalars(db.select(Conversation.owner_id).filter_by(id=conversation_id)).one()
