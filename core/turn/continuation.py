"""Continuing a stopped or cut-off reply: a new turn that writes on at the end of the same reply.

A continuation is a turn of its own (queued, running, how it ended; its usage counted and its
limits checked like any turn's, so it can be stopped, and continued again) whose assistant
message is the reply it continues, set when it is stored. That is all that marks it:

- its first step reopens the reply rather than making one (``lifecycle.start_reply``);
- the model gets the conversation up to the reply, the reply as the assistant's last message,
  then ``workers.prompts.CONTINUE_INSTRUCTION``, which is never stored or shown, and no tools;
- the reply is derived from every turn that wrote into it, oldest first, the continuation's
  text going on in the last text part (``replies.reply_parts``).

Only the newest reply of a conversation can be continued, and only one that ended stopped or
failed with something written: a complete reply is complete, and an empty one is asked again
(Try again), not continued.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.extensions import db
from core.models import Conversation, Message, Turn
from core.models.providers import find_model
from core.turn.lifecycle import TurnRefused, begin_turn, store_queued_turn
from core.turn.replies import earlier_turn_ids
from core.turn.states import OPEN_STATUSES

# The reply statuses a continuation may start from: a Stop, or a failure (a cut-off answer).
CONTINUABLE = ("cancelled", "failed")


def continues(turn: Turn) -> bool:
    """Whether the turn continues a reply an earlier turn wrote (see the module's docstring)."""
    return turn.assistant_message_id is not None and bool(earlier_turn_ids(turn.id))


def last_turn_of(message: Message) -> Turn | None:
    """Return the newest turn that wrote into the reply, None for a reply no turn wrote."""
    return db.session.scalar(
        db.select(Turn)
        .filter_by(assistant_message_id=message.id)
        .order_by(Turn.created_at.desc())
        .limit(1)
    )


def check_continuable(conversation: Conversation, message: Message) -> Turn:
    """Return the turn that last wrote the reply; raise TurnRefused (409) when the reply cannot
    be continued, saying what to do instead."""
    newest = db.session.scalar(
        db.select(Message.id)
        .filter_by(conversation_id=conversation.id, role="assistant")
        .order_by(Message.created_at.desc())
        .limit(1)
    )
    if newest != message.id:
        raise TurnRefused(
            "Only the newest reply of a conversation can be continued. Ask again from this one "
            "with Try again, or write a new message.",
            409,
        )
    last = last_turn_of(message)
    if message.status in OPEN_STATUSES:
        raise TurnRefused("This reply is still being written. Wait for it, or stop it first.", 409)
    if last is None or message.status not in CONTINUABLE:
        raise TurnRefused(
            "This reply is complete, so there is nothing to continue. Write a new message to "
            "ask for more.",
            409,
        )
    if not message.parts:
        raise TurnRefused(
            "Nothing of this reply was written, so there is nothing to continue. Ask again "
            "with Try again.",
            409,
        )
    return last


def continue_reply(
    conversation: Conversation,
    message: Message,
    model: str | None,
    roles: list[str],
    send: Callable[[str], str],
) -> Turn:
    """Store a turn that continues ``message`` with ``model`` (the last turn's when None) and
    the last turn's generation options, and queue it with ``send`` (as ``start_turn`` does);
    raise TurnRefused as ``check_continuable`` and ``lifecycle.begin_turn`` say."""
    last = check_continuable(conversation, message)
    model = model or last.model
    if find_model(model) is None:
        raise TurnRefused(
            f"The model {model} is not installed: an administrator may have removed it. "
            "Pick another model from the list.",
            400,
            {"model": ["Not installed. Pick another model from the list."]},
        )
    generation: dict[str, Any] = dict(last.generation or {})

    def store() -> Turn:
        return store_queued_turn(
            conversation, last.user_message_id, model, generation, roles, message.id
        )

    return begin_turn(conversation, store, send)
