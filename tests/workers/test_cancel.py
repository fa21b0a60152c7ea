"""Ending turns: cancellation mid-stream and mid-tool, cleanup of turn state, dead workers."""

from __future__ import annotations

import threading
import time

from core.extensions import db, get_redis
from core.models import Provider, User
from core.turn.state import TurnState
from tests.support.chat import ChatClient
from tests.support.fake_model import FakeModel, Reply
from tests.support.live_server import LiveServer
from tests.support.processes import HANG_SECONDS, joined
from tests.support.workers import CeleryWorker
from tests.workers.conftest import CHAT_SETTINGS, private_chat


class EventReader(threading.Thread):
    """Reads a turn's events in the background, noting when each arrived."""

    def __init__(self, chat: ChatClient, turn_id: str) -> None:
        super().__init__(daemon=True)
        self.chat, self.turn_id = chat, turn_id
        self.events: list = []
        self.ended_at: float | None = None

    def run(self) -> None:
        from tests.support.chat import parse_sse

        response = self.chat.call(
            "GET", f"/api/turns/{self.turn_id}/events", stream=True, timeout=30
        )
        for event in parse_sse(response.iter_lines(decode_unicode=True)):
            self.events.append(event)
        self.ended_at = time.monotonic()

    def wait_for(self, name: str, count: int = 1, timeout: float = HANG_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while sum(e.name == name for e in self.events) < count:
            assert time.monotonic() < deadline, f"no {count} {name} events: {self.events}"
            time.sleep(0.02)


def stored_reply(chat: ChatClient, turn_id: str, ready, timeout: float = 60) -> dict:
    """Return the turn's stored reply once ``ready(reply)``; AssertionError with the last read
    past ``timeout``, a bound only a hang reaches (the reply is stored in well under a second)."""
    deadline = time.monotonic() + timeout
    while not ready(reply := chat.reply(chat.turn(turn_id))):
        assert time.monotonic() < deadline, f"the stored reply never got there: {reply}"
        time.sleep(0.05)
    return reply


def state_of(app, turn_id: str) -> TurnState:
    with app.app_context():
        return TurnState(get_redis(), turn_id)


def test_cancel_mid_stream_ends_the_stream_fast_and_keeps_partial_text(
    chat, chat_app, fake_model, model_ids
):
    fake_model.script(Reply.forever("tick ", delay=0.05))
    started = chat.start(chat.new_conversation(), "talk", model_ids[0])
    turn_id = started["turn"]["id"]
    reader = EventReader(chat, turn_id)
    reader.start()
    reader.wait_for("text.delta", 3)
    asked = time.monotonic()
    response = chat.call("POST", f"/api/turns/{turn_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    joined(reader, "the event stream")
    assert reader.events[-1].name == "turn.cancelled"
    assert reader.ended_at - asked < 1.0
    fake_model.wait_for_disconnects(1)
    reply = stored_reply(chat, turn_id, lambda reply: reply["parts"])
    assert reply["status"] == "cancelled"
    assert reply["parts"][0]["text"].startswith("tick tick tick")
    # The cache is gone; the cancel flag stays up for any work still running and expires with
    # the stream (issue 13: it used to be lowered, and could hide the cancel from that work).
    state = state_of(chat_app, turn_id)
    assert not state.exists("cache")
    with chat_app.app_context():
        flag_ttl = get_redis().ttl(f"lookout:turn:{turn_id}:cancel")
    assert 0 < flag_ttl <= chat_app.config["EVENT_STREAM_TTL_SECONDS"]


def test_cancel_mid_tool_call_stops_the_tool_and_records_it_cancelled(
    chat, chat_app, fake_model, model_ids
):
    fake_model.script(Reply.tool_calls([("waiter", {})]))
    started = chat.start(
        chat.new_conversation(), "wait", model_ids[0], generation={"tools": ["waiter"]}
    )
    turn_id = started["turn"]["id"]
    reader = EventReader(chat, turn_id)
    reader.start()
    reader.wait_for("tool.started")
    assert chat.call("POST", f"/api/turns/{turn_id}/cancel").status_code == 200
    joined(reader, "the event stream")
    assert reader.events[-1].name == "turn.cancelled"
    reply = stored_reply(
        chat, turn_id, lambda reply: any(p["type"] == "tool-result" for p in reply["parts"])
    )
    results = [p for p in reply["parts"] if p["type"] == "tool-result"]
    assert results[0]["outcome"] == "cancelled"
    assert len(fake_model.chat_requests()) == 1  # no model step after the cancel


def test_cancelling_a_finished_turn_is_a_conflict_that_says_why(chat, fake_model, model_ids):
    turn = chat.run(chat.new_conversation(), "hi", model_ids[0])
    response = chat.call("POST", f"/api/turns/{turn['id']}/cancel")
    assert response.status_code == 409
    assert response.json()["error"]["message"] == (
        "This turn has already ended (completed), so there is nothing to cancel."
    )


def cache_gone(state, seconds: float = 5.0) -> bool:
    """Whether the turn's tool cache is gone within ``seconds``: it is deleted just after the
    ending is committed, so a turn read as ended may still have it for a moment."""
    deadline = time.monotonic() + seconds
    while state.exists("cache") and time.monotonic() < deadline:
        time.sleep(0.02)
    return not state.exists("cache")


def test_a_finished_turn_deletes_its_cache_and_flag_and_its_stream_expires(
    chat, chat_app, fake_model, model_ids
):
    fake_model.script(Reply.tool_calls([("page", {"text": "a"})]), Reply.text("ok"))
    turn = chat.run(chat.new_conversation(), "read", model_ids[0])
    state = state_of(chat_app, turn["id"])
    assert cache_gone(state) and not state.exists("cancel")
    with chat_app.app_context():
        ttl = get_redis().ttl(f"lookout:turn:{turn['id']}:events")
    assert 0 < ttl <= chat_app.config["EVENT_STREAM_TTL_SECONDS"]


def test_a_failed_turn_deletes_its_cache_too(chat, chat_app, fake_model, model_ids):
    fake_model.script(Reply.tool_calls([("page", {"text": "a"})]), Reply.error(401))
    turn = chat.run(chat.new_conversation(), "read", model_ids[0])
    assert turn["status"] == "failed"
    assert cache_gone(state_of(chat_app, turn["id"]))


def test_a_turn_whose_worker_is_killed_is_failed_with_a_reason(make_app, tmp_path, redis_url):
    """The threads pool loses a SIGKILLed worker's tasks until visibility_timeout; the reaper
    of another worker ends the turn within TURN_STALE_SECONDS instead."""
    app = make_app(**CHAT_SETTINGS)
    with FakeModel() as fake, LiveServer(app) as web:
        fake.script(Reply.forever("tick ", delay=0.05))
        chat = private_chat(app, fake, web.url, "victim")
        doomed = CeleryWorker(app, tmp_path).start()
        started = chat.start(chat.new_conversation(), "talk", "fake/m")
        turn_id = started["turn"]["id"]
        reader = EventReader(chat, turn_id)
        reader.start()
        reader.wait_for("text.delta", 2)
        doomed.process.kill()
        doomed.process.wait(10)
        with CeleryWorker(app, tmp_path):
            turn = chat.wait(turn_id)
        joined(reader, "the event stream")
    assert turn["status"] == "failed"
    assert turn["error"].startswith(
        "The answer above was cut off. The worker answering this turn stopped"
    )
    assert reader.events[-1].name == "turn.failed"


def test_a_step_redelivered_after_its_worker_died_is_taken_over_and_finished(make_app, tmp_path):
    """A claimed step whose heartbeat went stale (its worker died before finishing) is run again
    by the next delivery of its task, instead of being refused as already claimed."""
    from datetime import timedelta

    from core import broker
    from core.models import Conversation, Message, Turn
    from core.models.base import utcnow
    from webapp import queue

    app = make_app(
        LOOKOUT_PLUGINS="tests.workers.turn_plugins",
        TURN_STALE_SECONDS=30,
        REAPER_INTERVAL_SECONDS=3600,  # the redelivery, not the reaper, must end this turn
    )
    with FakeModel() as fake, CeleryWorker(app, tmp_path):
        fake.script(Reply.text("Answered after all."))
        with app.app_context():
            db.session.add(
                Provider(name="fake", base_url=fake.base_url, models=[{"name": "m", "tools": True}])
            )
            user = User.make("owner", "password")
            db.session.add(user)
            db.session.flush()
            conversation = Conversation(owner_id=user.id)
            db.session.add(conversation)
            db.session.flush()
            question = Message(
                conversation_id=conversation.id, role="user", parts=[{"type": "text", "text": "q"}]
            )
            db.session.add(question)
            db.session.flush()
            stale = utcnow() - timedelta(seconds=60)
            turn = Turn(
                conversation_id=conversation.id,
                user_message_id=question.id,
                model="fake/m",
                generation={},
                roles=["user"],
                status="running",
                step=0,
                started_at=stale,
                heartbeat_at=stale,
            )
            db.session.add(turn)
            db.session.commit()
            turn_id = turn.id
            queue.enqueue(broker.RUN_TURN_STEP, turn_id, 0)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with app.app_context():
                row = db.session.get(Turn, turn_id)
                if row.status != "running":
                    break
            time.sleep(0.1)
        with app.app_context():
            row = db.session.get(Turn, turn_id)
            reply = db.session.get(Message, row.assistant_message_id)
            assert row.status == "completed"
            assert reply.parts == [{"type": "text", "text": "Answered after all."}]


def test_a_model_silent_for_longer_than_the_stale_limit_is_not_taken_for_dead(
    chat, fake_model, model_ids
):
    """A running step beats for its turn whether or not the model sends anything (a reasoning
    model may think for minutes before its first token); only a dead worker stops beating."""
    stale_limit = CHAT_SETTINGS["TURN_STALE_SECONDS"]
    fake_model.script(Reply.text("Thought it over.", delay=stale_limit + 2))
    turn = chat.run(chat.new_conversation(), "think hard", model_ids[0])
    assert turn["status"] == "completed", turn
    assert chat.reply(turn)["parts"] == [{"type": "text", "text": "Thought it over."}]
