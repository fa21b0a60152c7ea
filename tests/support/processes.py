"""Free ports, waiting for servers and threads, and starting and stopping processes with their
children."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Names the test process that started a process (and so its children): one whose test process
# is gone was left by a run that was killed before its fixtures could stop it.
OWNER_VARIABLE = "LOOKOUT_TEST_OWNER"
# A bound only a hang reaches: what a test waits for comes within seconds even on a busy
# machine, so a wait never decides an outcome by running out, and fails loudly when it does.
HANG_SECONDS = 120


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on host that nothing listens on right now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until(check: Callable[[], object], timeout: float, message: str, interval=0.1) -> object:
    """Return check()'s first truthy value, or raise TimeoutError with message after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(message)
        time.sleep(interval)


def joined(thread: threading.Thread, what: str, timeout: float = HANG_SECONDS) -> None:
    """Wait for ``thread`` to end; AssertionError saying ``what`` never ended past ``timeout``
    (a join whose result is not checked lets a test read what a running thread half wrote)."""
    thread.join(timeout)
    assert not thread.is_alive(), f"{what} never ended within {timeout:g} s"


def port_open(host: str, port: int) -> bool:
    """Return whether something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout: float = 10.0) -> None:
    """Wait until host:port accepts connections, or raise TimeoutError."""
    wait_until(lambda: port_open(host, port), timeout, f"Nothing listened on {host}:{port}.")


def start_process(
    args: list[str], log_path: Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.Popen:
    """Start args in a new session (so its whole group can be stopped), output to log_path;
    it carries this process's id in ``OWNER_VARIABLE`` (see ``stop_orphans``)."""
    environment = dict(os.environ if env is None else env)
    environment[OWNER_VARIABLE] = str(os.getpid())
    log = open(log_path, "ab")  # the child keeps writing after we return
    try:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_default_interrupt,
        )
    finally:
        log.close()


def _default_interrupt() -> None:
    # A shell starts background jobs with SIGINT and SIGQUIT ignored, and a child cannot trap
    # a signal ignored when it started: a suite run in the background would test a ./run that
    # Ctrl-C cannot reach. A terminal starts it with the default action, as this does.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def signal_group(process: subprocess.Popen, signum: int) -> None:
    """Send signum to the process group led by process, if any of it is left."""
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> int | None:
    """Stop process and its group: SIGTERM, then SIGKILL after timeout; return its exit code."""
    if process.poll() is None:
        signal_group(process, signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            signal_group(process, signal.SIGKILL)
            process.wait(5)
    signal_group(process, signal.SIGKILL)
    return process.returncode


def parent_pids() -> dict[int, int]:
    """Return every live process's parent pid, read from /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int) -> set[int]:
    """Return the pids of every live descendant of pid."""
    parents = parent_pids()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Return whether pid is a running (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def stop_orphans() -> int:
    """Kill every process that ``start_process`` started (with its descendants) for a test
    process that is gone: a run killed outright (SIGKILL, a CI timeout) never stopped its
    workers, servers and Redis, which then took CPU and memory from every later run. Another
    run still going keeps its own. Return how many processes were killed."""
    marker = f"{OWNER_VARIABLE}=".encode()
    parents = parent_pids()
    spared, pid = set(), os.getpid()
    while pid > 1 and pid not in spared:  # this process and its ancestors, whatever they carry
        spared.add(pid)
        pid = parents.get(pid, 1)
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            variables = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        owner = next((v[len(marker) :] for v in variables if v.startswith(marker)), None)
        if owner is None or not owner.isdigit() or alive(int(owner)):
            continue
        try:
            os.kill(int(entry.name), signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed
