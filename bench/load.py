"""Load: N simulated users chatting with tools through the real web app, as production runs it.

Run from the project root:
``.venv/bin/python -m bench.load [--users 10 100 500] [--minutes 1] [--think 1]
[--database postgres|sqlite] [--worker-threads N] [--worker-processes N]
[--client-processes N] [--web-processes N] [--setting NAME=VALUE ...]``.

``--worker-threads`` (fewer threads than users) and ``--setting`` (e.g. a short
``TURN_STALE_SECONDS``) make a queue build with fewer users, as 500 users do with the defaults.

For each N, a fresh stack (bench/harness.py): a private Redis, a database, Celery worker
processes as ./run starts them (``--worker-processes``, default one per CPU this process may use;
``--worker-processes 1`` is the single process ./run started before; threads pool, a thread for
every user in all, shared among the processes), and gunicorn as ./run serves it (2 processes of
``webapp.stream_worker.StreamingWorker`` with 64 threads each, ``--web-processes`` for more, as
a deployment with more cores would run; the event streams followed
without a thread each; ``--web-worker-class gthread`` serves as ./run did before issue 29, with
threads enough for every user's open event stream and its requests), with metrics on (a
multiprocess folder and a token, as an operator would run it). N users, each with an account and
an API token of their own, start one after another over ``--ramp`` seconds, then loop until
``--minutes`` have passed: a new conversation, a message, its event stream read to the end, a
pause of about ``--think`` seconds. Every turn is two model steps and a web_fetch tool call: the
fake model (a process of its own) asks for a page served by a static server on 127.0.0.1
(another process), then streams its answer for ``--answer-seconds``. Everything listens on
127.0.0.1.

Reported per N: turns completed per minute; the time Lookout added to a turn (POST sent to
stream ended, less the model's scripted answer time), p50 and p95; how long POSTs took;
errors by kind; the resident memory of the web processes and of the workers (with their parser
processes), idle and at their peak; the turns /metrics counted, as a cross-check; the tasks the
worker took, by name, and what the reaper did (its sends again among them). The
clients run in this process (a thread a user) and share the machine's cores with everything
they measure. ``--client-processes N`` spreads the users evenly over N processes
(bench/load_users.py), the clients' CPU being all of theirs: the default stays 1, as every round
so far was measured on 2 cores, where a second client process only takes a share of a core
from Lookout; on a machine with more cores one process's GIL binds the run at about 1,600-1,900
turns a minute (the eighth round), so give it a process for every 250 users or so.

For the CPU of every part (PostgreSQL's backends, Redis, each worker process and its parser
processes, the model and page servers, the clients) a turn, and for another commit's stack
counted the same way, run it under ``bench.load_parts``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import psutil
import requests

from bench.harness import (
    ROOT,
    FakeModelProcess,
    Stack,
    machine,
    process_tree_cpu_seconds,
    summary,
    table,
)
from bench.load_users import one_turn, run_users
from core import broker
from core.config import usable_cpus, worker_threads
from core.extensions import db
from core.models import ApiToken, User
from tests.support.chat import ChatClient
from tests.support.processes import free_port, start_process, stop_process, wait_for_port
from webapp import queue

PAGE = ROOT / "bench" / "pages" / "html" / "bbc-1.html.gz"
METRICS_TOKEN = "load-" + uuid.uuid4().hex
WEB_WORKER_CLASSES = {
    "streaming": "webapp.stream_worker.StreamingWorker",
    "gthread": "gthread",
}
STREAMING_THREADS = 64  # ./run's --threads
WEB_PROCESSES = 2  # ./run's --workers
# The tasks of a turn: here two steps and a web_fetch call, three in all.
TURN_TASKS = (broker.RUN_TURN_STEP, broker.RUN_TOOL_CALL)


class PageServer:
    """A static page on 127.0.0.1, served by ``python -m http.server`` in its own process."""

    def __init__(self, directory: Path, page: Path = PAGE) -> None:
        self.directory = directory / "pages"
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "page.html").write_bytes(gzip.decompress(page.read_bytes()))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/page.html"
        self.log = directory / "pages.log"
        self.process = None

    def __enter__(self) -> PageServer:
        args = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                str(self.directory), str(self.port)]  # fmt: skip
        self.process = start_process(args, self.log)
        wait_for_port("127.0.0.1", self.port, timeout=30)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            stop_process(self.process, timeout=5)


class MemorySampler(threading.Thread):
    """Samples the web and worker processes' memory every half second; keeps each peak."""

    def __init__(self, stack: Stack) -> None:
        super().__init__(daemon=True)
        self.stack = stack
        self.web_peak = 0.0
        self.worker_peak = 0.0
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(0.5):
            self.web_peak = max(self.web_peak, self.stack.web_rss_mib() or 0.0)
            self.worker_peak = max(self.worker_peak, self.stack.worker_rss_mib())


