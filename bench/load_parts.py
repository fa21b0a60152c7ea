"""Where a load run's CPU goes: every process of a ``bench.load`` run, by part, per turn.

Run from the project root, with ``bench.load``'s own flags after ``--``:
``.venv/bin/python -m bench.load_parts [--code DIR] -- --users 500``.

``--code DIR`` runs the ``bench.load`` of another checkout (with its own ``.venv``), so an old
commit's stack is measured by the same account: nothing here is imported by the run, it is
watched from outside. Every ``--interval`` seconds this process reads the CPU time (user and
system, ``/proc/PID/stat``) of the run's process tree (the load client, its private
redis-server, gunicorn, each worker process with its parser processes, the fake model, the page
server) and of the PostgreSQL backends whose client is one of those processes (the client's TCP
port in the backend's title, its socket among the process's files). A process that lives less
than ``--interval`` is missed; the context switches of every thread are read at the window's
two ends (threads that ended inside it are missed, and so are the switches of client processes
that ended inside it). The measured window is the one ``bench.load`` measures: from the moment
its user threads start to the moment they have all ended (read from the thread count of the
client processes: ``bench.load`` and the ``bench.load_users`` processes its
``--client-processes`` starts, all counted as the clients). At the window's two ends it also
reads the private Redis's ``INFO commandstats`` and the run's database's ``pg_stat_database``
row. The figures are divided by the turns the run completed (from its report).

Printed after the run's own report: CPU ms a turn by part, Lookout's parts added up (web,
workers, parsers, PostgreSQL backends, Redis), and what two cores would give if Lookout's parts
had them to themselves (2 × 60 s ÷ Lookout's CPU a turn); the CPU the rest of the machine took
in the window (other sessions); Redis commands and PostgreSQL transactions a turn.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import POSTGRES_SERVER, table  # noqa: E402
from tests.support import databases  # noqa: E402

# Lookout's own parts: what a deployment runs. The rest stands in for the users and the world.
LOOKOUT_PARTS = ("web", "worker", "parsers", "postgres", "redis")
BACKEND_TITLE = re.compile(r"postgres: .*? (\S+) 127\.0\.0\.1\((\d+)\)")
PG_COUNTERS = ("xact_commit", "xact_rollback", "tup_returned", "tup_fetched", "tup_inserted",
               "tup_updated", "tup_deleted")  # fmt: skip


def part_of(cmdline: list[str], ancestors: list[str]) -> str:
    """Return the part a process of the run's tree plays, from its command line and the parts
    of its ancestors (nearest first)."""
    text = " ".join(cmdline)
    for part in ancestors:
        if part.startswith("worker"):
            return f"parsers of {part}"
    if "bench.load_users" in text:
        return "client"
    if "redis-server" in text:
        return "redis"
    if "gunicorn" in text or "web" in ancestors:
        return "web"
    if "celery" in text and " worker" in text:
        return "worker"
    if "bench.fake_model_server" in text:
        return "model"
    if "http.server" in text:
        return "pages"
    return "other"


def base_part(part: str) -> str:
    """Return the kind of a part: "worker 2" and "parsers of worker 2" are a worker's."""
    return part.split()[0]


def backend_client_port(title: str) -> tuple[str, int] | None:
    """Return (database, client port) from a PostgreSQL backend's process title, or None."""
    match = BACKEND_TITLE.search(title)
    return (match.group(1), int(match.group(2))) if match else None


def completed_turns(report: str, users: int) -> tuple[int, float] | None:
    """Return (turns completed, turns a minute) from ``bench.load``'s table row for ``users``."""
    for line in report.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) > 3 and cells[0] == str(users) and "/" in cells[1]:
            return int(cells[1].split("/")[0]), float(cells[2])
    return None


def two_core_turns_a_minute(lookout_ms_a_turn: float, cores: int = 2) -> float:
    """Return the turns a minute ``cores`` would complete if Lookout's parts had them alone."""
    return cores * 60_000 / lookout_ms_a_turn if lookout_ms_a_turn > 0 else float("inf")


