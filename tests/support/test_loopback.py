"""The loopback guard itself: in this process, and in a child started with its environment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.support import loopback
from tests.support.processes import free_port


@pytest.fixture
def guard(tmp_path):
    """The guard installed in this process, logging to a file: (guard, log path)."""
    log = tmp_path / "refused.log"
    installed = loopback.install(log)
    yield installed, log
    loopback.uninstall(installed)


@pytest.mark.parametrize("host", ["192.0.2.1", "10.0.0.1", "2001:db8::1", "::ffff:192.0.2.1"])
def test_a_connection_outside_loopback_is_refused_and_logged(guard, host):
    _, log = guard
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock, pytest.raises(loopback.OutsideConnection):
        sock.connect((host, 80))
    assert repr(host) in log.read_text()


def test_a_name_lookup_outside_loopback_is_refused(guard):
    with pytest.raises(OSError):
        socket.create_connection(("example.com", 80), timeout=1)
    assert "'example.com'" in guard[1].read_text()


def test_loopback_stays_reachable(guard):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(("localhost", server.getsockname()[1]), timeout=1):
            pass
    assert not guard[1].exists()


def test_a_child_started_with_the_guard_environment_is_guarded_too(tmp_path):
    log = tmp_path / "child.log"
    port = free_port()
    code = (
        "import socket\n"
        "for host in ('192.0.2.1', '127.0.0.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=1)\n"
        "    except OSError as error:\n"
        "        print(host, type(error).__name__)\n"
    )
    env = loopback.environ(dict(os.environ), log)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.stdout.splitlines() == [
        "192.0.2.1 OutsideConnection",
        "127.0.0.1 ConnectionRefusedError",
    ], done.stderr
    assert "'192.0.2.1'" in log.read_text()
