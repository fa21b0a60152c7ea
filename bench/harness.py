"""The running system the turn benchmarks drive: Redis, a database, a worker, the API, a model.

Everything listens on 127.0.0.1 and is stopped on exit. Reuses the test support modules, so
the benchmarks run the product exactly as the end-to-end tests do:

    with Stack(database="sqlite", concurrency=8) as stack, FakeModelProcess("tool") as model:
        chat = stack.chat(stack.add_provider(model.base_url))
"""

from __future__ import annotations

import logging
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.extensions import db  # noqa: E402
from core.models import ApiToken, Provider, User  # noqa: E402
from tests.support import databases  # noqa: E402
from tests.support.chat import ChatClient, Event, parse_sse  # noqa: E402
from tests.support.live_server import LiveServer  # noqa: E402
from tests.support.processes import (  # noqa: E402
    free_port,
    start_process,
    stop_process,
    wait_for_port,
)
from tests.support.redis_server import RedisServer  # noqa: E402
from tests.support.workers import CeleryWorker, worker_environ  # noqa: E402
from webapp import create_app  # noqa: E402

POSTGRES_SERVER = "postgresql://postgres@127.0.0.1:5432/postgres"
for _noisy in ("werkzeug", "httpx2", "httpx", "alembic"):  # one line per request otherwise
    logging.getLogger(_noisy).setLevel(logging.WARNING)


def postgres_server_url() -> str | None:
    """Return $TEST_POSTGRES_URL, or the local server's URL when it answers; else None."""
    url = os.environ.get("TEST_POSTGRES_URL") or POSTGRES_SERVER
    try:
        import psycopg

        with psycopg.connect(databases.libpq_url(url), connect_timeout=2):
            return url
    except Exception:  # noqa: BLE001 - any failure means "no PostgreSQL here"
        return None


class GunicornServer:
    """The API as production runs it: gunicorn's workers in processes of their own (gthread,
    or ./run's ``webapp.stream_worker.StreamingWorker``)."""

    def __init__(
        self,
        app,
        directory: Path,
        workers: int = 2,
        threads: int = 128,
        worker_class: str = "gthread",
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = directory / "gunicorn.log"
        self.args = [
            sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}",
            "--worker-class", worker_class, "--workers", str(workers), "--threads", str(threads),
            "--no-control-socket", "webapp:create_app()",
        ]  # fmt: skip
        self.env = worker_environ(app)
        self.process = None

    def start(self) -> GunicornServer:
        """Start gunicorn and wait until it listens; return self."""
        self.process = start_process(self.args, self.log, env=self.env)
        wait_for_port("127.0.0.1", self.port, timeout=60)
        return self

    def stop(self) -> None:
        """Stop gunicorn and its workers."""
        if self.process is not None:
            stop_process(self.process, timeout=10)


