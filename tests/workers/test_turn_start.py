"""Starting a turn when the queue cannot be reached: the user's message is kept, the turn is
stored failed with a sentence saying what to do, and the request is refused with 503."""

from __future__ import annotations

import pytest

from core.broker import QueueError
from core.extensions import db
from core.models import Message, Turn
from core.turn.lifecycle import QUEUE_DOWN, TurnRefused, start_turn
from core.turn.parts import text_part
from tests.support.turns import new_question


def unreachable(turn_id: str) -> str:
    raise QueueError("The task queue (Redis) could not be reached: refused")


def test_a_message_sent_while_the_queue_is_down_is_kept_and_its_turn_failed(app, make_user):
    """The turn is kept loaded past its commit (it is not read back), so the failure must
    still be stored on the row, not only on the object."""
    user = make_user("quinn")
    with app.app_context():
        conversation, asked = new_question(user.id, "Hi", "")
        with pytest.raises(TurnRefused) as refused:
            start_turn(conversation, asked, "p/m", {}, [], send=unreachable)
        conversation_id = conversation.id
        db.session.remove()

        assert refused.value.status == 503
        assert "Your message was saved" in refused.value.message
        turn = db.session.scalars(db.select(Turn).filter_by(conversation_id=conversation_id)).one()
        assert (turn.status, turn.error) == ("failed", QUEUE_DOWN)
        kept = db.session.get(Message, turn.user_message_id)
        assert kept.parts == [text_part("Hi")]