def make_users(stack: Stack, count: int) -> list[ChatClient]:
    """Return a ChatClient for each of ``count`` new users, each with its own API token.

    The password hash is made once and shared: hashing is slow on purpose, and no user here
    ever signs in with a password."""
    clients = []
    with stack.app.app_context():
        password_hash = User.make("load-template", "password").password_hash
        for _ in range(count):
            user = User(name=f"load-{uuid.uuid4().hex[:10]}", roles=["user"], disabled=False)
            user.password_hash = password_hash
            db.session.add(user)
            row, token = ApiToken.make(user, "load")
            db.session.add(row)
            clients.append(ChatClient(stack.web.url, token))
        db.session.commit()
    return clients


def cpu_seconds(stack: Stack, fake: FakeModelProcess, pages: PageServer) -> dict[str, float]:
    """Return the CPU seconds each part used so far: web, workers (with their parser processes),
    model, page server, and this process (the users)."""
    times = psutil.Process().cpu_times()
    return {
        "web": stack.web_cpu_seconds() or 0.0,
        "worker": stack.worker_cpu_seconds(),
        "model": process_tree_cpu_seconds(fake.process.pid),
        "pages": process_tree_cpu_seconds(pages.process.pid),
        "users": times.user + times.system,
    }


def tasks_taken(stack: Stack) -> Counter:
    """Return how many tasks the workers took, by task name (a retry or a duplicate is one
    more), as their own statistics count them."""
    with stack.app.app_context():
        stats = queue.get_client().control.inspect(timeout=10).stats() or {}
    taken: Counter = Counter()
    for worker in stats.values():
        taken.update(worker.get("total", {}))
    return taken


def scrape_reaper(stack: Stack) -> dict[str, float]:
    """Return /metrics' count of what the reaper did, by action."""
    return scrape(stack, "lookout_reaper_actions", "action")


def scrape_turns(stack: Stack) -> dict[str, float]:
    """Return /metrics' count of ended turns by outcome."""
    return scrape(stack, "lookout_turns_finished", "outcome")


def scrape(stack: Stack, family_name: str, label: str) -> dict[str, float]:
    """Return a counter of /metrics by the value of its one label."""
    from prometheus_client.parser import text_string_to_metric_families

    answer = requests.get(
        f"{stack.web.url}/metrics",
        headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
        timeout=30,
    )
    counts = {}
    for family in text_string_to_metric_families(answer.text):
        if family.name == family_name:
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    counts[sample.labels[label]] = sample.value
    return counts


def parsed_settings(pairs: list[str]) -> dict:
    """Return NAME=VALUE pairs as settings, each value read by its setting's own parser."""
    from core.config import SETTINGS

    parsers = {setting.name: setting.parse for setting in SETTINGS}
    settings = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        settings[name] = parsers[name](name, value)
    return settings


def make_stack(
    directory: Path,
    split: list[int],
    database: str = "postgres",
    web_threads: int = STREAMING_THREADS,
    web_worker_class: str = WEB_WORKER_CLASSES["streaming"],
    settings: dict | None = None,
    web_processes: int = WEB_PROCESSES,
) -> Stack:
    """Return the stack a round runs on (not started): worker processes of ``split`` threads,
    gunicorn's ``web_processes``, metrics on in ``directory``, the web_fetch plugin,
    ``settings`` on top."""
    return Stack(
        database=database,
        worker_threads=split,
        plugins="tools.web_fetch",
        settings={
            "PROMETHEUS_MULTIPROC_DIR": str(directory / "metrics"),
            "METRICS_TOKEN": METRICS_TOKEN,
            "LOG_LEVEL": "WARNING",
            **(settings or {}),
        },
        web="gunicorn",
        web_threads=web_threads,
        web_worker_class=web_worker_class,
        web_processes=web_processes,
    )