@dataclass
class Seen:
    """One process as sampled: its part, its CPU seconds, its context switches at the window's
    two ends."""

    process: psutil.Process
    part: str
    born_in_window: bool = False
    cpu: float = 0.0
    at_start_cpu: float | None = None
    switches: list[int] = field(default_factory=list)
    client: str = ""  # a PostgreSQL backend's: the part its client plays

    def in_window(self) -> tuple[float, int] | None:
        """Return its CPU seconds and context switches in the window; None if it ended first."""
        if self.at_start_cpu is None and not self.born_in_window:
            return None
        switches = self.switches[-1] - self.switches[0] if len(self.switches) == 2 else 0
        if self.born_in_window and len(self.switches) == 1:
            switches = self.switches[0]
        return self.cpu - (self.at_start_cpu or 0.0), switches


@dataclass
class Account:
    """The samples of one run: every process seen, and the window's two snapshots."""

    users: int
    seen: dict[tuple[int, float], Seen] = field(default_factory=dict)
    foreign: set[tuple[int, float]] = field(default_factory=set)
    started: float | None = None
    ended: float | None = None
    machine_busy: list[float] = field(default_factory=list)
    own_cpu: list[float] = field(default_factory=list)
    redis_port: int | None = None
    database: str | None = None
    redis_stats: list[dict] = field(default_factory=list)
    pg_stats: list[dict] = field(default_factory=list)
    workers: int = 0

    def window_parts(self) -> dict[str, tuple[float, int]]:
        """Return CPU seconds and context switches in the window, by part."""
        parts: dict[str, tuple[float, int]] = {}
        for seen in self.seen.values():
            measured = seen.in_window()
            if measured is not None:
                cpu, switches = parts.get(seen.part, (0.0, 0))
                parts[seen.part] = (cpu + measured[0], switches + measured[1])
        return parts


def machine_busy_seconds() -> float:
    """Return the CPU seconds every core of the machine spent busy since boot."""
    with open("/proc/stat") as stat:
        fields = [float(value) for value in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def context_switches(pid: int) -> int:
    """Return the context switches of every live thread of a process (each thread's own
    ``/proc/PID/task/TID/status``: the process's file counts its first thread only)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    if "ctxt_switches" in line:  # voluntary and not
                        total += int(line.split()[-1])
        except (OSError, ValueError):
            continue
    return total


def socket_owners(ports: set[int], pids: list[int]) -> dict[int, int]:
    """Return, of the local TCP ports given, which of ``pids`` holds each one's socket."""
    inodes: dict[str, int] = {}
    for table_path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table_path) as connections:
            next(connections)
            for line in connections:
                fields = line.split()
                port = int(fields[1].rsplit(":", 1)[1], 16)
                if port in ports:
                    inodes[f"socket:[{fields[9]}]"] = port
    owners = {}
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target in inodes:
                owners[inodes[target]] = pid
    return owners


