"""Event streams served by gunicorn as ./run starts it: one process follows hundreds of streams
without a thread each, resumes after Last-Event-ID, keeps each user's limit, drops a client that
stops reading, and refuses a stream past its cap with 503 and Retry-After."""

from __future__ import annotations

import json

import psutil
import pytest
import redis

from core.extensions import db
from core.models import ApiToken, Turn, User
from core.streams import open_stream_count
from core.turn.state import TurnState, key
from tests.support.processes import wait_until
from tests.support.raw_streams import RawStream, pump_until
from tests.support.turns import stored_turn
from tests.support.web_process import WebProcess


@pytest.fixture
def served(make_app, tmp_path):
    """Return a factory of (web, app, user, token): an app with the given settings served by
    gunicorn in its own process, as ./run serves it, and a user with an API token."""
    started = []

    def serve(**settings):
        app = make_app(**settings)
        with app.app_context():
            user = User.make("streamer", "password")
            db.session.add(user)
            db.session.flush()
            row, token = ApiToken.make(user, "streams")
            db.session.add(row)
            db.session.commit()
            db.session.refresh(user)
            db.session.expunge(user)
        web = WebProcess(app, tmp_path).start()
        started.append(web)
        return web, app, user, token

    yield serve
    RawStream.close_all()  # a test that failed before hanging up
    for web in started:
        web.stop()


def publish(app, turn_id: str, event: str, data: dict) -> str:
    """Append an event to the turn's stream as a worker does; return its id."""
    return TurnState(redis.Redis.from_url(app.config["REDIS_URL"]), turn_id).publish(event, data)


def web_threads(web: WebProcess) -> int:
    """How many threads gunicorn's worker process runs."""
    return psutil.Process(web.process.pid).children()[0].num_threads()


def test_one_web_process_follows_300_streams_without_a_thread_each(served):
    web, app, user, token = served(QUOTA_EVENT_STREAMS=1000)
    turns = [stored_turn(app, user.id, "running") for _ in range(10)]
    streams = [RawStream(web.url, turns[n % 10], token) for n in range(300)]
    pump_until(streams, lambda: all(s.kept_alive for s in streams), 60, "not every stream opened")

    assert web_threads(web) < 40  # gunicorn's 16 pool threads and a few of its own
    words = {turn: [f"{turn[:4]} word {n} " for n in range(5)] for turn in turns}
    for n in range(5):
        for turn in turns:
            publish(app, turn, "text.delta", {"text": words[turn][n]})
    for turn in turns:
        publish(app, turn, "turn.completed", {})
    pump_until(streams, lambda: all(s.ended for s in streams), 60, "not every stream ended")

    for number, stream in enumerate(streams):
        turn = turns[number % 10]
        names = [e.name for e in stream.events]
        assert names == ["text.delta"] * 5 + ["turn.completed"]
        assert [e.data["text"] for e in stream.events[:5]] == words[turn]
        assert all(e.id for e in stream.events)
    with app.app_context():
        wait_until(lambda: open_stream_count(user.id) == 0, 30, "the streams still count")


def test_a_stream_resumed_after_last_event_id_reads_only_later_events(served):
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    ids = [publish(app, turn, "text.delta", {"text": f"{n} "}) for n in range(3)]
    stream = RawStream(web.url, turn, token, last_event_id=ids[1])
    pump_until([stream], lambda: len(stream.events) == 1, 30, "the later event did not come")
    publish(app, turn, "turn.completed", {})
    pump_until([stream], lambda: stream.ended, 30, "the stream did not end")

    assert stream.status == 200
    assert stream.header["content-type"].startswith("text/event-stream")
    assert [(e.id, e.name) for e in stream.events][0] == (ids[2], "text.delta")
    assert [e.name for e in stream.events] == ["text.delta", "turn.completed"]


def test_text_with_line_breaks_quotes_and_non_ascii_arrives_as_the_worker_wrote_it(served):
    """The hub sends each event's stored JSON as it is, without decoding it again: a text
    with a line break, quotes and non-ASCII letters still reads back whole, one event."""
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    text = 'Line one\nline "two" \u2014 na\u00efve \u6771\u4eac \U0001f600\r\n\u2028end'
    publish(app, turn, "text.delta", {"text": text, "nested": {"list": [1, None]}})
    publish(app, turn, "turn.completed", {})
    stream = RawStream(web.url, turn, token)
    pump_until([stream], lambda: stream.ended, 30, "the stream did not end")

    assert [e.name for e in stream.events] == ["text.delta", "turn.completed"]
    assert stream.events[0].data == {"text": text, "nested": {"list": [1, None]}}