class Stack:
    """A private Redis, a migrated database, worker processes and the API over HTTP."""

    def __init__(
        self,
        database: str = "sqlite",
        concurrency: int = 8,
        plugins: str = "bench.bench_plugins",
        settings: dict | None = None,
        processes: int = 1,
        web: str = "werkzeug",
        web_threads: int = 128,
        web_worker_class: str = "gthread",
        worker_threads: Sequence[int] | None = None,
        web_processes: int = 2,
    ) -> None:
        self.database = database
        # Each worker process's threads; by default ``processes`` of ``concurrency`` each.
        self.worker_threads = list(worker_threads or [concurrency] * processes)
        self.web_worker_class = web_worker_class
        self.web_threads = web_threads
        self.web_processes = web_processes  # gunicorn's, as ./run's --workers 2
        self.concurrency = concurrency
        self.processes = processes
        self.web_kind = web
        self.extra_workers: list[CeleryWorker] = []
        self.settings = {"LOOKOUT_PLUGINS": plugins, "ALLOW_PRIVATE_NETWORKS": True}
        self.settings.update(settings or {})
        self.directory = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
        self.redis: RedisServer | None = None
        self.worker: CeleryWorker | None = None
        self.web: LiveServer | None = None
        self.postgres_server: str | None = None
        self.database_url = ""

    def start(self) -> Stack:
        """Start every part; return self."""
        self.redis = RedisServer().start()
        self.database_url = self._make_database()
        self.app = create_app(
            {
                "SECRET_KEY": "bench",
                "DATABASE_URL": self.database_url,
                "REDIS_URL": self.redis.url,
                "CELERY_QUEUE": f"lookout-bench-{uuid.uuid4().hex[:8]}",
                "WORKER_CONCURRENCY": sum(self.worker_threads),  # in all, as ./run reads it
                "WORKER_PROCESSES": len(self.worker_threads),
                **self.settings,
            }
        )
        databases.migrate(self.app)
        first, *others = self.worker_threads
        self.worker = CeleryWorker(self.app, self.directory, concurrency=first)
        self.worker.start(timeout=60)
        for threads in others:  # the same queue, one more process each
            extra = CeleryWorker(self.app, self.directory, concurrency=threads)
            self.extra_workers.append(extra.start(timeout=60))
        if self.web_kind == "gunicorn":
            self.web = GunicornServer(
                self.app, self.directory, workers=self.web_processes,
                threads=self.web_threads, worker_class=self.web_worker_class,
            ).start()  # fmt: skip
        else:
            self.web = LiveServer(self.app).start()
        return self

    def _make_database(self) -> str:
        if self.database == "sqlite":
            return f"sqlite:///{self.directory / 'lookout.db'}"
        self.postgres_server = postgres_server_url()
        if self.postgres_server is None:
            raise SystemExit("No PostgreSQL answers: set TEST_POSTGRES_URL, or use SQLite.")
        return databases.create_postgres_database(self.postgres_server)

    def add_provider(self, base_url: str, model: str = "tooly") -> str:
        """Register a provider at base_url with one tool-capable model; return the model id."""
        name = f"fake-{uuid.uuid4().hex[:8]}"
        with self.app.app_context():
            db.session.add(
                Provider(
                    name=name,
                    base_url=base_url,
                    api_key="sk-bench",
                    models=[{"name": model, "tools": True}],
                )  # fmt: skip
            )
            db.session.commit()
        return f"{name}/{model}"

    def chat(self) -> ChatClient:
        """Return a ChatClient for a new user with an API token."""
        with self.app.app_context():
            user = User.make(f"bench-{uuid.uuid4().hex[:8]}", "password")
            db.session.add(user)
            row, token = ApiToken.make(user, "bench")
            db.session.add(row)
            db.session.commit()
        return ChatClient(self.web.url, token)

    def worker_pids(self) -> list[int]:
        """Return the process ids of every worker process started."""
        return [w.process.pid for w in [self.worker, *self.extra_workers]]

    def worker_rss_mib(self) -> float:
        """Return the resident memory of the workers and their children, in MiB."""
        return sum(process_tree_rss_mib(pid) for pid in self.worker_pids())

    def worker_cpu_seconds(self) -> float:
        """Return the CPU time (user and system) the workers and their children used so far."""
        return sum(process_tree_cpu_seconds(pid) for pid in self.worker_pids())

    def web_rss_mib(self) -> float | None:
        """Return the resident memory of the API's own processes, in MiB; None when it runs in
        this one."""
        if isinstance(self.web, GunicornServer) and self.web.process is not None:
            return process_tree_rss_mib(self.web.process.pid)
        return None

    def web_cpu_seconds(self) -> float | None:
        """Return the CPU seconds the API's own processes used; None when it runs in this one."""
        if isinstance(self.web, GunicornServer) and self.web.process is not None:
            return process_tree_cpu_seconds(self.web.process.pid)
        return None

    def stop(self) -> None:
        """Stop everything started and remove the files."""
        if self.web is not None:
            self.web.stop()
        for worker in [self.worker, *self.extra_workers]:
            if worker is not None:
                worker.stop()
        if getattr(self, "app", None) is not None:
            with self.app.app_context():
                db.engine.dispose()
        if self.postgres_server and self.database_url:
            databases.drop_postgres_database(self.postgres_server, self.database_url)
        if self.redis is not None:
            self.redis.stop()
        if os.environ.get("BENCH_KEEP_LOGS"):
            print(f"Worker log kept: {self.worker.log if self.worker else None}", file=sys.stderr)
        else:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> Stack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class FakeModelProcess:
    """``bench/fake_model_server.py`` in its own process; ``base_url`` once started."""

    def __init__(self, *args: str) -> None:
        self.args = list(args)
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def start(self) -> FakeModelProcess:
        """Start the server and read its port; return self."""
        command = [sys.executable, "-m", "bench.fake_model_server", *self.args]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        port = self.process.stdout.readline().strip()
        if not port.isdigit():
            self.stop()
            raise RuntimeError(f"The fake model did not start: {' '.join(command)}")
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def stop(self) -> None:
        """Close its stdin (it stops) and wait; kill it when it does not."""
        if self.process is None:
            return
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)

    def __enter__(self) -> FakeModelProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class EventReader(threading.Thread):
    """Reads a turn's SSE stream in the background, stamping each event with its arrival."""

    def __init__(self, chat: ChatClient, turn_id: str, timeout: float = 60) -> None:
        super().__init__(daemon=True)
        self.chat, self.turn_id, self.timeout = chat, turn_id, timeout
        self.events: list[tuple[float, Event]] = []
        self.ended_at: float | None = None
        self.arrived = threading.Condition()

    def run(self) -> None:
        response = self.chat.call(
            "GET", f"/api/turns/{self.turn_id}/events", stream=True, timeout=self.timeout
        )
        for event in parse_sse(response.iter_lines(decode_unicode=True)):
            with self.arrived:
                self.events.append((time.perf_counter(), event))
                self.arrived.notify_all()
        with self.arrived:
            self.ended_at = time.perf_counter()
            self.arrived.notify_all()

    def wait_for(self, name: str, timeout: float = 30) -> float:
        """Wait for the first event called name and return when it arrived."""
        with self.arrived:
            self.arrived.wait_for(
                lambda: self.ended_at is not None or any(e.name == name for _, e in self.events),
                timeout,
            )
            for at, event in self.events:
                if event.name == name:
                    return at
        raise AssertionError(f"no {name} event in {self.turn_id}: {self.names()}")

    def first(self, name: str) -> float:
        """Return when the first event called name arrived."""
        return next(at for at, event in self.events if event.name == name)

    def names(self) -> list[str]:
        """Return the names of the events read so far."""
        return [event.name for _, event in self.events]


