"""CPU per streamed token in one process: the provider's read and parse, and the step's
publishing, without Celery or the database.

Run from the project root: ``.venv/bin/python -m bench.token_cpu [--tokens 200] [--rounds 10]
[--streams 1] [--profile] [--sends] [--read-interval 0.05]``.

Two fake models in processes of their own stream 1 and ``--tokens`` tokens over ``--seconds``
(each token its own HTTP chunk and read, as from a real server). Each round reads one reply of
each through ``OpenAICompatibleProvider.stream`` alone (``provider``), then through
``stream_reply`` with a private Redis (``step``: the provider, the text batches the watcher's
polls publish), counting the CPU time of the whole process (the watcher's thread included).
A token's cost is the long reply's CPU minus the short one's, over the tokens between.
``--streams N`` runs the step's replies N at once, each in a thread of its own as a worker's
turns run (one process, one watcher), and divides by N as well.
``--profile`` prints cProfile's top entries for the step's long replies instead (after one
round unprofiled: the imports and connections). ``--read-interval`` reads the model's stream at
most that often (the worker's: a text batch, ``workers.runtime.provider_client``).
``--sends`` adds each text send's CPU on the thread that made it (``TurnWatcher.text_held``,
``time.thread_time_ns`` around it) in all the step's replies: µs a call, calls a reply.
``--threads`` adds, per streamed token, each thread's CPU (its run time,
``/proc/self/task/TID/schedstat``, in ns) and wake-ups (voluntary context switches, from
``status``) in the step's replies: the stream's thread (``stream``; with ``--streams 1``: the
threads of several have ended when they are counted), ``text-publish``, ``cancel-watch``.
Counts, not time: steady however busy the machine is.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import threading
import time
from collections import Counter
from pathlib import Path

from bench.harness import FakeModelProcess, table
from tests.support import databases
from tests.support.redis_server import RedisServer
from workers.watch import TEXT_BATCH_SECONDS


def provider_cpu(base_url: str, read_interval: float) -> float:
    """Return the process CPU seconds one reply takes through the provider alone."""
    from workers.providers import OpenAICompatibleProvider

    with OpenAICompatibleProvider("bench", base_url, None, read_interval=read_interval) as provider:
        list(provider.stream("m", [{"role": "user", "content": "hi"}]))  # the connection
        started = time.process_time()
        for _ in provider.stream("m", [{"role": "user", "content": "hi"}]):
            pass
        return time.process_time() - started


class SendClock:
    """Wraps ``TurnWatcher.text_held`` to count its calls and their thread CPU (ns)."""

    def __init__(self) -> None:
        from workers.watch import TurnWatcher

        self.spent: list[int] = []
        held = TurnWatcher.text_held

        def timed(watcher) -> None:
            started = time.thread_time_ns()
            held(watcher)
            self.spent.append(time.thread_time_ns() - started)

        TurnWatcher.text_held = timed

    def line(self, replies: int) -> str:
        """Return the sends' figures as a line."""
        micro = [ns / 1e3 for ns in self.spent]
        return (
            f"text sends (text_held), thread CPU µs a call: median "
            f"{statistics.median(micro):.1f}, mean {statistics.fmean(micro):.1f}; "
            f"{len(micro) / replies:.1f} calls a reply"
        )


