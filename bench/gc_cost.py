"""The cycle collector's share of a worker's fetch turn: its collections by generation and the
CPU spent in them, once the worker is ready.

Run from the project root: ``.venv/bin/python -m bench.gc_cost [--turns 40] [--rounds 4]
[--threshold N]``.

One process as a threads-pool worker: a private Redis, a migrated SQLite database, the 50.7 KB
article served on 127.0.0.1, a fake model in a process of its own that asks for ``web_fetch``
of it and then answers at once. After a warm round, Celery's ``worker_ready`` is sent, so the
worker's own start-up hooks run as in a worker (whatever the commit's hooks do: the parsers
started, the reaper, and on a commit that has it the collector's freeze). Then, per round of
``--turns`` turns: each turn's step 0 (``run_turn_step.apply``) and its call's task, which runs
the step after it (``run_tool_call.apply``). Per turn: the collections of each generation, the
CPU spent in them (``gc.callbacks``, the collecting thread's CPU clock), and this process's CPU;
the objects a full collection walks once ready, and one full collection's CPU at the end.
``--threshold`` sets generation 0's threshold after the start-up hooks, to see whether raising
it pays.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from pathlib import Path

from celery.signals import worker_ready

from bench.call_step import stored_owner, task_app
from bench.harness import FakeModelProcess, machine, table
from bench.load import PageServer
from bench.step_cpu import stored_turns
from core.extensions import db
from core.models import ToolCall, Turn

PLUGINS = "bench.bench_plugins,tools.web_fetch"


class Collections:
    """The cycle collections in this process, by generation, and the CPU spent in them."""

    def __init__(self) -> None:
        self.counts = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self._started = 0.0
        gc.callbacks.append(self._called)

    def _called(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        generation = info["generation"]
        self.counts[generation] += 1
        self.seconds[generation] += time.thread_time() - self._started

    def taken(self) -> tuple[list[int], list[float]]:
        """Return (counts, seconds) so far, copies."""
        return list(self.counts), list(self.seconds)


def fetch_turns(owner: str, count: int) -> None:
    """Store ``count`` turns offered ``web_fetch`` and run each whole: step 0, then the call's
    task, which runs the step after it."""
    from workers.steps import run_turn_step
    from workers.toolcalls import run_tool_call

    for turn_id in stored_turns(owner, "fake/tooly", count, {"tools": ["web_fetch"]}):
        run_turn_step.apply(args=(turn_id, 0))
        call_id = db.session.scalar(db.select(ToolCall.call_id).filter_by(turn_id=turn_id))
        db.session.remove()
        run_tool_call.apply(args=(turn_id, call_id))
        db.session.remove()


def main(argv: list[str] | None = None) -> None:
    """Measure and print the collector's collections and CPU per fetch turn."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threshold", type=int, default=0, help="generation 0's threshold")
    args = parser.parse_args(argv)
    header = machine()
    folder = Path(tempfile.mkdtemp(prefix="lookout-bench-gccost-"))
    from tests.support.redis_server import RedisServer

    with RedisServer() as redis_server, PageServer(folder) as pages:
        fake_args = ("tool", "--tool", "web_fetch", "--arguments", json.dumps({"url": pages.url}))
        with FakeModelProcess(*fake_args) as fake:
            app = task_app(folder, redis_server.url, PLUGINS, ALLOW_PRIVATE_NETWORKS=True)
            with app.app_context():
                owner = stored_owner(fake.base_url)
                fetch_turns(owner, 3)  # warm: imports, plugins, connections
                worker_ready.send(sender=None)
                if args.threshold:
                    gc.set_threshold(args.threshold, *gc.get_threshold()[1:])
                walked = len(gc.get_objects())
                collections = Collections()
                counts, cpu_ms, gc_ms = [0, 0, 0], [], []
                for _ in range(args.rounds):
                    before, started = collections.taken(), time.process_time()
                    fetch_turns(owner, args.turns)
                    cpu_ms.append((time.process_time() - started) * 1000 / args.turns)
                    after = collections.taken()
                    for generation in range(3):
                        counts[generation] += after[0][generation] - before[0][generation]
                    gc_ms.append((sum(after[1]) - sum(before[1])) * 1000 / args.turns)
                started = time.thread_time()
                gc.collect()
                full_ms = (time.thread_time() - started) * 1000
                done = db.session.scalar(
                    db.select(db.func.count()).select_from(Turn).filter_by(status="completed")
                )
    n = args.turns * args.rounds
    rows = [[f"generation {g} collections", f"{counts[g] / n:.3f}"] for g in range(3)]
    rows.append(["collector CPU ms, mean of all", f"{statistics.mean(gc_ms):.3f}"])
    rows.append(["collector CPU ms, median (each round)", spread(gc_ms)])
    rows.append(["one full collection's CPU ms, at the end", f"{full_ms:.1f}"])
    rows.append(["process CPU ms, median (each round)", spread(cpu_ms)])
    rows.append(["objects a full collection walks once ready (the frozen left out)", f"{walked:,}"])
    thresholds = "/".join(str(t) for t in gc.get_threshold())
    print(f"A worker's fetch turn in one process, {args.rounds} rounds of {args.turns}, "
          f"thresholds {thresholds}, frozen {gc.get_freeze_count():,}; {header}")  # fmt: skip
    print()
    print(table(["per turn", "figure"], rows))
    print(f"\nturns completed: {done} (of {n + 3})")


def spread(values: list[float]) -> str:
    """Return the median of ``values`` and each of them."""
    each = " ".join(f"{value:.2f}" for value in values)
    return f"{statistics.median(values):.2f} ({each})"


if __name__ == "__main__":
    main()
