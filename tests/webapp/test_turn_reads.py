"""The reads of ``turns`` each model step and each POST make go by an index: none reads the
whole table, which grows with every turn ever run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event

from core.extensions import db
from core.models import Turn
from core.models.chat import OPEN_TURNS
from core.turn.replies import cited_urls, earlier_turn_ids, read_records
from core.turn.states import OPEN_STATUSES
from core.turn_starts import TurnStart, check_turn
from tests.support.turns import stored_turn


def plans(read) -> list[str]:
    """Return the lines of the plans the database makes of the statements ``read`` sends (in
    the caller's app context); PostgreSQL is told to avoid a sequential scan where it can, so
    that a scan in the plan is one no index could spare, whatever the table's size."""
    sent = []

    def keep(conn, cursor, statement, parameters, context, executemany):
        sent.append((statement, parameters))

    event.listen(db.engine, "before_cursor_execute", keep)
    try:
        read()
    finally:
        event.remove(db.engine, "before_cursor_execute", keep)
    db.session.rollback()
    connection = db.session.connection()
    postgres = connection.dialect.name == "postgresql"
    if postgres:
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
    lines = []
    for statement, parameters in sent:
        explain = ("EXPLAIN " if postgres else "EXPLAIN QUERY PLAN ") + statement
        lines += [
            row[0] if postgres else row[-1]
            for row in connection.exec_driver_sql(explain, parameters)
        ]
    db.session.rollback()
    return lines


def whole_table_reads(lines: list[str]) -> list[str]:
    """Return the lines of a plan that read the whole ``turns`` table (or an alias of it)."""
    return [line for line in lines if line.startswith("SCAN turns") or "Seq Scan on turns" in line]


def a_continued_reply(app, user_id: str) -> tuple[str, str]:
    """Store a turn with a reply and a later turn that continues it; return both ids."""
    first = stored_turn(app, user_id, "cancelled", with_reply=True)
    with app.app_context():
        earlier = db.session.get(Turn, first)
        same = ("conversation_id", "user_message_id", "assistant_message_id", "model")
        later = Turn(
            **{name: getattr(earlier, name) for name in same},
            status="running",
            step=0,
            created_at=earlier.created_at + timedelta(seconds=1),
        )
        db.session.add(later)
        db.session.commit()
        return first, later.id


def a_step_reads_its_replys_turns_by_index(app, user_id: str) -> None:
    first, later = a_continued_reply(app, user_id)
    with app.app_context():
        records = read_records(later)
        assert [turn.turn_id for turn in records.turns] == [first, later]
        assert earlier_turn_ids(later) == [first]
        lines = plans(lambda: read_records(later))
        lines += plans(lambda: cited_urls(later))
        lines += plans(lambda: cited_urls(later, db.session.get(Turn, later)))
        lines += plans(lambda: earlier_turn_ids(later))
        assert lines
        assert whole_table_reads(lines) == []


def test_a_step_reads_the_turns_of_its_reply_by_index_not_the_whole_table(app, make_user):
    """Before, the read of a reply's turns (its ``OR`` of the turn itself and the earlier turns
    of the same reply, by ``turns.assistant_message_id``, which had no index) scanned every
    turn ever run, on every model step."""
    a_step_reads_its_replys_turns_by_index(app, make_user("ana").id)


@pytest.mark.postgres
def test_a_step_reads_the_turns_of_its_reply_by_index_on_postgresql(
    make_app, migrated_postgres_url
):
    from tests.webapp.test_turn_replies import postgres_app_and_user

    a_step_reads_its_replys_turns_by_index(*postgres_app_and_user(make_app, migrated_postgres_url))


def a_post_counts_its_users_open_turns_alone(app, user_id: str, other_id: str) -> None:
    for owner in (user_id, other_id):
        stored_turn(app, owner, "running", with_reply=True)
    stored_turn(app, user_id, "completed", with_reply=True)
    with app.app_context():
        hour_ends = datetime.now(UTC) + timedelta(hours=1)
        lines = plans(lambda: check_turn(TurnStart(user_id, "token", 0, hour_ends)))
        assert whole_table_reads(lines) == []
        assert any("ix_turns_open_conversation_id" in line for line in lines), lines


def test_a_post_counts_its_users_open_turns_by_the_index_of_open_turns(app, make_user):
    """Before, the POST's count of the user's open turns read every user's open turns (by
    status) and kept the user's; it now reads the user's conversations' open turns alone."""
    a_post_counts_its_users_open_turns_alone(app, make_user("bo").id, make_user("cy").id)


def test_the_index_of_open_turns_holds_every_open_status():
    """The partial index's predicate names the statuses a turn is open in: a status added to
    one and not the other would leave the POST's count of open turns without its index."""
    assert OPEN_TURNS == "status IN ({})".format(", ".join(f"'{s}'" for s in OPEN_STATUSES))
