"""What more cores would give: a load run on chosen cores, and each process's share of its GIL.

Run from the project root, with ``bench.load``'s own flags after ``--``:
``.venv/bin/python -m bench.core_scaling [--code DIR] [--cpus 0] [--gil 30] -- --users 500``.

The run and its account are ``bench.load_parts``' (DIR's own ``bench.load``, watched from
outside), with two additions:

- ``--cpus 0`` (or ``0,1``): the run's whole tree (the clients, Redis, gunicorn, the workers and
  their parsers, the model and page servers) may run on those CPUs only, and so may each of the
  run's PostgreSQL backends from the moment the account first sees it (the server's other
  processes and other sessions' backends are left alone). DIR's ``bench.load`` reads the
  affinity as a deployment on that many cores would (a worker process per CPU where it does).
- ``--gil SECONDS``: ``--gil-after`` seconds into the window, ``py-spy record --gil
  --nonblocking`` samples each web and worker process (and each client process) at
  ``--rate`` Hz for SECONDS. A sample counts when one of the process's threads holds its GIL;
  the share of the GIL held is those samples ÷ (rate × seconds). One process runs Python on
  one core at a time, so the run's turns a minute ÷ a process's share is the rate at which
  that process would hold its GIL all the time: its ceiling, with the turns spread among the
  processes as in the run. The process's CPU over the same seconds is printed beside it, and
  the share of its threads' runnable time spent waiting for a core (``schedstat``): the
  GIL-held time also counts a holder waiting for a core, so on a busy machine the share
  overstates the Python the process runs. (The average thread's wait is no measure of the
  holder's: most of a process's runnable threads have just woken to wait for its GIL.)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.harness import table
from bench.load_parts import (
    Account,
    Seen,
    Watcher,
    account_report,
    completed_turns,
    parse_run_args,
    watch_run,
)


@dataclass
class GilShare:
    """One process's samples: its part, threads, CPU seconds, GIL-held samples, and the
    share of its threads' runnable time spent waiting for a core."""

    part: str
    pid: int
    threads: int
    seconds: float
    cpu: float
    held: int
    expected: int
    lagging: bool
    waiting: float = 0.0


