"""A stream the hub serves costs its request two Redis round trips: the token's kept row
checked, and the stream counted open with the hub woken in one script (the wake-up was a round
trip of its own). It is counted open while it is served, and ends as before."""

from __future__ import annotations

import threading

import redis

from core.streams import open_stream_count
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
        self.stopping = threading.Event()

    def __enter__(self) -> Commands:
        self.monitor = redis.Redis.from_url(self.url).monitor()
        self.monitor.__enter__()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()
        return self

    def read(self) -> None:
        while not self.stopping.is_set():
            command = self.monitor.next_command()
            if command["client_type"] != "lua":
                self.seen.append(command["command"].split()[0].upper())

    def __exit__(self, *_exc) -> None:
        self.stopping.set()
        redis.Redis.from_url(self.url).echo("stop")  # the reader's last wait ends
        self.thread.join(10)
        self.monitor.__exit__()


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
    sent = [name for name in commands.seen if name not in ("XREAD", "ECHO")]
    assert sent == ["GET", "EVALSHA"]
    with app.app_context():
        assert open_stream_count(user.id) == 2
    publish(app, turn, "text.delta", {"text": "Hello"})
    publish(app, turn, "turn.completed", {})
    pump_until([first, stream], lambda: first.ended and stream.ended, 30, "no end")
    assert [e.name for e in stream.events] == ["text.delta", "turn.completed"]
    assert [e.name for e in first.events] == ["text.delta", "turn.completed"]
