"""A stream the hub serves costs its request two Redis round trips: the token's kept row
checked, and the stream counted open with the hub woken in one script (the wake-up was a round
trip of its own). It is counted open while it is served, ends as before, and stops counting with
the hub's next read, in its round trip (a pipeline of its own was one more)."""

from __future__ import annotations

import threading

import redis

from core.streams import open_stream_count
from tests.support.processes import wait_until
from tests.support.raw_streams import RawStream, pump_until
from tests.support.turns import stored_turn
from tests.webapp import test_stream_hub
from tests.webapp.test_stream_hub import publish

served = test_stream_hub.served  # the fixture: an app served by gunicorn as ./run serves it


class Commands:
    """The commands Redis runs for its clients (not those its scripts run), as MONITOR shows
    them, while it is entered."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.seen: list[str] = []
        self.by_client: list[tuple[str, str]] = []  # (the client's port, the command's name)

    def __enter__(self) -> Commands:
        self.stopper = redis.Redis.from_url(self.url)
        self.stopper.ping()  # connected before: its HELLO is not among the commands seen
        self.monitor = redis.Redis.from_url(self.url).monitor()
        self.monitor.__enter__()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()
        return self

    def read(self) -> None:
        while (command := self.monitor.next_command())["command"] != "ECHO stop":
            if command["client_type"] != "lua":
                name = command["command"].split()[0].upper()
                self.seen.append(name)
                self.by_client.append((command["client_port"], name))

    def __exit__(self, *_exc) -> None:
        self.stopper.echo("stop")  # the last command the reader reads
        self.thread.join(10)
        self.monitor.__exit__()
        self.stopper.close()


def test_a_hub_served_stream_is_counted_open_and_wakes_the_hub_in_one_round_trip(served):
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    first = RawStream(web.url, turn, token)  # the hub started, the scripts loaded
    pump_until([first], lambda: first.kept_alive, 30, "the first stream did not open")

    with Commands(app.config["REDIS_URL"]) as commands:
        stream = RawStream(web.url, turn, token)
        pump_until([stream], lambda: stream.kept_alive, 30, "the stream did not open")

    # The hub's own reads aside: the token's version, then the stream's open script, which
    # also wakes the hub (no XADD of its own).
    sent = [name for name in commands.seen if name != "XREAD"]
    assert sent == ["GET", "EVALSHA"]
    with app.app_context():
        assert open_stream_count(user.id) == 2
    publish(app, turn, "text.delta", {"text": "Hello"})
    publish(app, turn, "turn.completed", {})
    pump_until([first, stream], lambda: first.ended and stream.ended, 30, "no end")
    assert [e.name for e in stream.events] == ["text.delta", "turn.completed"]
    assert [e.name for e in first.events] == ["text.delta", "turn.completed"]


def test_an_ended_stream_stops_counting_with_the_hubs_next_read(served):
    web, app, user, token = served()
    turn = stored_turn(app, user.id, "running")
    stream = RawStream(web.url, turn, token)
    pump_until([stream], lambda: stream.kept_alive, 30, "the stream did not open")
    with app.app_context():
        assert open_stream_count(user.id) == 1

    with Commands(app.config["REDIS_URL"]) as commands:
        publish(app, turn, "turn.completed", {})
        pump_until([stream], lambda: stream.ended, 30, "the stream did not end")
        with app.app_context():
            wait_until(lambda: open_stream_count(user.id) == 0, 30, "the stream still counts")

    assert [e.name for e in stream.events] == ["turn.completed"]
    # Sent by the hub's reader, ahead of its next XREAD: no round trip of their own.
    hub = next(port for port, name in commands.by_client if name == "XREAD")
    names = [name for port, name in commands.by_client if port == hub]
    assert names[names.index("ZREM") :][:3] == ["ZREM", "DEL", "XREAD"]
    assert [port for port, name in commands.by_client if name in ("ZREM", "DEL")] == [hub] * 2