class PinnedWatcher(Watcher):
    """The account's watcher; pins the run's PostgreSQL backends to ``cpus`` as it finds them,
    and samples the GIL of the web and worker processes once the window is open."""

    def __init__(self, root: psutil.Process, account: Account, interval: float,
                 args: argparse.Namespace) -> None:  # fmt: skip
        super().__init__(root, account, interval)
        self.args = args
        self.pinned: set[tuple] = set()
        self.shares: list[GilShare] = []
        self.sampler: threading.Thread | None = None
        self.py_spy_cpu = 0.0

    def sample_backends(self) -> None:
        super().sample_backends()
        if not self.args.cpus:
            return
        for key, seen in list(self.account.seen.items()):
            if seen.part == "postgres" and key not in self.pinned:
                try:
                    seen.process.cpu_affinity(self.args.cpus)
                except psutil.Error:
                    continue
                self.pinned.add(key)

    def watch_window(self, threads: int) -> None:
        opened = self.account.started is not None
        super().watch_window(threads)
        if not opened and self.account.started is not None and self.args.gil:
            self.sampler = threading.Thread(target=self.sample_gil, daemon=True)
            self.sampler.start()

    def sample_gil(self) -> None:
        """Run py-spy on every web and worker process at once; keep each one's share."""
        time.sleep(self.args.gil_after)
        targets = [
            seen
            for seen in self.account.seen.values()
            if seen.part in ("web", "client") or seen.part.startswith("worker ")
        ]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        shares: list[GilShare | None] = [None] * len(targets)
        threads = [
            threading.Thread(target=self.record, args=(seen, shares, index))
            for index, seen in enumerate(targets)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.py_spy_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        self.shares = [share for share in shares if share is not None]

    def record(self, seen: Seen, shares: list, index: int) -> None:
        """py-spy one process for ``--gil`` seconds; put its GilShare at ``index``."""
        process, args = seen.process, self.args
        part = seen.part
        try:
            if part == "web" and process.ppid() == self.root.pid:
                part = "web (gunicorn's arbiter)"
            threads = process.num_threads()
            cpu = sum(process.cpu_times()[:2])
        except psutil.Error:
            return
        ran, waited = run_queue_ns(process.pid)
        keep = None
        if args.gil_out:
            args.gil_out.mkdir(parents=True, exist_ok=True)
            keep = args.gil_out / f"{part.split()[0]}-{process.pid}.txt"
        held, lagging = gil_samples(args.py_spy, process.pid, args.rate, args.gil, keep)
        try:
            cpu = sum(process.cpu_times()[:2]) - cpu
        except psutil.Error:
            return
        ran_after, waited_after = run_queue_ns(process.pid)
        ran, waited = ran_after - ran, waited_after - waited
        shares[index] = GilShare(
            part, process.pid, threads, args.gil, cpu, held, args.rate * args.gil, lagging,
            waiting=waited / (ran + waited) if ran + waited > 0 else 0.0,
        )  # fmt: skip


def run_queue_ns(pid: int) -> tuple[int, int]:
    """Return the ns a process's live threads have run on a core and waited for one while
    runnable (each thread's ``/proc/PID/task/TID/schedstat``)."""
    ran = waited = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                on_core, in_queue, _ = stat.read().split()
        except (OSError, ValueError):
            continue
        ran, waited = ran + int(on_core), waited + int(in_queue)
    return ran, waited


def gil_samples(
    py_spy: str, pid: int, rate: int, seconds: int, keep: Path | None = None
) -> tuple[int, bool]:
    """Return how many of ``rate`` × ``seconds`` py-spy samples found a thread of ``pid``
    holding its GIL, and whether py-spy fell behind its rate; the samples' stacks (py-spy's
    raw format) are left in ``keep`` when given."""
    with tempfile.TemporaryDirectory() as directory:
        out = keep or Path(directory) / "samples.txt"
        spy = subprocess.run(
            [py_spy, "record", "--gil", "--nonblocking", "--format", "raw", "-r", str(rate),
             "-d", str(seconds), "-o", str(out), "-p", str(pid)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        lines = out.read_text().splitlines() if out.exists() else []
    held = sum(int(line.rsplit(" ", 1)[1]) for line in lines if line.strip())
    return held, "behind" in spy.stderr


def gil_report(shares: list[GilShare], per_minute: float, py_spy_cpu: float) -> str:
    """Return the GIL table: each process's cores, GIL-held share, GIL ms a turn, ceiling."""
    rows = []
    for share in sorted(shares, key=lambda s: (s.part, s.pid)):
        held = share.held / share.expected if share.expected else 0.0
        rows.append([
            f"{share.part} (pid {share.pid})", share.threads, f"{share.cpu / share.seconds:.2f}",
            f"{held:.2f}" + (" (py-spy behind)" if share.lagging else ""),
            f"{share.cpu / share.seconds * 60_000 / per_minute:.1f}",
            f"{held * 60_000 / per_minute:.1f}",
            f"{per_minute / held:,.0f}" if held else "–",
            f"{share.waiting:.2f}",
        ])  # fmt: skip
    header = ["process", "threads", "CPU, cores", "GIL held, share of the time",
              "CPU ms a turn", "GIL-held ms a turn", "ceiling: turns a minute at GIL 1.0",
              "runnable time waiting for a core"]  # fmt: skip
    return "\n".join([
        f"GIL, sampled by py-spy ({shares[0].expected if shares else 0} samples a process), the "
        f"run at {per_minute:.1f} turns a minute; py-spy itself took {py_spy_cpu:.1f} CPU s:",
        "",
        table(header, rows),
    ])  # fmt: skip


def cpu_list(text: str) -> list[int]:
    """Return the CPUs of ``0`` or ``0,1`` or ``0-3``."""
    cpus: list[int] = []
    for item in text.split(","):
        low, _, high = item.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def main() -> None:
    """Run ``bench.load`` on the CPUs asked, watch it, print its account and GIL shares."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpus", type=cpu_list, default=None, help="e.g. 0 or 0,1 or 0-3")
    parser.add_argument("--gil", type=int, default=0, help="seconds of py-spy sampling (0: none)")
    parser.add_argument("--gil-after", type=float, default=20.0, help="seconds into the window")
    parser.add_argument("--rate", type=int, default=25, help="py-spy's samples a second")
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy program")
    parser.add_argument("--gil-out", type=Path, help="a folder to keep the sampled stacks in")
    args, load_args, account = parse_run_args(parser)
    watchers: list[PinnedWatcher] = []

    def make_watcher(root: psutil.Process) -> PinnedWatcher:
        watchers.append(PinnedWatcher(root, account, args.interval, args))
        return watchers[0]

    pin = (lambda: os.sched_setaffinity(0, args.cpus)) if args.cpus else None
    output, returncode = watch_run(args.code.resolve(), load_args, make_watcher, preexec_fn=pin)
    print(output)
    cpus = args.cpus or sorted(os.sched_getaffinity(0))
    print(f"CPUs: {','.join(map(str, cpus))}; PostgreSQL backends pinned: "
          f"{len(watchers[0].pinned)}; load average at the end "
          f"{os.getloadavg()[0]:.1f}")  # fmt: skip
    print(account_report(output, returncode, account))
    watcher = watchers[0]
    if watcher.sampler is not None:
        watcher.sampler.join()
        found = completed_turns(output, account.users)
        if found and watcher.shares:
            print()
            print(gil_report(watcher.shares, found[1], watcher.py_spy_cpu))


if __name__ == "__main__":
    main()
