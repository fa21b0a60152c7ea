"""A guard that refuses every connection outside 127.0.0.0/8 and ::1 in the process it is in.

Lookout fetches the URLs an admin set (provider and engine base URLs) without its guarded
fetch, so a test that lets random input reach those settings must make sure nothing leaves the
machine whatever the input says. ``install()`` patches the socket module: connecting to, and
resolving, anything but a loopback address raises ``OutsideConnection`` (an ``OSError``, which
every client reports as a network error), and appends the address to the file named by
``LOOPBACK_GUARD_LOG`` so the test can fail on any attempt. A child process gets the same guard
from ``environ()``, whose PYTHONPATH puts ``loopback_only/sitecustomize.py`` first.

    guard = install(log_path)   ...   uninstall(guard)
    subprocess.Popen(..., env=environ(os.environ, log_path))
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SITE_DIR = Path(__file__).resolve().parent / "loopback_only"
LOG_VARIABLE = "LOOPBACK_GUARD_LOG"
LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}


class OutsideConnection(ConnectionRefusedError):
    """A connection or name lookup outside loopback, refused by the test's guard."""


def is_loopback(host: Any) -> bool:
    """Return whether ``host`` (an address or a name) stays on this machine."""
    if host is None:
        return True  # getaddrinfo(None, port): the local wildcard, for binding
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    text = str(host).split("%", 1)[0].strip("[]")
    if text.lower() in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


@dataclass
class Guard:
    """The socket functions replaced, to put back on uninstall."""

    originals: dict[str, Any]


def install(log: str | os.PathLike | None = None) -> Guard:
    """Patch this process's socket module so that only loopback is reachable; return the guard."""
    originals = {
        "connect": socket.socket.connect,
        "connect_ex": socket.socket.connect_ex,
        "getaddrinfo": socket.getaddrinfo,
        "gethostbyname": socket.gethostbyname,
    }

    def refuse(what: str, host: Any) -> None:
        if log:
            with open(log, "a", encoding="utf-8") as file:
                file.write(f"{os.getpid()} {what} {host!r}\n")
        raise OutsideConnection(f"The test's loopback guard refused {what} {host!r}.")

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
            refuse("a connection to", address[0])

    def connect(self, address):
        check(self, address)
        return originals["connect"](self, address)

    def connect_ex(self, address):
        check(self, address)
        return originals["connect_ex"](self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not is_loopback(host):
            refuse("a name lookup of", host)
        return originals["getaddrinfo"](host, *args, **kwargs)

    def gethostbyname(host):
        if not is_loopback(host):
            refuse("a name lookup of", host)
        return originals["gethostbyname"](host)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    return Guard(originals)


def uninstall(guard: Guard) -> None:
    """Put the socket functions back."""
    socket.socket.connect = guard.originals["connect"]
    socket.socket.connect_ex = guard.originals["connect_ex"]
    socket.getaddrinfo = guard.originals["getaddrinfo"]
    socket.gethostbyname = guard.originals["gethostbyname"]


def environ(base: dict[str, str], log: str | os.PathLike) -> dict[str, str]:
    """Return ``base`` with the guard installed in every Python process started with it."""
    paths = [str(SITE_DIR), *filter(None, [base.get("PYTHONPATH")])]
    return {**base, "PYTHONPATH": os.pathsep.join(paths), LOG_VARIABLE: str(log)}


def install_from_environment() -> None:
    """Install the guard when ``LOOPBACK_GUARD_LOG`` is set (sitecustomize calls this)."""
    log = os.environ.get(LOG_VARIABLE)
    if log:
        install(log)
