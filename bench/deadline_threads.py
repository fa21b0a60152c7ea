"""What tool-call deadlines cost: CPU per signal armed and ended, in process, and the worker's
threads while many tool-call turns run at once.

Run from the project root: ``.venv/bin/python -m bench.deadline_threads [--signals 2000]
[--turns 200] [--database sqlite|postgres]``.

In process (``tools.cancellation.Signal``), each pattern ``--signals`` times, CPU of the whole
process (``time.process_time``: a timer thread's start counts) per pattern:

- ``budget``: ``Signal.after(35)``, ``on_cancel``, undo, ``cancel()``, as a download's time
  budget (``tools.bodies.time_budget``) does;
- ``call``: ``Signal.after(35)``, ``on_cancel``, undo, never cancelled, as a tool call's
  deadline (``workers.toolcalls.run_in_context``) ends; the threads alive after are counted.

Then one stack (bench/harness.py, one worker process with a thread per turn) runs ``--turns``
turns at once, each calling the ``noop`` tool (bench/bench_plugins.py) and then streaming 50
tokens over 2 s; the worker's threads (``/proc/PID/task``) are counted every 20 ms: before,
at the peak, and 5 s after the last turn ended.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.harness import FakeModelProcess, Stack, machine, table
from tests.support.chat import ChatClient
from tools.api import Signal


def budget() -> None:
    """A download's budget: armed, its callback undone, ended."""
    signal = Signal.after(35)
    signal.on_cancel(lambda: None)()
    signal.cancel()


def call() -> None:
    """A tool call's deadline: armed, its callback undone, left to its deadline."""
    Signal.after(35).on_cancel(lambda: None)()


def per_signal_us(pattern, count: int) -> float:
    """Return the process's CPU µs per run of ``pattern``."""
    started = time.process_time()
    for _ in range(count):
        pattern()
    return (time.process_time() - started) * 1e6 / count


def task_count(pid: int) -> int:
    """Return how many threads ``pid`` has now."""
    return len(os.listdir(f"/proc/{pid}/task"))


def worker_threads(turns: int, database: str) -> tuple[int, int, int]:
    """Return the worker's threads before, at the peak of and 5 s after ``turns`` tool-call
    turns at once."""
    stack = Stack(database=database, concurrency=turns)
    model_args = ("tool", "--tool", "noop", "--answer-tokens", "50", "--answer-seconds", "2")
    with stack, FakeModelProcess(*model_args) as fake:
        model = stack.add_provider(fake.base_url)
        owner = stack.chat()
        warm = owner.start(owner.new_conversation(), "hi", model, generation={"tools": ["noop"]})
        owner.wait(warm["turn"]["id"], timeout=60)
        users = [stack.chat() for _ in range(turns)]  # a user's answers at once are limited
        conversations = [(user, user.new_conversation()) for user in users]
        pid = stack.worker.process.pid
        before = peak = task_count(pid)

        def one(user: ChatClient, conversation: str) -> None:
            started = user.start(conversation, "hi", model, generation={"tools": ["noop"]})
            assert user.wait(started["turn"]["id"], timeout=120)["status"] == "completed"

        with ThreadPoolExecutor(32) as pool:
            running = [pool.submit(one, *pair) for pair in conversations]
            while not all(future.done() for future in running):
                peak = max(peak, task_count(pid))
                time.sleep(0.02)
            for future in running:
                future.result()
        time.sleep(5)
        return before, peak, task_count(pid)


def main() -> None:
    """Measure both and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--signals", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    args = parser.parse_args()
    print(f"Deadlines; {machine()}")
    print()
    threads = threading.active_count()
    rows = [[name, per_signal_us(pattern, args.signals)] for name, pattern in [
        ("budget (armed, undone, cancelled)", budget),
        ("call (armed, undone, left to its deadline)", call),
    ]]  # fmt: skip
    print(table([f"pattern, {args.signals} times", "process CPU µs each"], rows))
    print(f"threads alive after: {threading.active_count() - threads} more than before")
    print()
    if args.turns:
        before, peak, after = worker_threads(args.turns, args.database)
        print(table([f"worker threads, {args.turns} noop tool-call turns at once",
                     "before", "peak", "5 s after"], [["", before, peak, after]]))  # fmt: skip


if __name__ == "__main__":
    main()