class Watcher(threading.Thread):
    """Samples the run's processes every ``interval`` seconds until the run ends."""

    def __init__(self, root: psutil.Process, account: Account, interval: float) -> None:
        super().__init__(daemon=True)
        self.root, self.account, self.interval = root, account, interval
        self.stopping = threading.Event()
        self.threads_before = 0
        self.parts: dict[int, str] = {}  # the run's live processes' parts, by pid

    def run(self) -> None:
        while not self.stopping.wait(self.interval):
            if not self.root.is_running():
                break
            self.sample()
            self.watch_window(self.client_threads())

    def client_threads(self) -> int:
        """Return the threads of the run's client processes (``bench.load`` and any
        ``--client-processes`` it started), as last sampled."""
        threads = 0
        for seen in self.account.seen.values():
            if seen.part == "client" and seen.process.pid in self.parts:
                try:
                    threads += seen.process.num_threads()
                except psutil.NoSuchProcess:
                    continue
        return threads

    def watch_window(self, threads: int) -> None:
        """Open the window when the user threads start; close it when they have all ended."""
        account = self.account
        if account.started is None:
            if threads >= account.users:
                self.snapshot()
                account.started = time.monotonic()
                for seen in account.seen.values():
                    seen.at_start_cpu = seen.cpu
            else:
                self.threads_before = threads
        elif account.ended is None and threads <= self.threads_before + 1:
            self.snapshot()
            account.ended = time.monotonic()
            self.stopping.set()

    def snapshot(self) -> None:
        """Read the counters read once at each end of the window."""
        account = self.account
        account.machine_busy.append(machine_busy_seconds())
        times = psutil.Process().cpu_times()
        account.own_cpu.append(times.user + times.system)
        account.redis_stats.append(redis_commandstats(account.redis_port))
        account.pg_stats.append(database_counters(account.database))
        for seen in account.seen.values():
            if seen.process.is_running():
                seen.switches.append(context_switches(seen.process.pid))

    def sample(self) -> None:
        """Read the CPU time of the run's processes and of their PostgreSQL backends."""
        try:
            tree = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        self.parts = {}
        for process in tree:
            try:
                key = (process.pid, process.create_time())
                # "other" again: a child seen between its fork and its exec still had its
                # parent's command line
                if key not in self.account.seen or self.account.seen[key].part == "other":
                    self.first_sight(process, key)
                self.parts[process.pid] = self.account.seen[key].part
                self.update(key)
            except psutil.NoSuchProcess:
                continue
        self.sample_backends()

    def first_sight(self, process: psutil.Process, key: tuple) -> None:
        account = self.account
        if process.pid == self.root.pid:
            part = "client"
        else:
            ancestors = [self.parts.get(parent.pid, "") for parent in process.parents()]
            part = part_of(process.cmdline(), ancestors)
        if part == "redis" and account.redis_port is None:
            match = re.search(r":(\d+)", " ".join(process.cmdline()))
            account.redis_port = int(match.group(1)) if match else None
        if part == "worker":
            account.workers += 1
            part = f"worker {account.workers}"
        if key in account.seen:
            account.seen[key].part = part
        else:
            account.seen[key] = Seen(process, part, born_in_window=account.started is not None)

    def update(self, key: tuple) -> None:
        seen = self.account.seen[key]
        times = seen.process.cpu_times()
        seen.cpu = times.user + times.system

    def sample_backends(self) -> None:
        """Read the run's backends' CPU; a backend seen first is the run's when its client's
        port is held by one of the run's processes."""
        account = self.account
        new: dict[int, tuple] = {}
        for process in psutil.process_iter(["name", "cmdline", "create_time"]):
            if process.info["name"] != "postgres" or not process.info["cmdline"]:
                continue
            key = (process.pid, process.info["create_time"])
            if key in account.foreign:
                continue
            try:
                if key in account.seen:
                    self.update(key)
                    continue
            except psutil.NoSuchProcess:
                continue
            found = backend_client_port(" ".join(process.info["cmdline"]))
            if found is None:
                account.foreign.add(key)
            else:
                new[found[1]] = (key, process, found[0])
        if not new:
            return
        owners = socket_owners(set(new), list(self.parts))
        for port, (key, process, database) in new.items():
            if port not in owners:
                account.foreign.add(key)
                continue
            account.database = account.database or database
            account.seen[key] = Seen(
                process, "postgres", born_in_window=account.started is not None,
                client=self.parts.get(owners[port], "other"),
            )  # fmt: skip
            try:
                self.update(key)
            except psutil.NoSuchProcess:
                continue


def redis_commandstats(port: int | None) -> dict:
    """Return the private Redis's calls by command, its total commands processed, and the
    microseconds it spent in each command (as "name:usec")."""
    if port is None:
        return {}
    import redis

    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=5)
    try:
        stats = {}
        for name, values in client.info("commandstats").items():
            stats[name.removeprefix("cmdstat_")] = values["calls"]
            stats[name.removeprefix("cmdstat_") + ":usec"] = values["usec"]
        stats["(all)"] = client.info("stats")["total_commands_processed"]
        return stats
    except redis.RedisError:
        return {}
    finally:
        client.close()


