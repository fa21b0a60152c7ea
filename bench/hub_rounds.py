"""The stream hub's CPU for one followed turn, in process: the stream handed to the hub, a round
for each batch of text a worker publishes, and the round of the turn's end.

Run from the project root: ``.venv/bin/python -m bench.hub_rounds [--turns 300] [--batches 10]
[--rounds 3]``.

bench/streams.py measures thousands of streams through gunicorn; this counts the web's own
thread CPU (``time.thread_time``) of what one stream of a 50-token turn costs the hub: ``follow``
(the request thread's hand-off: the stream counted open and the hub woken, one round trip),
then ``--batches`` rounds of one ``text.delta`` each (a worker publishes its text in batches of
about 50 ms: ten in a 0.5 s answer) and the round that reads ``turn.completed`` and ends the
stream. The publishing and the client's reading are not counted. The hub's thread is not
started: this thread runs its rounds.
Each figure is the fastest of ``--rounds`` rounds of ``--turns`` turns, after 30 warm-ups.
"""

from __future__ import annotations

import argparse
import socket
import tempfile
import time
import uuid
from pathlib import Path

import redis

from bench.harness import machine, make_bench_app, table
from core.streams import PROCESS_STREAMS, make_stream
from core.turn.state import TurnState
from tests.support.redis_server import RedisServer
from webapp.stream_hub import Follower, Hub

WARM_UPS = 30
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"


class RoundsHub(Hub):
    """The hub without its thread: the caller serves its rounds."""

    def run(self) -> None:
        return


def main() -> None:
    """Measure one followed turn's hub CPU and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-hub-"))
    with RedisServer() as redis_server:
        app = make_bench_app(folder, redis_server.url)
        publisher = redis.Redis.from_url(redis_server.url)
        with app.app_context():
            hub = RoundsHub(app)
            follow_ms, rounds_ms = [], []

            def one_turn(counted: bool) -> None:
                turn_id = uuid.uuid4().hex
                state = TurnState(publisher, turn_id)
                state.publish("turn.started", {})
                ours, theirs = socket.socketpair()
                stream = make_stream("bench", 1000, hub.control)  # counted open by ``follow``
                follower = Follower(turn_id, (0, 0), stream, ending=None)
                PROCESS_STREAMS.take()  # as the view's hand-off does
                started = time.thread_time()
                hub.follow(ours, HEAD, follower)
                followed = time.thread_time() - started
                spent = 0.0
                for batch in range(args.batches + 1):
                    started = time.thread_time()
                    hub.serve_round()
                    spent += time.thread_time() - started
                    if batch < args.batches:
                        state.publish("text.delta", {"text": "token " * 5})
                    else:
                        state.publish("turn.completed", {})
                started = time.thread_time()
                while not follower.gone:
                    hub.serve_round()
                spent += time.thread_time() - started
                theirs.close()
                if counted:
                    follow_ms.append(followed * 1000)
                    rounds_ms.append(spent * 1000)

            for _ in range(WARM_UPS):
                one_turn(False)
            best_follow, best_rounds = float("inf"), float("inf")
            for _ in range(args.rounds):
                follow_ms.clear()
                rounds_ms.clear()
                for _ in range(args.turns):
                    one_turn(True)
                best_follow = min(best_follow, sum(follow_ms) / args.turns)
                best_rounds = min(best_rounds, sum(rounds_ms) / args.turns)
    rows = [
        ["the hand-off (`follow`, the request thread)", f"{best_follow:.3f}"],
        [f"the hub's rounds ({args.batches} text batches, the end)", f"{best_rounds:.3f}"],
        ["a followed turn in all", f"{best_follow + best_rounds:.3f}"],
    ]
    print(f"Hub CPU per followed turn, fastest of {args.rounds} × {args.turns}; {machine()}")
    print()
    print(table(["part", "CPU ms"], rows))


if __name__ == "__main__":
    main()
