"""A reply is derived from what happened: each step's output and the turn's tool calls."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.extensions import db
from core.models import Conversation, Message, ToolCall, Turn
from core.turn.calls import claim_call, finish_call, store_calls
from core.turn.lifecycle import cancel_turn, claim_step
from core.turn.parts import source_part, text_part, tool_call_part, tool_result_part
from core.turn.replies import (
    UNFINISHED_CALL,
    StepOutput,
    cited_urls,
    reply_parts,
    source_numbers,
)
from tests.support.turns import stored_turn
from webapp import queue
from workers.providers import ToolCallRequest

MODEL_SOURCE = {"url": "https://model.example/", "title": "Model"}
PAGE_SOURCE = {"url": "https://page.example/", "title": "Page"}


def ask_for_two_calls(turn_id: str, user_id: str) -> None:
    """Store a first step that cited a source, said a line and asked for two calls."""
    requested = [
        ToolCallRequest(id=call_id, name="echo", arguments={"q": call_id}, raw_arguments="{}")
        for call_id in ("a", "b")
    ]
    store_calls(turn_id, 0, user_id, StepOutput("Looking.", [MODEL_SOURCE]), {}, requested)
    db.session.commit()


def finish(turn_id: str, call_id: str, output: str, citations: list[dict]) -> None:
    assert claim_call(turn_id, call_id, f"task-{call_id}") == "claimed"
    call = db.session.get(ToolCall, (turn_id, call_id))
    finish_call(call, "ok", output, None, [], owner_of(turn_id), "echo", citations)


def owner_of(turn_id: str) -> str:
    turn = db.session.get(Turn, turn_id)
    return db.session.get(Conversation, turn.conversation_id).owner_id


def stored_reply(turn_id: str) -> list[dict]:
    """Return the reply's stored parts, reading only the columns every revision has (a read of
    whole rows fails on a schema migrated down past a newer column)."""
    db.session.expire_all()
    message_id = db.session.scalar(db.select(Turn.assistant_message_id).filter_by(id=turn_id))
    return db.session.scalar(db.select(Message.parts).filter_by(id=message_id))


def test_a_result_that_arrives_after_a_stop_takes_its_place_in_the_reply(app, make_user):
    """Before, the late result was merged at the end of what the Stop kept, so the page's
    source moved above the results it came from; the reply is now derived again."""
    a_late_result_takes_its_place(app, make_user("pat").id)


@pytest.mark.postgres
def test_a_result_that_arrives_after_a_stop_takes_its_place_on_postgresql(
    make_app, migrated_postgres_url
):
    a_late_result_takes_its_place(*postgres_app_and_user(make_app, migrated_postgres_url))


def postgres_app_and_user(make_app, url: str) -> tuple:
    """Return an app on PostgreSQL and the id of a user stored there."""
    from core.models import User

    app = make_app(DATABASE_URL=url)
    with app.app_context():
        user = User.make("pat", "password")
        db.session.add(user)
        db.session.commit()
        return app, user.id


def a_late_result_takes_its_place(app, user_id: str) -> None:
    """Stop a turn while one of its two calls runs, finish that call, close the step."""
    turn_id = stored_turn(app, user_id, "running", with_reply=True)
    with app.app_context():
        ask_for_two_calls(turn_id, user_id)
        finish(turn_id, "a", "A said", [PAGE_SOURCE])
        assert cancel_turn(db.session.get(Turn, turn_id), revoke=queue.revoke)  # call b still runs
        shown_at_stop = stored_reply(turn_id)
        finish(turn_id, "b", "B said late", [])
        assert claim_step(turn_id, 1)[0] == "ended"  # the chord's callback closes the step
        calls = [
            source_part(**MODEL_SOURCE, number=1),
            text_part("Looking."),  # checked, and without markers it has no citations
            tool_call_part("a", "echo", {"q": "a"}),
            tool_call_part("b", "echo", {"q": "b"}),
            tool_result_part("a", "echo", "ok", "A said", sources=[2]),
        ]
        assert shown_at_stop == [
            *calls,
            tool_result_part("b", "echo", "cancelled", error=UNFINISHED_CALL),
            source_part(**PAGE_SOURCE, number=2),
        ]
        assert stored_reply(turn_id) == [
            *calls,
            tool_result_part("b", "echo", "ok", "B said late"),
            source_part(**PAGE_SOURCE, number=2),
        ]
        assert stored_reply(turn_id) == reply_parts(turn_id)


def test_a_running_step_shows_its_calls_and_their_results_only_once_it_is_over(app, make_user):
    user = make_user("sam")
    turn_id = stored_turn(app, user.id, "running", with_reply=True)
    with app.app_context():
        ask_for_two_calls(turn_id, user.id)
        finish(turn_id, "a", "A said", [PAGE_SOURCE])
        finish(turn_id, "b", "B said", [{"url": MODEL_SOURCE["url"], "title": "Again"}])
        asked = [
            source_part(**MODEL_SOURCE, number=1),
            text_part("Looking."),
            tool_call_part("a", "echo", {"q": "a"}),
            tool_call_part("b", "echo", {"q": "b"}),
        ]
        assert stored_reply(turn_id) == asked  # as the step stored its calls
        assert cited_urls(turn_id) == {MODEL_SOURCE["url"], PAGE_SOURCE["url"]}
        assert claim_step(turn_id, 1)[0] == "claimed"
        # Each source shows once, where it was first cited, numbered in that order; a
        # result lists the numbers of all it cites, cited before or not.
        assert reply_parts(turn_id) == [
            *asked,
            tool_result_part("a", "echo", "ok", "A said", sources=[2]),
            tool_result_part("b", "echo", "ok", "B said", sources=[1]),
            source_part(**PAGE_SOURCE, number=2),
        ]
        assert source_numbers(turn_id) == {MODEL_SOURCE["url"]: 1, PAGE_SOURCE["url"]: 2}


def test_replies_stored_before_0011_keep_their_parts_both_ways(app, make_user):
    """Migration 0011 adds the step records; a reply stored before keeps its stored parts."""
    import flask_migrate

    user = make_user("kim")
    turn_id = stored_turn(app, user.id, "completed", with_reply=True)
    kept = [text_part("Answered before step records."), source_part(**PAGE_SOURCE)]
    with app.app_context():
        db.session.get(Message, db.session.get(Turn, turn_id).assistant_message_id).parts = kept
        db.session.commit()
        db.session.remove()
        flask_migrate.downgrade(revision="0010")
        assert "turn_steps" not in db.inspect(db.engine).get_table_names()
        assert stored_reply(turn_id) == kept
        db.session.remove()
        flask_migrate.upgrade()
        assert "turn_steps" in db.inspect(db.engine).get_table_names()
        assert stored_reply(turn_id) == kept


def a_continued_reply_cites_what_its_earlier_turns_cited(app, user_id: str) -> None:
    first = stored_turn(app, user_id, "running", with_reply=True)
    other = stored_turn(app, user_id, "running", with_reply=True)
    unanswered = stored_turn(app, user_id, "queued")
    with app.app_context():
        ask_for_two_calls(first, user_id)
        finish(first, "a", "A said", [PAGE_SOURCE])
        db.session.commit()
        earlier = db.session.get(Turn, first)
        later = Turn(
            conversation_id=earlier.conversation_id, user_message_id=earlier.user_message_id,
            assistant_message_id=earlier.assistant_message_id, model="p/m", status="queued",
            step=0, created_at=earlier.created_at + timedelta(seconds=1),
        )  # fmt: skip
        db.session.add(later)
        db.session.commit()
        both = {MODEL_SOURCE["url"], PAGE_SOURCE["url"]}
        assert cited_urls(later.id) == both
        assert cited_urls(later.id, later) == both
        assert cited_urls(first) == both
        assert cited_urls(other) == set()
        assert cited_urls(other, db.session.get(Turn, other)) == set()
        assert cited_urls(unanswered, db.session.get(Turn, unanswered)) == set()


def test_a_continued_reply_cites_what_its_earlier_turns_cited(app, make_user):
    """``cited_urls`` reads the earlier turns within its one query, knowing the turn or not."""
    a_continued_reply_cites_what_its_earlier_turns_cited(app, make_user("kim").id)


@pytest.mark.postgres
def test_a_continued_reply_cites_what_its_earlier_turns_cited_on_postgresql(
    make_app, migrated_postgres_url
):
    app, user_id = postgres_app_and_user(make_app, migrated_postgres_url)
    a_continued_reply_cites_what_its_earlier_turns_cited(app, user_id)
