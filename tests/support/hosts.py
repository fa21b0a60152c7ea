"""Hosts on one machine for multi-host tests: network namespaces on a private bridge, each
with a /tmp of its own.

    with Network() as network:
        db = network.add_host("db")                 # 10.213.0.2, its own /tmp
        start_process(db.command(["redis-server", ...]), log)
        with entered(network.add_host("lab")):      # this thread's new sockets are the lab's
            requests.get(f"http://{db.address}:...")

Every address is in ``SUBNET``, which exists only inside the namespaces made here: each host
has one veth to the bridge (in a namespace of its own) and no default route, and nothing is
added to the machine's own namespace, so what the hosts send cannot leave the machine. A host
is a holder process (``sleep``) in its network namespace and a mount namespace whose /tmp is a
tmpfs; ``command()`` starts a program inside both. ``close()`` kills every process in the
namespaces and deletes them (the veths and the tmpfs go with them).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.processes import ROOT, alive, start_process, wait_until

SUBNET = "10.213.0"
PREFIX = "lookout-test"
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
TMP_SIZE = "512m"


def missing_reason() -> str | None:
    """Why hosts cannot be made here for want of a tool (ip, nsenter, unshare), or None."""
    for tool in ("ip", "nsenter", "unshare"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (apt-get install iproute2 util-linux)"
    return None


def refused_reason() -> str | None:
    """Why the kernel refuses network namespaces here (the probe: ``ip netns add``), or None
    when they work or ``ip`` is missing (see ``missing_reason``)."""
    if shutil.which("ip") is None:
        return None
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if made.returncode != 0:
        return f"the kernel refused a network namespace (ip netns add: {made.stderr.strip()})"
    _ip("netns", "del", probe)
    return None


def _ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _netns_inode(pid: int | str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def pids_in(namespace: str) -> set[int]:
    """Return the pids of every live process in the named network namespace."""
    try:
        inode = os.stat(NETNS_DIR / namespace).st_ino
    except OSError:
        return set()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _netns_inode(entry.name) == inode and alive(int(entry.name)):
            found.add(int(entry.name))
    return found


def kill_namespace(namespace: str) -> None:
    """SIGKILL every process in the namespace until none is left, then delete it."""

    def killed() -> bool:
        for pid in pids_in(namespace):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return not pids_in(namespace)

    wait_until(killed, 30, f"processes of {namespace} survived SIGKILL", interval=0.05)
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True)


def remove_stale_networks() -> None:
    """Delete the namespaces of a test process that is gone (a run killed before its cleanup)."""
    if not NETNS_DIR.is_dir():
        return
    for entry in NETNS_DIR.iterdir():
        found = re.match(rf"{PREFIX}-(\d+)-", entry.name)
        if found and not alive(int(found.group(1))):
            kill_namespace(entry.name)


class Host:
    """One host: its namespace, its address on the bridge, and the holder of its /tmp."""

    def __init__(self, network: Network, name: str, number: int) -> None:
        self.name = name
        self.namespace = f"{network.tag}-{name}"
        self.address = f"{SUBNET}.{number}"
        _ip("netns", "add", self.namespace)
        _ip("-n", self.namespace, "link", "set", "lo", "up")
        # Both ends are made inside namespaces: nothing appears in the machine's own.
        _ip("-n", self.namespace, "link", "add", "eth0", "type", "veth", "peer", "name", name,
            "netns", network.switch)  # fmt: skip
        _ip("-n", network.switch, "link", "set", name, "master", "br0", "up")
        _ip("-n", self.namespace, "addr", "add", f"{self.address}/24", "dev", "eth0")
        _ip("-n", self.namespace, "link", "set", "eth0", "up")
        mount = f"mount -t tmpfs -o size={TMP_SIZE},mode=1777 {self.namespace} /tmp"
        self.holder = start_process(
            ["ip", "netns", "exec", self.namespace, "unshare", "--mount", "--propagation",
             "private", "sh", "-c", f"{mount} && exec sleep infinity"],
            network.logs / f"{name}-holder.log",
        )  # fmt: skip
        wait_until(self._tmp_mounted, 10, f"{name}'s /tmp was not mounted; see its holder log")

    def _tmp_mounted(self) -> bool:
        if self.holder.poll() is not None:
            raise RuntimeError(f"{self.name}'s holder exited with {self.holder.returncode}")
        try:
            mounts = Path(f"/proc/{self.holder.pid}/mountinfo").read_text()
        except OSError:
            return False
        return any(
            line.split()[4] == "/tmp" and self.namespace in line for line in mounts.splitlines()
        )

    def command(self, args: list[str], cwd: Path = ROOT) -> list[str]:
        """Return args as a command that runs on this host (its network and its /tmp)."""
        return ["nsenter", "-t", str(self.holder.pid), "--mount", "--net", f"--wd={cwd}", "--",
                *args]  # fmt: skip

    def run(self, args: list[str], timeout: float = 60) -> str:
        """Run args on this host, wait, and return its output; RuntimeError when it fails."""
        done = subprocess.run(self.command(args), capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{args} on {self.name} failed: {done.stderr.strip()}")
        return done.stdout

    def path(self, inside: str) -> Path:
        """Return the path under which this process sees the host's file ``inside``."""
        return Path(f"/proc/{self.holder.pid}/root") / inside.lstrip("/")

    def pids(self) -> set[int]:
        """Return the pids of every process running on this host."""
        return pids_in(self.namespace)

    def listening(self) -> set[tuple[str, int]]:
        """Return the (address, port) of every TCP socket listening on this host."""
        found = set()
        for row in Path(f"/proc/{self.holder.pid}/net/tcp").read_text().splitlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            if state == "0A":  # LISTEN
                address, port = local.split(":")
                octets = bytes.fromhex(address)[::-1]
                found.add((".".join(str(b) for b in octets), int(port, 16)))
        return found

    def routes(self) -> list[str]:
        """Return this host's IPv4 routing table, one route a line."""
        return _ip("-n", self.namespace, "-4", "route", "show", "table", "all").splitlines()

    def lose(self) -> None:
        """Cut the host's link, then SIGKILL everything on it: a machine lost at once."""
        _ip("-n", self.namespace, "link", "del", "eth0")
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Network:
    """A bridge in a namespace of its own, and the hosts on it; ``add_host`` makes one."""

    def __init__(self, logs: Path) -> None:
        self.tag = f"{PREFIX}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.logs = logs
        self.switch = f"{self.tag}-switch"
        self.hosts: list[Host] = []
        remove_stale_networks()
        _ip("netns", "add", self.switch)
        _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        _ip("-n", self.switch, "link", "set", "br0", "up")

    def add_host(self, name: str) -> Host:
        """Make a host named ``name`` (15 characters at most) at the next address."""
        try:
            host = Host(self, name, len(self.hosts) + 2)
        except BaseException:
            kill_namespace(f"{self.tag}-{name}")
            raise
        self.hosts.append(host)
        return host

    def close(self) -> None:
        """Kill every host's processes and delete every namespace made."""
        for host in self.hosts:
            kill_namespace(host.namespace)
            host.holder.wait(10)
        kill_namespace(self.switch)

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


_libc = ctypes.CDLL(None, use_errno=True)


def _setns(descriptor: int) -> None:
    if _libc.setns(descriptor, CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"setns failed: {os.strerror(error)}")


@contextmanager
def entered(host: Host) -> Iterator[Host]:
    """Put this thread on ``host``'s network while the block runs (the threads it starts, and
    the sockets it opens, stay there); its files stay this process's own."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(NETNS_DIR / host.namespace, os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield host
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)
