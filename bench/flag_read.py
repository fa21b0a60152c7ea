"""A step's read of the cancel flags and its ``turn.started``, apart or in one round trip, in
process: the CPU of this thread for each way, alternating.

Run from the project root: ``.venv/bin/python -m bench.flag_read [--steps 2000] [--rounds 5]``.

Apart is how a step did it until the ninth round: the watcher's ``check_once`` (an MGET of
the watched turns' flags) as the step registered, then ``turn.started`` (the publish script)
in a round trip of its own. Together is ``workers.steps.read_flags``: both in one pipeline.
Each step is a fresh turn of its own, registered unread with a ``TurnWatcher`` (whose
cancel thread reads the flags once a second on its own thread, not counted here); the turns'
streams are deleted after each round. Each
figure is the median of ``--rounds`` rounds of ``--steps`` steps, after 50 warm-ups, rounds
of the two ways alternating.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

import redis

from bench.harness import machine, table
from core.turn import events
from core.turn.state import TurnState, key, load_pipelined_scripts
from tests.support.redis_server import RedisServer
from tools.api import Signal
from workers.watch import TurnWatcher

WARM_UPS = 50


def apart(watcher: TurnWatcher, state: TurnState) -> None:
    """The flags read, then ``turn.started`` published: two round trips."""
    watcher.check_once()
    events.turn_started(state, "reply")


def together(watcher: TurnWatcher, state: TurnState) -> None:
    """Both in one pipeline, as a step sends them now."""
    started = (events.TURN_STARTED, {"assistantMessageId": "reply"})
    watcher.check_once(lambda pipe: state.publish_in(pipe, *started))


def round_ms(client: redis.Redis, way, steps: int) -> float:
    """Return this thread's CPU µs a step over ``steps`` fresh turns read and announced."""
    watcher = TurnWatcher(client)
    states = [TurnState(client, f"bench-{uuid.uuid4().hex}") for _ in range(steps)]
    spent = 0.0
    for state in states:
        with watcher.watching(state.turn_id, Signal(), read=False):
            start = time.thread_time()
            way(watcher, state)
            spent += time.thread_time() - start
    watcher.close()
    client.delete(*[key(state.turn_id, "events") for state in states])
    return spent / steps * 1e6


def main() -> None:
    """Measure both ways and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = RedisServer().start()
    try:
        client = redis.Redis.from_url(server.url)
        load_pipelined_scripts(client)
        for way in (apart, together):
            round_ms(client, way, WARM_UPS)
        spent: dict[str, list[float]] = {"apart": [], "together": []}
        for _ in range(args.rounds):
            for way in (apart, together):
                spent[way.__name__].append(round_ms(client, way, args.steps))
    finally:
        server.stop()
    print(f"A step's flag read and turn.started, {args.rounds} rounds of {args.steps}; {machine()}")
    print()
    rows = [
        [name, f"{statistics.median(values):.1f}", " ".join(f"{v:.1f}" for v in values)]
        for name, values in spent.items()
    ]
    print(table(["way", "CPU µs a step, median", "each round"], rows))
    apart_us, together_us = (statistics.median(v) for v in spent.values())
    print()
    print(f"together ÷ apart: {together_us / apart_us:.2f}")


if __name__ == "__main__":
    main()
