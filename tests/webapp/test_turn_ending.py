"""What a turn's ending costs the database: each record read once, the step written once."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event

from core.extensions import db
from core.models import Turn, User
from core.turn.lifecycle import finish_turn
from core.turn.owners import conversation_owner
from core.turn.parts import source_part, text_part
from core.turn.replies import StepOutput, record_step, reply_parts
from tests.support.turns import stored_turn

ANSWER = StepOutput("The bridge opened in 1932.", [{"url": "https://a.example/", "title": "A"}])


def ending_statements(app, turn_id: str) -> list[str]:
    """Return the SQL statements a completed text turn's ending sends, as ``VERB table``."""
    sent: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        verb = statement.split(None, 1)[0].upper()
        table = re.search(r"\b(?:FROM|INTO|UPDATE)\s+\"?(\w+)", statement, re.IGNORECASE)
        sent.append(f"{verb} {table.group(1) if table else '?'}")

    with app.app_context():
        event.listen(db.engine, "before_cursor_execute", count)
        try:
            assert finish_turn(turn_id, "completed", output=ANSWER)
        finally:
            event.remove(db.engine, "before_cursor_execute", count)
    return sent


def test_a_text_turns_ending_reads_each_record_once_and_upserts_its_step(app, make_user):
    """Issue 29: the ending read the turn row three times, wrote the step record with merge's
    SELECT then INSERT, and read the steps after writing one (10 statements, now 7)."""
    an_ending_reads_each_record_once(app, make_user("ada").id)


@pytest.mark.postgres
def test_a_text_turns_ending_reads_each_record_once_on_postgresql(make_app, migrated_postgres_url):
    app = make_app(DATABASE_URL=migrated_postgres_url)
    an_ending_reads_each_record_once(app, stored_user(app))


def stored_user(app) -> str:
    with app.app_context():
        user = User.make("ada", "password")
        db.session.add(user)
        db.session.commit()
        return user.id


def an_ending_reads_each_record_once(app, user_id: str) -> None:
    turn_id = stored_turn(app, user_id, "running", with_reply=True)
    with app.app_context():  # as the turn's step did, which keeps the owner for the process
        conversation_owner(db.session.get(Turn, turn_id).conversation_id)
    sent = ending_statements(app, turn_id)
    assert sorted(sent) == sorted(
        [
            "SELECT turns",  # the turn, with any earlier turns of a continued reply
            "SELECT turn_steps",
            "SELECT tool_calls",
            "UPDATE turns",  # the ending itself, RETURNING what the rest needs
            "INSERT usage_counts",
            "INSERT turn_steps",  # ON CONFLICT DO UPDATE
            "UPDATE messages",
        ]
    )
    with app.app_context():
        [step] = db.session.execute(
            db.text("SELECT text, sources FROM turn_steps WHERE turn_id = :t"), {"t": turn_id}
        ).all()
    assert step.text == ANSWER.text


def test_a_step_recorded_again_replaces_its_record(app, make_user):
    a_step_recorded_again_replaces_its_record(app, make_user("ada").id)


@pytest.mark.postgres
def test_a_step_recorded_again_replaces_its_record_on_postgresql(make_app, migrated_postgres_url):
    app = make_app(DATABASE_URL=migrated_postgres_url)
    a_step_recorded_again_replaces_its_record(app, stored_user(app))


def a_step_recorded_again_replaces_its_record(app, user_id: str) -> None:
    turn_id = stored_turn(app, user_id, "running", with_reply=True)
    with app.app_context():
        record_step(turn_id, 0, StepOutput("What the page showed"))
        db.session.commit()
        assert reply_parts(turn_id) == [text_part("What the page showed")]
        record_step(turn_id, 0, ANSWER)
        db.session.commit()
        assert reply_parts(turn_id) == [
            source_part("https://a.example/", "A", 1),
            text_part(ANSWER.text),
        ]
