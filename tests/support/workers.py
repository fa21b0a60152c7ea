"""A real worker process (`celery -A workers worker --pool threads`) with one app's settings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

from flask import Flask

from core import broker
from core.config import SETTINGS, to_environ
from tests.support.hosts import Host
from tests.support.processes import ROOT, start_process, stop_process, wait_until
from webapp import queue


def worker_environ(app: Flask, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Return this process's environment with every setting replaced by the app's value."""
    env = {key: value for key, value in os.environ.items()}
    for setting in SETTINGS:
        env.pop(setting.name, None)
    env.update(to_environ(app.config))
    env.update(extra or {})
    return env


def pings(app: Flask) -> bool:
    """Return whether a worker on the app's queue answers the ping task within a second."""
    with app.app_context():
        try:
            return queue.call(broker.PING, timeout=1) == "pong"
        except queue.QueueError:
            return False


def celery_config_dir(directory: Path, overrides: dict) -> Path:
    """Write, in ``directory``, a celeryconfig.py that is the project's with ``overrides``
    (Celery setting names and values) on top; return the directory.

    For settings no environment variable reaches, such as a visibility_timeout of seconds so
    that a test sees Redis redeliver within its run.
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "celeryconfig.py").write_text(
        "import runpy\n"
        f"project = runpy.run_path({str(ROOT / 'celeryconfig.py')!r})\n"
        "globals().update((k, v) for k, v in project.items() if not k.startswith('__'))\n"
        f"globals().update({overrides!r})\n"
    )
    return directory


START_SECONDS = 180


class CeleryWorker:
    """A worker subprocess consuming the app's queue; `log` is its output file.

    ``celery_overrides`` replaces Celery settings of celeryconfig.py for this worker only;
    ``host`` runs it on a test host (tests/support/hosts.py) rather than this one.
    """

    def __init__(
        self,
        app: Flask,
        log_dir: Path,
        concurrency: int = 4,
        extra_env=None,
        celery_overrides: dict | None = None,
        host: Host | None = None,
    ):
        self.app = app
        self.host = host
        name = f"worker-{uuid.uuid4().hex[:8]}"
        self.log = log_dir / f"{name}.log"
        # Its node name, for control commands sent to this worker alone.
        self.hostname = f"test-{uuid.uuid4().hex[:8]}@{socket.gethostname()}"
        self.concurrency = concurrency
        self.env = worker_environ(app, extra_env)
        self.cwd = ROOT
        if celery_overrides:
            self.cwd = celery_config_dir(log_dir / f"{name}-config", celery_overrides)
            self.env["PYTHONPATH"] = os.pathsep.join(
                [str(ROOT), *filter(None, [self.env.get("PYTHONPATH")])]
            )
        self.process: subprocess.Popen | None = None

    # A guard against a process that never comes up, not a speed limit: on a busy 2-core
    # machine importing the app alone has taken over a minute.
    def start(self, timeout: float = START_SECONDS) -> CeleryWorker:
        """Start the worker and wait until it answers the ping; return self."""
        args = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "workers",
            "worker",
            "--pool",
            "threads",
            "--concurrency",
            str(self.concurrency),
            "--loglevel",
            "INFO",
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
            "--hostname",
            self.hostname,
        ]
        if self.host is not None:
            args = self.host.command(args, cwd=self.cwd)
        self.process = start_process(args, self.log, env=self.env, cwd=self.cwd)
        try:
            wait_until(
                lambda: self.process.poll() is not None or pings(self.app),
                timeout,
                f"The Celery worker did not answer the ping; see {self.log}.",
            )
        except TimeoutError:
            self.stop()
            raise
        if self.process.poll() is not None:
            raise RuntimeError(f"The Celery worker exited at start:\n{self.log.read_text()}")
        return self

    def answers(self) -> bool:
        """Return whether this worker itself answers a control ping (``start`` returns once
        any worker on the queue answers the ping task, which may be another)."""
        with self.app.app_context():
            client = queue.get_client()
            with client.connection_for_write() as connection:
                replies = client.control.ping(
                    destination=[self.hostname], timeout=1, connection=connection
                )
        return bool(replies)

    def stop(self) -> int | None:
        """Stop the worker (warm shutdown, then SIGKILL) and return its exit code."""
        return stop_process(self.process, timeout=10) if self.process else None

    def __enter__(self) -> CeleryWorker:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
