"""The web app in its own gunicorn process (as ./run serves it), so a test can restart it."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import requests
from flask import Flask

from tests.support.hosts import Host
from tests.support.processes import (
    free_port,
    start_process,
    stop_process,
    wait_for_port,
    wait_until,
)
from tests.support.workers import START_SECONDS, worker_environ


class WebProcess:
    """gunicorn serving the app's settings on 127.0.0.1 and a free port, or on a test host's
    address and port 8000 (tests/support/hosts.py); ``url`` is its base."""

    def __init__(self, app: Flask, log_dir: Path, host: Host | None = None, extra_env=None) -> None:
        self.host = host
        self.address = host.address if host else "127.0.0.1"
        self.port = 8000 if host else free_port()  # a test host has its ports to itself
        self.url = f"http://{self.address}:{self.port}"
        self.log = log_dir / f"web-{uuid.uuid4().hex[:8]}.log"
        self.env = worker_environ(app, extra_env)
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = START_SECONDS) -> WebProcess:
        """Start serving and wait until the app answers; return self."""
        args = [
            sys.executable,
            "-m",
            "gunicorn",
            "--bind",
            f"{self.address}:{self.port}",
            "--worker-class",
            "webapp.stream_worker.StreamingWorker",
            "--workers",
            "1",
            "--threads",
            "16",
            "--graceful-timeout",
            "1",
            "--no-control-socket",
            "webapp:create_app()",
        ]
        if self.host is not None:
            args = self.host.command(args)
        self.process = start_process(args, self.log, env=self.env)
        wait_for_port(self.address, self.port, timeout)
        # The port listens before gunicorn's worker has imported the app (many seconds on a
        # loaded machine): a test's first request must not spend its own timeout on that.
        wait_until(self.answers, timeout, f"gunicorn did not answer; see {self.log}")
        return self

    def answers(self) -> bool:
        """Whether the app answers a request (whatever its status)."""
        try:
            requests.get(f"{self.url}/healthz", timeout=5)
            return True
        except requests.RequestException:
            return False

    def restart(self) -> None:
        """Stop the server (its open event streams are cut) and start it again, same port."""
        self.stop()
        self.start()

    def stop(self) -> None:
        """Stop the server and its worker processes."""
        if self.process is not None:
            stop_process(self.process, timeout=5)
            self.process = None

    def __enter__(self) -> WebProcess:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
