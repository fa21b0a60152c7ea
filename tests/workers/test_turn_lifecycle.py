"""The turn's lifecycle owns its cancel flag: a cancel racing the turn's end (issue 13).

Before, ``finish_turn`` deleted the flag, ``cancel_turn`` raised it again for 120 s, and a
worker that noticed the cancel lowered it when its own ending found the turn already ended —
while other work of the turn could still be running and had yet to see it.
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import update

from core.extensions import db
from core.models import Message, Turn, User
from core.turn import statements
from core.turn.events import TERMINAL_EVENTS
from core.turn.lifecycle import cancel_turn, claim_step, finish_turn
from core.turn.replies import StepOutput
from core.turn.state import key, turn_state
from tests.support.processes import joined
from tests.support.turns import stored_turn
from webapp import queue
from workers.steps import end


@pytest.fixture
def running_turn(app, make_user):
    """Return a factory of running turns (with their reply) of one user's conversations."""
    user = make_user("pat")
    return lambda: stored_turn(app, user.id, "running", with_reply=True)


def endings(app, turn_id: str) -> list[str]:
    with app.app_context():
        return [name for _, name, _ in turn_state(turn_id).read() if name in TERMINAL_EVENTS]


def test_a_cancelled_turn_keeps_its_flag_up_whatever_ends_it_after(app, running_turn):
    turn_id = running_turn()
    with app.app_context():
        assert cancel_turn(db.session.get(Turn, turn_id), revoke=queue.revoke)
        # The step that noticed the cancel ends the turn as it does, the chord's callback
        # closes the cancelled step, a late ending tries too: all of them lose, and none
        # hides the cancel from the turn's work still running.
        end(turn_id, "cancelled")
        assert claim_step(turn_id, 1)[0] == "ended"
        assert not finish_turn(turn_id, "completed", output=StepOutput("late"))
        state = turn_state(turn_id)
        assert state.cancel_requested()
        stream_ttl = app.config["EVENT_STREAM_TTL_SECONDS"]
        assert 0 < state.client.ttl(key(turn_id, "cancel")) <= stream_ttl
        assert db.session.get(Turn, turn_id).status == "cancelled"
    assert endings(app, turn_id) == ["turn.cancelled"]


def test_a_turn_that_ends_otherwise_raises_no_cancel(app, running_turn):
    turn_id = running_turn()
    with app.app_context():
        assert finish_turn(turn_id, "completed", output=StepOutput("done"))
        assert not cancel_turn(db.session.get(Turn, turn_id), revoke=queue.revoke)
        assert not turn_state(turn_id).cancel_requested()


def test_a_cancel_racing_the_turns_end_has_one_winner_and_a_flag_only_if_cancelled(
    app, running_turn
):
    outcomes = []
    for _ in range(12):
        turn_id = running_turn()
        won: dict[str, bool] = {}
        barrier = threading.Barrier(2)

        def cancel(turn_id=turn_id, won=won, barrier=barrier) -> None:
            with app.app_context():
                turn = db.session.get(Turn, turn_id)
                barrier.wait()
                won["cancel"] = cancel_turn(turn, revoke=queue.revoke)

        def complete(turn_id=turn_id, won=won, barrier=barrier) -> None:
            with app.app_context():
                barrier.wait()
                won["complete"] = finish_turn(turn_id, "completed", output=StepOutput("all"))
                # the worker's step then ends as it does when it saw the flag: it must lose
                finish_turn(turn_id, "cancelled")

        threads = [threading.Thread(target=cancel), threading.Thread(target=complete)]
        for thread in threads:
            thread.start()
        for thread in threads:
            joined(thread, "a racing thread")
        with app.app_context():
            status = db.session.get(Turn, turn_id).status
            flag = turn_state(turn_id).cancel_requested()
        assert sorted(won.values()) == [False, True], won
        assert status == ("cancelled" if won["cancel"] else "completed")
        assert flag == won["cancel"], (status, flag)
        assert len(endings(app, turn_id)) == 1
        outcomes.append(status)
    assert set(outcomes) <= {"cancelled", "completed"}


def replies_of(app, turn_id: str) -> list[Message]:
    """Return the assistant messages of the turn's conversation."""
    with app.app_context():
        conversation_id = db.session.get(Turn, turn_id).conversation_id
        return list(
            db.session.scalars(
                db.select(Message).filter_by(conversation_id=conversation_id, role="assistant")
            )
        )


@pytest.fixture(params=["sqlite", "postgres"])
def claim_app(request, app):
    """The app on SQLite, then on PostgreSQL (the reply's INSERT … SELECT binds typed values
    each dialect reads its own way)."""
    if request.param == "sqlite":
        return app
    return request.getfixturevalue("make_app")(
        DATABASE_URL=request.getfixturevalue("migrated_postgres_url")
    )


def test_a_first_claim_makes_the_one_reply_the_turn_writes_into(claim_app, make_user):
    app = claim_app
    with app.app_context():
        user = User.make("kim", "password")
        db.session.add(user)
        db.session.commit()
        user_id = user.id
    turn_id = stored_turn(app, user_id, "queued")
    with app.app_context():
        claim, turn, made = claim_step(turn_id, 0)
        db.session.commit()
        assert (claim, made) == ("started", True)
        stored = db.session.get(Turn, turn_id)
        assert stored.status == "running"
        assert stored.assistant_message_id == turn.assistant_message_id
        question = stored.user_message_id
        # Delivered twice: the second delivery runs nothing and makes no second reply.
        assert claim_step(turn_id, 0)[0] == "busy"
        db.session.commit()
    (reply,) = replies_of(app, turn_id)
    assert (reply.id, reply.status, reply.parts) == (turn.assistant_message_id, "running", [])
    assert reply.parent_id == question


def test_a_continuations_first_claim_writes_on_its_reply(app, make_user):
    turn_id = stored_turn(app, make_user("lou").id, "queued", with_reply=True)
    (before,) = replies_of(app, turn_id)
    with app.app_context():
        claim, turn, made = claim_step(turn_id, 0)
        db.session.commit()
    assert (claim, made, turn.assistant_message_id) == ("started", False, before.id)
    (after,) = replies_of(app, turn_id)
    assert (after.id, after.status) == (before.id, "running")


def test_a_first_claim_that_loses_leaves_no_reply_behind(app, make_user, monkeypatch):
    # On PostgreSQL two deliveries may both insert a reply before one of them claims the turn:
    # the loser's reply is dropped with its claim, whatever it does next. (Here the other
    # claim is the loser's own transaction's, so the rollback drops it too.)
    turn_id = stored_turn(app, make_user("max").id, "queued")
    real_run = statements.run

    def claimed_meanwhile(statement, values):
        if statement is statements.first_claim():
            db.session.execute(update(Turn).where(Turn.id == turn_id).values(status="running"))
        return real_run(statement, values)

    monkeypatch.setattr(statements, "run", claimed_meanwhile)
    with app.app_context():
        assert claim_step(turn_id, 0)[0] not in ("started", "claimed", "taken")
        db.session.commit()
    assert replies_of(app, turn_id) == []