def run_once(users: int, args: argparse.Namespace) -> dict:
    """Run one round with ``users`` users and return its figures."""
    if args.web_worker_class == "gthread":
        threads_per_web = -(-users // args.web_processes) + 32  # every open stream, plus the POSTs
    else:
        threads_per_web = STREAMING_THREADS  # streams hold no thread: as ./run serves it
    directory = Path(tempfile.mkdtemp(prefix="lookout-load-"))
    split = worker_threads(args.worker_threads or max(16, users), args.worker_processes)
    stack = make_stack(
        directory,
        split,
        database=args.database,
        web_threads=threads_per_web,
        web_worker_class=WEB_WORKER_CLASSES[args.web_worker_class],
        settings=parsed_settings(args.setting),
        web_processes=args.web_processes,
    )
    with stack, PageServer(directory) as pages:
        model_args = (
            "tool", "--tool", "web_fetch", "--arguments", json.dumps({"url": pages.url}),
            "--answer-tokens", "20", "--answer-seconds", str(args.answer_seconds),
        )  # fmt: skip
        with FakeModelProcess(*model_args) as fake:
            model = stack.add_provider(fake.base_url)
            clients = make_users(stack, users)
            warm: list[dict] = []
            one_turn(clients[0], model, args.answer_seconds, warm)
            idle_web, idle_worker = stack.web_rss_mib() or 0.0, stack.worker_rss_mib()
            sampler = MemorySampler(stack)
            sampler.start()
            cpu_before = cpu_seconds(stack, fake, pages)
            load_before = os.getloadavg()[0]
            began = time.perf_counter()
            start = time.monotonic()
            job = {
                "users": [
                    [chat.base_url, chat.token, start + args.ramp * i / users]
                    for i, chat in enumerate(clients)
                ],
                "model": model,
                "stop_at": start + args.ramp + args.minutes * 60,
                "think": args.think,
                "answer_seconds": args.answer_seconds,
            }
            results, clients_cpu = run_users(job, args.client_processes)
            wall = time.perf_counter() - began
            cpu_after = cpu_seconds(stack, fake, pages)
            cpu_after["users"] += clients_cpu
            load_after = os.getloadavg()[0]
            sampler.stopping.set()
            sampler.join()
            counted = scrape_turns(stack)
            reaped = scrape_reaper(stack)
            taken = tasks_taken(stack)
    shutil.rmtree(directory, ignore_errors=True)
    turns = [turn for out in results for turn in out]
    done = [turn for turn in turns if "error" not in turn]
    errors = Counter(turn["error"] for turn in turns if "error" in turn)
    return {
        "users": users,
        "worker_threads": split,
        "web_threads": threads_per_web,
        "turns": len(turns),
        "completed": len(done),
        "per_minute": len(done) / wall * 60,
        "added": [turn["added_ms"] for turn in done],
        "post": [turn["post_ms"] for turn in done],
        "errors": errors,
        "web_idle": idle_web,
        "web_peak": sampler.web_peak,
        "worker_idle": idle_worker,
        "worker_peak": sampler.worker_peak,
        "wall": wall,
        "metrics": counted,
        "reaper": reaped,
        "taken": taken,
        "cpu_ms": {
            part: (cpu_after[part] - cpu_before[part]) * 1000 / max(1, len(turns))
            for part in cpu_after
        },
        "load": (load_before, load_after),
    }


def report(rounds: list[dict], args: argparse.Namespace) -> str:
    """Return the Markdown table of every round, with the configuration."""
    header = [
        "users", "turns completed / started", "turns per minute", "added p50 ms",
        "added p95 ms", "POST p95 ms", "errors", "web RSS idle / peak MiB",
        "worker RSS idle / peak MiB", "wall s",
    ]  # fmt: skip
    rows = []
    for r in rounds:
        rows.append(
            [
                r["users"], f"{r['completed']} / {r['turns']}", r["per_minute"],
                *summary(r["added"]), summary(r["post"])[1], sum(r["errors"].values()),
                f"{r['web_idle']:.0f} / {r['web_peak']:.0f}",
                f"{r['worker_idle']:.0f} / {r['worker_peak']:.0f}", r["wall"],
            ]
        )  # fmt: skip
    threads = f"{args.worker_threads} threads" if args.worker_threads else "a thread per user"
    settings = f"; settings {', '.join(args.setting)}" if args.setting else ""
    lines = [
        f"Load: each user chats for {args.minutes:g} min after a {args.ramp:g} s ramp, pausing "
        f"~{args.think:g} s between turns; a turn is a web_fetch of a loopback page and an "
        f"answer streamed over {args.answer_seconds:g} s; the users in "
        f"{args.client_processes} client process{'es' if args.client_processes > 1 else ''}; "
        f"database {args.database}; worker processes of the threads pool, {threads} in all ("
        + ", ".join(
            f"{'+'.join(map(str, r['worker_threads']))} for {r['users']} users" for r in rounds
        )
        + "), gunicorn "
        f"{args.web_processes} {args.web_worker_class} processes with "
        + ", ".join(f"{r['web_threads']} threads each for {r['users']} users" for r in rounds)
        + f"{settings}; {machine()}",
        "",
        table(header, rows),
    ]
    for r in rounds:
        metrics = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["metrics"].items()))
        cpu = ", ".join(f"{part} {ms:.0f}" for part, ms in r["cpu_ms"].items())
        lines += [
            "",
            f"{r['users']} users: /metrics counted turns ended: {metrics}; CPU ms per turn by "
            f"part: {cpu}; load average {r['load'][0]:.1f} before, {r['load'][1]:.1f} after",
        ]
        taken = ", ".join(f"{name} {n}" for name, n in sorted(r["taken"].items()))
        turn_tasks = sum(n for name, n in r["taken"].items() if name in TURN_TASKS)
        reaper = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["reaper"].items()))
        lines += [
            "",
            f"{r['users']} users: tasks the workers took (retries and duplicates included): "
            f"{taken}; steps and tool calls {turn_tasks / max(1, sum(r['metrics'].values())):.2f}"
            f" a turn ended (a completed turn needs 2: its first step, then its call, whose task"
            f" runs the step after it); the reaper: {reaper}",
        ]
        if r["errors"]:
            kinds = "; ".join(f"{n}× {kind}" for kind, n in r["errors"].most_common(8))
            lines += ["", f"{r['users']} users: errors: {kinds}"]
    return "\n".join(lines)