def database_counters(database: str | None) -> dict:
    """Return the run's database's transaction and row counters (``pg_stat_database``) and
    each table's scans, written rows and rows read by sequential scans (``pg_stat_user_tables``,
    as "table:scans", "table:writes" and "table:seq_read")."""
    if database is None:
        return {}
    import psycopg

    server = databases.libpq_url(os.environ.get("TEST_POSTGRES_URL") or POSTGRES_SERVER)
    try:
        with psycopg.connect(server, autocommit=True, connect_timeout=5) as connection:
            row = connection.execute(
                f"SELECT {', '.join(PG_COUNTERS)} FROM pg_stat_database WHERE datname = %s",
                (database,),
            ).fetchone()
        url = psycopg.conninfo.make_conninfo(server, dbname=database)
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as connection:
            tables = connection.execute(
                "SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0),"
                " n_tup_ins + n_tup_upd + n_tup_del, seq_tup_read FROM pg_stat_user_tables"
            ).fetchall()
    except psycopg.Error:
        return {}
    counters = dict(zip(PG_COUNTERS, row, strict=True)) if row else {}
    for name, scans, writes, seq_read in tables:
        counters[f"{name}:scans"], counters[f"{name}:writes"] = scans, writes
        counters[f"{name}:seq_read"] = seq_read
    return counters


def report(account: Account, turns: int, per_minute: float, own_cpu: float) -> str:
    """Return the account's tables: CPU by part a turn, the two-core arithmetic, the counts."""
    window = (account.ended or time.monotonic()) - (account.started or 0.0)
    parts = account.window_parts()
    clients: dict[str, float] = {}
    for seen in account.seen.values():
        measured = seen.in_window()
        if seen.part == "postgres" and measured is not None:
            clients[seen.client] = clients.get(seen.client, 0.0) + measured[0]
    total = sum(cpu for cpu, _ in parts.values())
    rows = []
    order = [*LOOKOUT_PARTS, "model", "pages", "client", "other"]
    for part in sorted(parts, key=lambda p: (order.index(base_part(p)), p)):
        cpu, switches = parts[part]
        name = part
        if part == "postgres":
            name += " (for " + ", ".join(f"{c} {s * 1000 / turns:.1f}" for c, s in
                                         sorted(clients.items())) + " ms)"  # fmt: skip
        rows.append([name, cpu, cpu * 1000 / turns, f"{cpu / window:.2f}",
                     f"{switches / turns:.0f}" if switches >= 0 else "–"])  # fmt: skip
    lookout = sum(cpu for part, (cpu, _) in parts.items() if base_part(part) in LOOKOUT_PARTS)
    lookout_ms = lookout * 1000 / turns
    rows.append(["**Lookout's parts**", lookout, lookout_ms, f"{lookout / window:.2f}", ""])
    rows.append(["all the run's parts", total, total * 1000 / turns, f"{total / window:.2f}", ""])
    rows.append(["this account", own_cpu, own_cpu * 1000 / turns, f"{own_cpu / window:.2f}", ""])
    if len(account.machine_busy) == 2:
        busy = account.machine_busy[1] - account.machine_busy[0]
        rest = busy - total - own_cpu
        rows.append(["the rest of the machine", rest, rest * 1000 / turns,
                     f"{rest / window:.2f}", ""])  # fmt: skip
        rows.append(["idle", 2 * window - busy, "", f"{2 - busy / window:.2f}", ""])
    header = ["part", "CPU s in the window", "CPU ms a turn", "cores", "context switches a turn"]
    lines = [
        f"Account: {turns} turns completed, {per_minute:.1f} a minute, window {window:.1f} s;",
        "",
        table(header, rows),
        "",
        f"Lookout's parts ({', '.join(LOOKOUT_PARTS)}): {lookout_ms:.1f} ms a turn; with both "
        f"cores to themselves: 2 × 60,000 ÷ {lookout_ms:.1f} = "
        f"**{two_core_turns_a_minute(lookout_ms):.0f} turns a minute**",
    ]
    if len(account.redis_stats) == 2 and account.redis_stats[0]:
        before, after = account.redis_stats
        calls = {name: after[name] - before.get(name, 0) for name in after}
        counts = sorted((-n, name) for name, n in calls.items() if ":" not in name)[:12]
        spent = sorted((-n, name) for name, n in calls.items() if name.endswith(":usec"))[:6]
        lines += ["", "Redis commands a turn: " + ", ".join(
            f"{name} {-n / turns:.1f}" for n, name in counts if n)]  # fmt: skip
        lines += ["", "Redis's time in commands, µs a turn: " + ", ".join(
            f"{name.split(':')[0]} {-n / turns:.0f}" for n, name in spent if n)]  # fmt: skip
    if len(account.pg_stats) == 2 and account.pg_stats[0]:
        before, after = account.pg_stats
        lines += [
            "",
            f"PostgreSQL ({account.database}) a turn: "
            + ", ".join(
                f"{name} {(after[name] - before[name]) / turns:.1f}" for name in PG_COUNTERS
            ),
        ]
        lines += ["", "Tables, scans / rows written a turn: " + table_counts(before, after, turns)]
    return "\n".join(lines)


