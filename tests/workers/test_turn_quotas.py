"""A user's turn limits through the real API and a real worker: answers running at once and
messages per hour, each reached, refused with 429, Retry-After and its sentence, and freed."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime

from core.extensions import db, get_redis
from core.limits import set_overrides
from core.models import User
from core.quotas import WINDOW_SECONDS, key, open_turn_count, remaining
from tests.support.chat import ChatClient
from tests.support.fake_model import FakeModel, Reply
from tests.support.quotas import hold_window
from tests.support.web_process import WebProcess
from tests.support.workers import CeleryWorker
from tests.workers.conftest import CHAT_SETTINGS, private_chat

OPEN_TURNS_SENTENCE = (
    "You have 3 answers running. Wait for one to finish, or stop one, then send again."
)


def post_turn(chat, conversation: str, model: str, content: str = "Hello"):
    """POST a message and return the response, whatever its status."""
    return chat.call(
        "POST",
        f"/api/conversations/{conversation}/turns",
        json={"model": model, "content": content},
    )


def test_a_fourth_answer_is_refused_until_one_of_three_running_ends(chat, model_ids, fake_model):
    model, _ = model_ids
    fake_model.default = Reply.hang()
    turns = [chat.start(chat.new_conversation(), "Hi", model)["turn"]["id"] for _ in range(3)]

    refused = post_turn(chat, chat.new_conversation(), model)

    assert refused.status_code == 429
    assert refused.json()["error"]["message"] == OPEN_TURNS_SENTENCE
    assert int(refused.headers["Retry-After"]) >= 1
    chat.call("POST", f"/api/turns/{turns[0]}/cancel")
    assert chat.wait(turns[0])["status"] == "cancelled"
    fake_model.default = Reply.text("Fine.")
    again = post_turn(chat, chat.new_conversation(), model)
    assert again.status_code == 202, again.text
    for turn in turns[1:]:
        chat.call("POST", f"/api/turns/{turn}/cancel")


def post_at_once(app, token: str, conversations: list[str], model: str, log_dir) -> list:
    """POST a message to each conversation at the same instant, half through each of two web
    processes (as gunicorn serves Lookout), so the checks really run side by side; return the
    responses."""
    barrier = threading.Barrier(len(conversations))
    answers = []
    with WebProcess(app, log_dir) as one, WebProcess(app, log_dir) as two:
        clients = [ChatClient(web.url, token) for web in (one, two)]

        def send(number: int, conversation: str) -> None:
            client = clients[number % 2]
            barrier.wait()
            answers.append(post_turn(client, conversation, model))

        threads = [threading.Thread(target=send, args=(n, c)) for n, c in enumerate(conversations)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return answers


def test_many_posts_at_the_same_instant_never_open_more_turns_than_the_limit(
    chat, chat_app, model_ids, fake_model, tmp_path
):
    model, _ = model_ids
    fake_model.default = Reply.hang()
    conversations = [chat.new_conversation() for _ in range(16)]

    answers = post_at_once(chat_app, chat.token, conversations, model, tmp_path)

    assert sorted(a.status_code for a in answers) == [202] * 3 + [429] * 13
    with chat_app.app_context():
        assert open_turn_count(chat.user_id) == 3
    for answer in answers:
        if answer.status_code == 202:
            chat.call("POST", f"/api/turns/{answer.json()['turn']['id']}/cancel")


def test_on_postgresql_many_posts_at_the_same_instant_never_open_more_turns_than_the_limit(
    migrated_postgres_url, make_app, tmp_path
):
    """PostgreSQL runs the requests' transactions truly side by side (SQLite's single writer
    hides most races)."""
    app = make_app(DATABASE_URL=migrated_postgres_url, **CHAT_SETTINGS)
    with FakeModel(default=Reply.hang()) as fake, CeleryWorker(app, tmp_path):
        chat = private_chat(app, fake, "http://127.0.0.1:1", "racer")
        with app.test_client() as client:
            client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {chat.token}"
            conversations = [
                client.post("/api/conversations", json={}).get_json()["id"] for _ in range(16)
            ]

        answers = post_at_once(app, chat.token, conversations, "fake/m", tmp_path)

        assert sorted(a.status_code for a in answers) == [202] * 3 + [429] * 13
        with app.app_context():
            owner = db.session.scalar(db.select(User.id).filter_by(name="racer"))
            assert open_turn_count(owner) == 3
        with app.test_client() as client:
            client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {chat.token}"
            for answer in answers:
                if answer.status_code == 202:
                    client.post(f"/api/turns/{answer.json()['turn']['id']}/cancel")
    with app.app_context():
        db.engine.dispose()


def test_two_posts_in_one_conversation_at_the_same_instant_start_one_turn(
    chat, chat_app, model_ids, fake_model
):
    """The refused ones say why and take nothing of the user's hour (the conversation's open
    turn is read in the same query as the user's, before the hour is counted)."""
    model, _ = model_ids
    fake_model.default = Reply.hang()
    conversation = chat.new_conversation()
    barrier = threading.Barrier(6)
    answers = []

    def send() -> None:
        barrier.wait()
        answers.append(post_turn(chat, conversation, model))

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    started = [a for a in answers if a.status_code == 202]
    assert len(started) == 1
    refused = [a for a in answers if a not in started]
    assert {a.status_code for a in refused} == {409}
    assert {a.json()["error"]["message"] for a in refused} == {
        "A turn is still running in this conversation. Wait for it, or cancel it first."
    }
    with chat_app.app_context():
        shown = {row["limit"]: row for row in remaining(chat.user_id)}
        assert shown["turnsPerHour"]["used"] == 1
    chat.call("POST", f"/api/turns/{started[0].json()['turn']['id']}/cancel")


def test_messages_past_the_hour_are_refused_until_the_hour_ends(
    chat, chat_app, model_ids, fake_model
):
    model, _ = model_ids
    with chat_app.app_context():
        set_overrides(chat.user_id, {"turnsPerHour": 2})
        db.session.commit()
        held_at = datetime.now(UTC)
        counter = key(chat.user_id, "turnsPerHour")
        hour_ends = hold_window(get_redis(), counter, WINDOW_SECONDS["hour"])
    conversation = chat.new_conversation()
    for _ in range(2):
        assert chat.run(conversation, "Hi", model)["status"] == "completed"

    refused = post_turn(chat, conversation, model)

    assert refused.status_code == 429
    message = refused.json()["error"]["message"]
    assert re.fullmatch(
        r"You have sent 2 messages this hour; you can send again at \d\d:00 UTC\.", message
    )
    assert message.endswith(f"at {hour_ends:%H}:00 UTC.")
    seconds = int(refused.headers["Retry-After"])
    assert 1 <= seconds <= (hour_ends - held_at).total_seconds() + 1
    with chat_app.app_context():
        shown = {row["limit"]: row for row in remaining(chat.user_id)}
        assert shown["turnsPerHour"]["used"] == 2
        assert shown["turnsPerHour"]["allowed"] == 2
        # The hour passes: the counter's expiry is the window's end.
        get_redis().pexpire(key(chat.user_id, "turnsPerHour"), 1)
    again = post_turn(chat, conversation, model)
    assert again.status_code == 202, again.text
    assert chat.wait(again.json()["turn"]["id"])["status"] == "completed"
