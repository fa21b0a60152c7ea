"""A turn's POST talks to Redis four times: the token's kept row checked, the start lock taken
(with the hour's count), the first step's message pushed, the lock let go (with the hour's count
added and the step marked queued with its task's id, which the publish signal did in a round
trip of its own). The limits still hold under POSTs at once, and the step's message is the one
Celery would write."""

from __future__ import annotations

import base64
import json
import threading

import pytest
import redis
from celery.utils.saferepr import saferepr

from core import broker, turn_starts
from core.turn import queued
from core.turn.state import turn_state
from tests.support.models import unanswered_model
from webapp import queue

OPEN_TURNS = 2
RUNNING = "You have 2 answers running. Wait for one to finish, or stop one, then send again."


@pytest.fixture
def app(make_app):
    return make_app(QUOTA_OPEN_TURNS=OPEN_TURNS)


@pytest.fixture
def model_id(app):
    """A stored provider with one model (no worker takes this app's queue: turns stay queued)."""
    return unanswered_model(app)


@pytest.fixture
def alice(app, make_user, bearer):
    """The Authorization header of a user's token."""
    return bearer(make_user("alice"))


def conversation(client, headers) -> str:
    answer = client.post("/api/conversations", json={}, headers=headers)
    assert answer.status_code == 201
    return answer.get_json()["id"]


def post(client, headers, model_id, conversation_id):
    return client.post(
        f"/api/conversations/{conversation_id}/turns",
        json={"model": model_id, "content": "Hello"},
        headers=headers,
    )


def test_a_post_makes_four_redis_round_trips_and_leaves_its_step_marked(
    app, alice, model_id, monkeypatch
):
    client = app.test_client()
    conversation_id = conversation(client, alice)
    post(client, alice, model_id, conversation(client, alice))  # scripts loaded, pools made
    sent: list[str] = []
    execute = redis.Redis.execute_command

    def counted(self, *args, **options):
        sent.append(str(args[0]).upper())
        return execute(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    answer = post(client, alice, model_id, conversation_id)
    monkeypatch.undo()
    assert answer.status_code == 202, answer.get_json()
    # The token's kept row checked (``webapp.auth.kept_tokens``), then the start's three; a
    # fourth, the publish signal's marker script, is folded into the lock's release.
    assert sent == ["GET", "EVALSHA", "LPUSH", "EVALSHA"]
    turn_id = answer.get_json()["turn"]["id"]
    with app.app_context():
        assert queued.all_queued(turn_id, [queued.step_work(0)])
        [task_id] = turn_state(turn_id).task_ids()  # a Stop revokes it
        broker_redis = redis.Redis.from_url(queue.get_client().conf.broker_url)
        message = json.loads(broker_redis.lindex(app.config["CELERY_QUEUE"], 0))
        assert message["headers"]["id"] == task_id


def test_the_first_steps_message_shows_its_arguments_as_celery_would(app):
    """The display of the arguments is given rather than computed by Celery's saferepr: a
    worker (of this release or the last) reads the same message."""
    turn_id = "0123456789abcdef0123456789abcdef"
    with app.app_context():
        task_id = queue.send_first_step(turn_id)
        broker_redis = redis.Redis.from_url(queue.get_client().conf.broker_url)
        message = json.loads(broker_redis.lindex(app.config["CELERY_QUEUE"], 0))
    headers = message["headers"]
    assert (headers["task"], headers["id"]) == (broker.RUN_TURN_STEP, task_id)
    assert headers["argsrepr"] == saferepr((turn_id, 0), 1024) == f"('{turn_id}', 0)"
    assert headers["kwargsrepr"] == saferepr({}, 1024) == "{}"
    assert headers["ignore_result"] is True
    body = json.loads(base64.b64decode(message["body"]))
    assert body[0] == [turn_id, 0] and body[1] == {}


def test_posts_at_once_never_pass_the_open_turns_limit(app, alice, model_id):
    client = app.test_client()
    conversations = [conversation(client, alice) for _ in range(6)]
    answers: list = [None] * len(conversations)
    ready = threading.Barrier(len(conversations))

    def send(index: int) -> None:
        own = app.test_client()
        ready.wait()
        answers[index] = post(own, alice, model_id, conversations[index])

    threads = [threading.Thread(target=send, args=(n,)) for n in range(len(conversations))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [202] * OPEN_TURNS + [429] * (len(conversations) - OPEN_TURNS)
    for answer in answers:
        if answer.status_code == 429:
            assert answer.get_json()["error"]["message"] == RUNNING
    with app.app_context():  # each started turn's step is marked queued
        for answer in answers:
            if answer.status_code == 202:
                turn_id = answer.get_json()["turn"]["id"]
                assert queued.all_queued(turn_id, [queued.step_work(0)])


def test_a_step_the_queue_refuses_is_not_marked_and_the_lock_is_let_go(
    app, alice, model_id, monkeypatch
):
    """The send now runs under the start lock: a queue that cannot be reached still answers
    503 with its sentence, counts the turn in the hour as before, and leaves no lock held."""

    def refuse(_turn_id: str) -> str:
        raise broker.QueueError("down")

    monkeypatch.setattr(queue, "send_first_step", refuse)
    client = app.test_client()
    answer = post(client, alice, model_id, conversation(client, alice))
    assert answer.status_code == 503
    assert answer.get_json()["error"]["message"] == (
        "Your message was saved, but no worker could be reached to answer it. "
        "Try again in a moment."
    )
    monkeypatch.undo()
    answer = post(client, alice, model_id, conversation(client, alice))  # not kept waiting
    assert answer.status_code == 202, answer.get_json()


def test_a_release_that_fails_after_the_send_answers_the_queued_turn(
    app, alice, model_id, monkeypatch
):
    """The step went out before the lock's release: a Redis error there loses only the step's
    marker (the reaper sends the step again once it is stale), not the user's answer."""

    def refused(*_args):
        raise redis.ConnectionError("gone")

    client = app.test_client()
    conversation_id = conversation(client, alice)
    monkeypatch.setattr(turn_starts, "_LET_GO", refused)
    answer = post(client, alice, model_id, conversation_id)
    monkeypatch.undo()
    assert answer.status_code == 202, answer.get_json()
    turn = answer.get_json()["turn"]
    assert turn["status"] == "queued"
    with app.app_context():
        assert not queued.all_queued(turn["id"], [queued.step_work(0)])
        broker_redis = redis.Redis.from_url(queue.get_client().conf.broker_url)
        assert broker_redis.llen(app.config["CELERY_QUEUE"]) == 1