def table_counts(before: dict, after: dict, turns: int) -> str:
    """Return each table's scans, rows written and rows read by sequential scans a turn, the
    most scanned first."""
    counts = []
    for name in {key.split(":")[0] for key in after if ":" in key}:
        scans, writes, seq_read = (
            (after[f"{name}:{n}"] - before.get(f"{name}:{n}", 0)) / turns
            for n in ("scans", "writes", "seq_read")
        )
        counts.append((scans, writes, seq_read, name))
    return ", ".join(
        f"{name} {scans:.1f} / {writes:.1f}" + (f" ({seq:.0f} rows seq. read)" if seq >= 1 else "")
        for scans, writes, seq, name in sorted(counts, reverse=True)
        if scans or writes
    )


def users_of(load_args: list[str]) -> int | None:
    """Return the one user count of ``bench.load``'s flags, or None when there is not one."""
    users_at = load_args.index("--users") if "--users" in load_args else -1
    if users_at < 0 or len(load_args) < users_at + 2:
        return None
    return int(load_args[users_at + 1])


def watch_run(
    code: Path,
    load_args: list[str],
    make_watcher: Callable[[psutil.Process], Watcher],
    **popen: Any,
) -> tuple[str, int]:
    """Run ``code``'s ``bench.load`` with ``load_args``, watched by the watcher
    ``make_watcher`` returns for its process; return its output and exit status."""
    run = subprocess.Popen([str(code / ".venv" / "bin" / "python"), "-m", "bench.load",
                            *load_args], cwd=code, stdout=subprocess.PIPE, text=True,
                           **popen)  # fmt: skip
    watcher = make_watcher(psutil.Process(run.pid))
    watcher.start()
    output = run.stdout.read()
    run.wait()
    watcher.stopping.set()
    watcher.join()
    return output, run.returncode


def account_report(output: str, returncode: int, account: Account) -> str:
    """Return the account of a finished run, or exit when the run gave none."""
    found = completed_turns(output, account.users)
    if returncode != 0 or found is None or account.started is None:
        raise SystemExit(f"bench.load exited {returncode}; no account to give")
    own = account.own_cpu[-1] - account.own_cpu[0] if len(account.own_cpu) == 2 else 0.0
    return report(account, found[0], found[1], own)


def parse_run_args(
    parser: argparse.ArgumentParser,
) -> tuple[argparse.Namespace, list[str], Account]:
    """Add ``--code``, ``--interval`` and ``bench.load``'s flags to ``parser``; return the
    parsed flags, the load's own, and an empty account for its one user count."""
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("load_args", nargs=argparse.REMAINDER, help="-- then bench.load's flags")
    args = parser.parse_args()
    load_args = [arg for arg in args.load_args if arg != "--"]
    users = users_of(load_args)
    if users is None:
        parser.error("give bench.load's --users with one count: -- --users 500")
    return args, load_args, Account(users=users)


def main() -> None:
    """Run ``bench.load`` (from ``--code``), watch its processes, print the account."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args, load_args, account = parse_run_args(parser)
    output, returncode = watch_run(
        args.code.resolve(), load_args, lambda root: Watcher(root, account, args.interval)
    )
    print(output)
    print(account_report(output, returncode, account))


if __name__ == "__main__":
    main()