def thread_counts() -> Counter[tuple[str, str]]:
    """Return each thread's CPU ns and wake-ups so far, keyed by (its name, the figure); the
    threads of the step's streams are named ``stream``."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    counts: Counter[tuple[str, str]] = Counter()
    for task in Path("/proc/self/task").iterdir():
        name = names.get(int(task.name), "other")
        name = "stream" if name in ("MainThread", "step") else name
        try:
            counts[name, "cpu"] += int((task / "schedstat").read_text().split()[0])
            status = (task / "status").read_text()
        except (OSError, ValueError, IndexError):  # it ended meanwhile
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                counts[name, "wakes"] += int(line.split()[1])
    return counts


class StepRunner:
    """``stream_reply`` in an app context with a private Redis."""

    def __init__(self, redis_url: str, read_interval: float) -> None:
        import tempfile

        from webapp import create_app

        folder = tempfile.mkdtemp(prefix="token-cpu-")
        self.app = create_app(
            {
                "TESTING": True,
                "SECRET_KEY": "bench",
                "DATABASE_URL": f"sqlite:///{folder}/lookout.db",
                "REDIS_URL": redis_url,
            }
        )
        databases.migrate(self.app)  # the watcher's heartbeats write the turns table
        self.spent: Counter[tuple[str, str]] = Counter()
        self.read_interval = read_interval

    def close(self) -> None:
        """Stop the watcher's threads (a thread still reading a Redis that stopped logged a
        ConnectionError at exit); the cancel thread leaves when its read ends."""
        watcher = self.app.extensions.get("lookout_cancel_watcher")
        if watcher is not None:
            watcher.close()

    def cpu(self, base_url: str, turn: int, streams: int = 1) -> float:
        """Return the process CPU seconds ``streams`` replies at once take through
        ``stream_reply``; their threads' counts (``thread_counts``) are kept in ``spent``."""
        from workers.providers import OpenAICompatibleProvider

        model = OpenAICompatibleProvider("bench", base_url, None, read_interval=self.read_interval)
        with self.app.app_context(), model:
            list(model.stream("m", [{"role": "user", "content": "hi"}]))  # the connection
            threads = [
                threading.Thread(
                    target=self.reply,
                    args=(model, f"bench-{turn}-{n}-{base_url[-6:]}"),
                    name="step",
                )
                for n in range(streams if streams > 1 else 0)
            ]
            counts = thread_counts()
            started = time.process_time()
            if not threads:
                self.reply(model, f"bench-{turn}-{base_url[-6:]}")
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            spent = time.process_time() - started
            self.spent = thread_counts()
            self.spent.subtract(counts)
            return spent

    def reply(self, model, turn_id: str) -> None:
        """Stream one reply of ``model`` for the turn ``turn_id``, in an app context."""
        from core.turn.sources import Sources
        from core.turn.state import turn_state
        from workers.streaming import stream_reply

        with self.app.app_context():
            state = turn_state(turn_id)
            messages = [{"role": "user", "content": "hi"}]
            stream_reply(state, model, "m", messages, [], Sources(state, []))


def main(argv: list[str] | None = None) -> None:
    """Measure and print the CPU per streamed token, in process."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--threads", action="store_true", help="CPU and wake-ups by thread")
    parser.add_argument("--sends", action="store_true", help="each text send's thread CPU")
    parser.add_argument(
        "--read-interval",
        type=float,
        default=TEXT_BATCH_SECONDS,
        help="least seconds between two reads of the model's stream (the worker's: %(default)s)",
    )
    args = parser.parse_args(argv)
    short = FakeModelProcess("stream", "--tokens", "1", "--seconds", str(args.seconds))
    long = FakeModelProcess("stream", "--tokens", str(args.tokens), "--seconds", str(args.seconds))
    sends = SendClock() if args.sends else None
    with short, long, RedisServer() as redis:
        step = StepRunner(redis.url, args.read_interval)
        try:
            if args.profile:
                step.cpu(long.base_url, -1, args.streams)  # imports and connections
                profile = cProfile.Profile(time.process_time)
                profile.enable()
                for turn in range(args.rounds):
                    step.cpu(long.base_url, turn, args.streams)
                profile.disable()
                pstats.Stats(profile).sort_stats("tottime").print_stats(30)
                return
            figures: dict[str, list[float]] = {"provider": [], "step": []}
            threads: Counter[tuple[str, str]] = Counter()  # long replies' counts − short's
            for turn in range(args.rounds):
                one = provider_cpu(short.base_url, args.read_interval)
                many = provider_cpu(long.base_url, args.read_interval)
                figures["provider"].append((many - one) / (args.tokens - 1))
                one = step.cpu(short.base_url, turn, args.streams)
                threads.subtract(step.spent)
                many = step.cpu(long.base_url, turn, args.streams)
                threads.update(step.spent)
                figures["step"].append((many - one) / (args.tokens - 1) / args.streams)
        finally:
            step.close()
    for name, values in figures.items():
        micro = sorted(v * 1e6 for v in values)
        print(
            f"{name}: per streamed token, µs: median {statistics.median(micro):.1f}, "
            f"min {micro[0]:.1f}, max {micro[-1]:.1f} ({args.rounds} rounds)"
        )
    if sends is not None:
        print(sends.line(2 * args.rounds * args.streams))
    if args.threads:
        tokens = args.rounds * (args.tokens - 1) * args.streams
        names = sorted({name for name, _figure in threads})
        rows = [
            [
                name,
                f"{threads[name, 'cpu'] / 1e3 / tokens:.1f}",
                f"{threads[name, 'wakes'] / tokens:.3f}",
            ]
            for name in names
        ]
        print()
        print("the step's long replies less its short ones, by thread, per streamed token:")
        print(table(["thread", "CPU µs", "wake-ups"], rows))


if __name__ == "__main__":
    main()
