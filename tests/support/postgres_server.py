"""A private PostgreSQL server in a temporary folder on a free loopback port, for fault tests.

Made with ``initdb`` and run with ``pg_ctl`` as the ``postgres`` user (``runuser`` when the
tests run as root, since PostgreSQL refuses to run as root); never the machine's shared server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support.hosts import SUBNET, Host
from tests.support.processes import free_port

ACCOUNT = "postgres"


def find_pg_bin() -> Path | None:
    """Return the newest /usr/lib/postgresql/*/bin holding initdb and pg_ctl, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found else None


def missing_reason() -> str | None:
    """Why a private server cannot be made here, or None when it can."""
    if find_pg_bin() is None:
        return "initdb was not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(ACCOUNT)
        except KeyError:
            return "the tests run as root and there is no postgres account to run PostgreSQL"
        if shutil.which("runuser") is None:
            return "the tests run as root and runuser is missing"
    return None


class PostgresServer:
    """``start()`` makes and starts the server; ``url`` is its database "lookout" (SQLAlchemy).

    On a test host (tests/support/hosts.py) it listens on the host's address and port 5432,
    keeps its files in the host's /tmp and trusts the hosts' subnet.
    """

    def __init__(self, host: Host | None = None) -> None:
        self.bin = find_pg_bin()
        self.host = host
        self.address = host.address if host else "127.0.0.1"
        self.port = 5432 if host else free_port()  # a test host has its ports to itself
        if host is None:
            self.directory = Path(tempfile.mkdtemp(prefix="lookout-pg-"))
        else:
            self.directory = Path("/tmp/lookout-pg")
            host.run(["install", "-d", "-o", ACCOUNT, str(self.directory)])
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        self.url = f"postgresql+psycopg://{ACCOUNT}@{self.address}:{self.port}/lookout"

    def _run(self, *args: str, timeout: float = 60) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", ACCOUNT, "--", *command]
        if self.host is not None:
            command = self.host.command(command)
        subprocess.run(command, check=True, capture_output=True, timeout=timeout)

    def _seen(self, path: Path) -> Path:
        return self.host.path(str(path)) if self.host else path

    def start(self) -> PostgresServer:
        """Create the cluster and the database on first use, start the server; return self."""
        if not self._seen(self.data).exists():
            if os.geteuid() == 0 and self.host is None:
                account = pwd.getpwnam(ACCOUNT)
                os.chown(self.directory, account.pw_uid, account.pw_gid)
            self._run("initdb", "-D", str(self.data), "-U", ACCOUNT, "--auth=trust", "-E", "UTF8")
            if self.host is not None:
                with self._seen(self.data / "pg_hba.conf").open("a") as rules:
                    rules.write(f"host all all {SUBNET}.0/24 trust\n")
            self._start_server()
            self._run(
                "createdb", "-h", self.address, "-p", str(self.port), "-U", ACCOUNT, "lookout"
            )
        else:
            self._start_server()
        return self

    def _start_server(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses={self.address} -k {self.directory} "
            "-c fsync=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop the server (fast: open connections are cut), wait, and start it again."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        time.sleep(down_seconds)
        self._start_server()

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=30)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        if self.host is None:  # a host's /tmp goes with the host
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()