def main() -> None:
    """Parse the flags, run a round per user count, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds to start every user")
    parser.add_argument("--think", type=float, default=1.0, help="seconds between a user's turns")
    parser.add_argument("--answer-seconds", type=float, default=1.0)
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument(
        "--worker-threads",
        type=int,
        help="the workers' threads in all (default: one per user, 16 at least)",
    )
    parser.add_argument(
        "--worker-processes",
        type=int,
        default=usable_cpus(),
        help="worker processes sharing the threads, as ./run's WORKER_PROCESSES (default: one "
        "per CPU this process may use; 1 for the single process ./run started before)",
    )
    parser.add_argument(
        "--web-worker-class",
        choices=sorted(WEB_WORKER_CLASSES),
        default="streaming",
        help="gunicorn's worker class: ./run's (streaming) or a thread per stream (gthread)",
    )
    parser.add_argument(
        "--client-processes",
        type=int,
        default=1,
        help="processes the users are spread over evenly (default 1: every user a thread of "
        "this process); on more cores one process's GIL binds the run near 1,600-1,900 turns "
        "a minute",
    )
    parser.add_argument(
        "--web-processes",
        type=int,
        default=WEB_PROCESSES,
        help=f"gunicorn's processes (default {WEB_PROCESSES}, as ./run serves it)",
    )
    parser.add_argument(
        "--setting", action="append", default=[], metavar="NAME=VALUE", help="a Lookout setting"
    )
    args = parser.parse_args()
    if not PAGE.exists():  # the labelled pages are built from local mirrors, not committed
        parser.error(
            f"{PAGE.relative_to(ROOT)} is missing: build the labelled pages first with "
            "'.venv/bin/python bench/extraction_sets.py pages' (bench/pages/README.md)"
        )
    rounds = []
    for users in args.users:
        rounds.append(run_once(users, args))
        print(report(rounds[-1:], args), flush=True, file=sys.stderr)
    print(report(rounds, args))


if __name__ == "__main__":
    main()
