"""The stream hub's round read: a turn's events as a worker wrote them, under either Redis
protocol, from the hub's own connection."""

from __future__ import annotations

import json
import uuid

import pytest
import redis

from core.turn.state import TurnState, key
from webapp.stream_hub import Hub


class ThreadlessHub(Hub):
    """The hub without its thread: the test reads for it."""

    def run(self) -> None:
        return


@pytest.mark.parametrize("protocol", [2, 3])
def test_a_round_reads_each_turns_new_events_as_the_worker_wrote_them(
    make_app, redis_url, protocol
):
    app = make_app(REDIS_URL=f"{redis_url}?protocol={protocol}")
    turn_id = f"t-reads-{uuid.uuid4().hex}"
    hub = ThreadlessHub(app)
    writer = redis.Redis.from_url(app.config["REDIS_URL"])
    state = TurnState(writer, turn_id)
    first = state.publish("text.delta", {"text": 'Hé "quoted"\nline'}).encode()
    second = state.publish("turn.completed", {}).encode()
    events = key(turn_id, "events")

    read = hub.read([hub.control, events], ["0-0", "0-0"], None)

    assert read == {
        events: [
            (first, {b"event": b"text.delta", b"data": json.dumps(
                {"text": "Hé \"quoted\"\nline"}, ensure_ascii=False).encode()}),
            (second, {b"event": b"turn.completed", b"data": b"{}"}),
        ]
    }  # fmt: skip
    assert hub.read([hub.control, events], ["0-0", second.decode()], 10) == {}
    hub.reader.disconnect()
    hub.client.close()
    writer.close()
