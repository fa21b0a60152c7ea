"""What an idle stack costs: each part's CPU a second with no user, as ``bench.load`` serves it.

Run from the project root: ``.venv/bin/python -m bench.idle_parts [--seconds 30]
[--worker-processes 2]``.

The stack of ``bench.load`` (PostgreSQL, a private Redis, Celery worker processes of the threads
pool with 250 threads each, gunicorn's two ``StreamingWorker`` processes), started, given a turn
to warm up, then left alone for ``--seconds``; ``bench.load_parts``' account counts every
process's CPU and context switches over that window. What it prints is the floor every turn
shares: the reaper's sweeps, the consumers' polls, the cancel watchers, heartbeats.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import psutil

from bench.harness import FakeModelProcess, machine, table
from bench.load import PageServer, make_stack, make_users, one_turn
from bench.load_parts import Account, Watcher, base_part
from core.config import worker_threads


def main() -> None:
    """Start the stack, warm it with one turn, count an idle window, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--worker-processes", type=int, default=2)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="lookout-idle-"))
    with (
        make_stack(directory, worker_threads(500, args.worker_processes)) as stack,
        PageServer(directory) as pages,
    ):
        model_args = ("tool", "--tool", "web_fetch", "--arguments",
                      json.dumps({"url": pages.url}), "--answer-seconds", "0.2")  # fmt: skip
        with FakeModelProcess(*model_args) as fake:
            clients = make_users(stack, 1)
            one_turn(clients[0], stack.add_provider(fake.base_url), 0.2, [])
            account = Account(users=1)
            watcher = Watcher(psutil.Process(os.getpid()), account, interval=0.5)
            watcher.sample()
            time.sleep(2)  # the warm turn's last bookkeeping
            watcher.sample()
            watcher.snapshot()
            account.started = time.monotonic()
            for seen in account.seen.values():
                seen.at_start_cpu = seen.cpu
            time.sleep(args.seconds)
            watcher.sample()
            watcher.snapshot()
            account.ended = time.monotonic()
    window = account.ended - account.started
    rows = []
    for part, (cpu, switches) in sorted(account.window_parts().items()):
        if base_part(part) != "client":
            rows.append([part, cpu * 1000 / window, f"{switches / window:.1f}"])
    print(f"Idle for {window:.0f} s after one turn; {machine()}\n")
    print(table(["part", "CPU ms a second", "context switches a second"], rows))


if __name__ == "__main__":
    main()