def _tree_sum(pid: int, measure: Callable[[psutil.Process], float]) -> float:
    """Return ``measure`` summed over a process and its descendants (0 for ones gone)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        try:
            total += measure(process)
        except psutil.NoSuchProcess:
            pass
    return total


def process_tree_rss_mib(pid: int) -> float:
    """Return the resident memory of a process and its descendants, in MiB."""
    return _tree_sum(pid, lambda process: process.memory_info().rss) / 2**20


def process_tree_cpu_seconds(pid: int) -> float:
    """Return the CPU seconds (user and system) used by a process and its descendants."""

    def cpu(process: psutil.Process) -> float:
        times = process.cpu_times()
        return times.user + times.system

    return _tree_sum(pid, cpu)


def percentile(values: Sequence[float], share: float) -> float:
    """Return the nearest-rank percentile (share 0.95 for p95) of values."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


def summary(values: Sequence[float]) -> tuple[float, float]:
    """Return (median, p95) of values."""
    return (statistics.median(values) if values else math.nan), percentile(values, 0.95)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Return a Markdown table; floats are shown with one decimal."""

    def cell(value: object) -> str:
        return f"{value:.1f}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    """Return a one-line description of this machine and the date, for the results."""
    cpu = platform.processor() or platform.machine()
    memory = psutil.virtual_memory().total / 2**30
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    return (
        f"{today}, {os.cpu_count()} cores ({cpu}), {memory:.0f} GiB, Python "
        f"{platform.python_version()}, load average {os.getloadavg()[0]:.2f} at the start"
    )


from flask import Flask  # noqa: E402


def make_bench_app(folder: Path, redis_url: str, provider: bool = False, **config: object) -> Flask:
    """Return the app on a migrated SQLite database in ``folder`` and the Redis at ``redis_url``,
    ``config`` on top; with ``provider``, the model "bench/m" stored at an address nothing
    answers (no worker is asked to reach it: its turns stay queued)."""
    app = create_app(
        {
            "SECRET_KEY": "bench",
            "DATABASE_URL": f"sqlite:///{folder}/lookout.db",
            "REDIS_URL": redis_url,
            **config,
        }
    )
    databases.migrate(app)
    if provider:
        with app.app_context():
            db.session.add(
                Provider(name="bench", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}])
            )
            db.session.commit()
    return app
