"""What a thread's wake-up costs this machine: the CPU of a thread that sleeps and wakes, per
wake, against the idle time before it; with ``--redis``, also one MGET after each wake (the
cancel watcher's read of the flags, workers/watch.py, every second while turns are watched).

Run from the project root: ``.venv/bin/python -m bench.wake_cpu [--seconds 5] [--redis]``.

A turn's worker CPU counts every wake-up of its threads while the model answers (the watcher's
text batches, the consumer's loop, the task's read of the answer), not only the Python they
run: on a virtual machine a wake after a long idle costs far more than the same work done hot.
"""

from __future__ import annotations

import argparse
import threading
import time

from bench.harness import machine, table

PERIODS = (0.01, 0.1, 0.5)


def per_wake_us(period: float, seconds: float, work=None) -> float:
    """Return the process's CPU µs per wake of a thread waking every ``period`` s."""
    wakes = max(10, int(seconds / period))

    def run() -> None:
        pause = threading.Event()
        for _ in range(wakes):
            pause.wait(period)
            if work is not None:
                work()

    started = time.process_time()
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return (time.process_time() - started) * 1e6 / wakes


def hot_us(work, rounds: int = 2000) -> float:
    """Return the CPU µs of ``work`` run back to back."""
    started = time.process_time()
    for _ in range(rounds):
        work()
    return (time.process_time() - started) * 1e6 / rounds


def main(argv: list[str] | None = None) -> None:
    """Measure and print the CPU per wake for each period."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time spent on each period")
    parser.add_argument("--redis", action="store_true", help="an MGET after each wake, too")
    args = parser.parse_args(argv)
    rows = [[f"wake every {p} s", f"{per_wake_us(p, args.seconds):.0f}"] for p in PERIODS]
    if args.redis:
        import redis

        from tests.support.redis_server import RedisServer

        with RedisServer() as server:
            client = redis.Redis.from_url(server.url)

            def mget() -> None:
                client.mget(["lookout:turn:x:cancel"])

            rows.append(["MGET, back to back", f"{hot_us(mget):.0f}"])
            rows += [
                [f"wake every {p} s, then MGET", f"{per_wake_us(p, args.seconds, mget):.0f}"]
                for p in PERIODS
            ]
    print(f"CPU per wake-up; {machine()}")
    print()
    print(table(["figure", "CPU µs"], rows))


if __name__ == "__main__":
    main()