def test_a_stream_of_an_ended_turn_whose_events_expired_ends_with_its_stored_sentence(served):
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "failed", "The model stopped. Send the message again.")
    stream = RawStream(web.url, turn, token)
    pump_until([stream], lambda: stream.ended, 30, "the stream did not end")

    assert stream.body == (
        'event: turn.failed\ndata: {"error": "The model stopped. Send the message again."}\n\n'
    )


def test_a_turn_that_ends_without_events_after_its_stream_opened_ends_at_a_later_keep_alive(
    served,
):
    """The first round takes the turn's ending from the events view's own query (open here:
    a keep-alive, no query of the hub's); every later keep-alive reads the stored ending, so a
    turn whose events were lost after the stream opened still ends with its sentence."""
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    stream = RawStream(web.url, turn, token)
    pump_until([stream], lambda: stream.kept_alive, 30, "the stream did not open")
    with app.app_context():
        db.session.execute(
            db.update(Turn).where(Turn.id == turn).values(status="failed", error="Stopped.")
        )
        db.session.commit()
    pump_until([stream], lambda: stream.ended, 60, "the stream did not end at its keep-alive")

    assert stream.body.endswith('event: turn.failed\ndata: {"error": "Stopped."}\n\n')
    assert [(e.id, e.name) for e in stream.events] == [(None, "turn.failed")]


def test_a_users_stream_past_their_limit_closes_their_oldest(served):
    web, app, user, token = served(QUOTA_EVENT_STREAMS=2)
    turn = stored_turn(app, user.id, "running")
    streams = []
    for _ in range(3):
        streams.append(RawStream(web.url, turn, token))
        pump_until(streams, lambda: streams[-1].kept_alive, 30, "the stream did not open")
    pump_until(streams, lambda: streams[0].ended, 30, "the oldest stream was not closed")

    assert [e.name for e in streams[0].events] == ["stream.closed"]
    assert not streams[1].ended and not streams[2].ended
    with app.app_context():
        assert open_stream_count(user.id) == 2
    for stream in streams[1:]:
        stream.close()


def test_a_client_that_stops_reading_is_dropped_while_others_read_on(served):
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    stuck = RawStream(web.url, turn, token, receive_buffer=4096)
    reader = RawStream(web.url, turn, token)
    pump_until([stuck, reader], lambda: stuck.kept_alive and reader.kept_alive, 30, "no stream")
    client = redis.Redis.from_url(app.config["REDIS_URL"])
    delta = {"event": "text.delta", "data": json.dumps({"text": "x" * 2000})}

    def received() -> int:
        return reader.body.count("event: text.delta\n")

    def stuck_dropped() -> bool:
        with app.app_context():
            return open_stream_count(user.id) == 1

    # 8 MB in all: past the kernel's buffers on both sides and the hub's cap, for the client
    # that stops reading. Published 50 events (100 KB) at a time, each batch read by the other
    # client before the next: it is never further behind than the hub lets a client be, however
    # slowly this process runs on a busy machine, so only the stuck client can be dropped.
    sent = 0
    while sent < 4000:
        pipe = client.pipeline(transaction=False)
        for _ in range(50):
            pipe.xadd(key(turn, "events"), delta)
        pipe.execute()
        sent += 50
        pump_until([reader], lambda n=sent: received() == n, 60, "the reading stream fell behind")
    pump_until([reader], stuck_dropped, 60, "the stuck stream still counts")
    publish(app, turn, "turn.completed", {})
    pump_until([reader], lambda: reader.ended, 60, "the reading stream did not end")

    assert [e.name for e in reader.events].count("text.delta") == 4000
    assert reader.events[-1].name == "turn.completed"
    stuck.close()


def test_a_stream_past_the_process_cap_is_refused_with_503_and_retry_after(served):
    web, app, user, token = served(EVENT_STREAMS_PER_PROCESS=3)
    turn = stored_turn(app, user.id, "running")
    streams = [RawStream(web.url, turn, token) for _ in range(3)]
    pump_until(streams, lambda: all(s.kept_alive for s in streams), 30, "not every stream opened")

    refused = RawStream(web.url, turn, token)
    pump_until([refused], lambda: refused.ended, 30, "the refusal did not come")
    assert refused.status == 503
    assert int(refused.header["retry-after"]) >= 1
    assert "try again" in refused.body

    streams[0].close()

    def another_opens() -> bool:
        again = RawStream(web.url, turn, token)
        pump_until([again], lambda: again.status is not None, 30, "no answer")
        again.close()
        return again.status == 200

    wait_until(another_opens, 30, "a freed place was not given to a new stream", interval=0.2)
    for stream in streams[1:]:
        stream.close()
