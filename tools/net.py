"""The guarded fetch: HTTP sessions that reach only globally routable addresses, one hop at a time.

A ``GuardedSession`` checks URLs before connecting, resolves each host once, refuses when any
resolved address is refused, connects only to a checked address, checks the connected peer
again, and never follows redirects. Errors it raises::

    requests.RequestException
    ├── requests.ConnectionError
    │   └── AddressNotAllowed      a resolved or connected address the policy refuses
    │       └── UnsafeURL          a URL refused before any connection (also requests.InvalidURL)
    └── RedirectNotFollowed        a 3xx answered a request made with allow_redirects=True

Every refusal logs one WARNING on ``lookout.net``, without the URL's credentials or query string,
and is told to the listeners added with ``on_refusal`` (the app counts refusals for /metrics).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import sys
import threading
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError
from urllib3.poolmanager import PoolManager
from urllib3.util.connection import allowed_gai_family

from tools.addresses import AddressPolicy, address_allowed, find_refusal_reason
from tools.listeners import Listeners
from tools.urls import find_url_problem, redact_url

__all__ = [
    "AddressNotAllowed",
    "AddressPolicy",
    "GuardedAdapter",
    "GuardedSession",
    "RedirectNotFollowed",
    "UnsafeURL",
    "address_allowed",
    "find_refusal_reason",
    "find_url_problem",
    "interrupt",
    "make_session",
    "on_refusal",
    "redact_url",
]

log = logging.getLogger("lookout.net")
_refusals = Listeners("a guard refusal")


def on_refusal(listener: Callable[[str], None]) -> Callable[[], None]:
    """Call ``listener(reason)`` on every refusal from now on, once however often it is added;
    ``reason`` is a short phrase from a fixed set (the rule, never the address or URL). Returns
    a function that removes the listener."""
    return _refusals.add(listener)


class AddressNotAllowed(requests.ConnectionError):
    """A host or address the guard refuses; ``reason`` names the rule that refused it."""

    def __init__(
        self,
        reason: str,
        *,
        host: str,
        address: str | None = None,
        url: str = "",
        request: requests.PreparedRequest | None = None,
    ) -> None:
        target = host if address is None or address == host else f"{address} for {host}"
        super().__init__(f"refused {target}: {reason}", request=request)
        self.reason = reason
        self.host = host
        self.address = address
        self.url = url

    @property
    def why(self) -> str:
        """Why, for the person who asked. Neither the address a name resolved to nor the kind
        of network is said: a page's injected instructions could map an internal network so."""
        return "Lookout reads only public internet addresses"


class UnsafeURL(AddressNotAllowed, requests.exceptions.InvalidURL):
    """A URL refused before any connection (credentials, backslash, control character, scheme)."""

    def __init__(self, reason: str, *, url: str) -> None:
        requests.RequestException.__init__(self, f"refused URL {url}: {reason}")
        self.reason = reason
        self.host = ""
        self.address = None
        self.url = url

    @property
    def why(self) -> str:
        """Why, for the person who asked: what is wrong with the URL itself."""
        return self.reason


class RedirectNotFollowed(requests.RequestException):
    """A redirect answered a request that allowed redirects; ``location`` is the absolute target."""

    def __init__(self, location: str, *, response: requests.Response) -> None:
        super().__init__(
            f"not following the redirect to {redact_url(location)}: fetch it again through the "
            "guard, with allow_redirects=False",
            response=response,
        )
        self.location = location


class _Refused(Exception):
    """Carries an AddressNotAllowed through urllib3, which wraps and retries any OSError."""

    def __init__(self, error: AddressNotAllowed) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class _Guard:
    """Opens sockets for urllib3 connections, only to addresses the policy allows."""

    address_allowed: AddressPolicy
    connections: weakref.WeakSet = field(default_factory=weakref.WeakSet)
    aborted: threading.Event = field(default_factory=threading.Event)

    def abort(self) -> None:
        """Refuse new connections and shut down every open one, waking any blocked read."""
        self.aborted.set()
        for conn in list(self.connections):
            sock = getattr(conn, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed

    def refuse(self, host: str, address: str, *, peer: bool = False) -> _Refused:
        """Log the refusal and return it, ready to raise."""
        reason = find_refusal_reason(address) or "refused by the address policy"
        _refusals.tell(reason)
        if peer:
            reason += " (the connected peer)"
        error = AddressNotAllowed(reason, host=host, address=address)
        log.warning("%s", error)
        return _Refused(error)

    def open_socket(self, conn: HTTPConnection) -> socket.socket:
        """Return a socket connected to a checked address of ``conn.host``."""
        if self.aborted.is_set():
            raise NewConnectionError(conn, "The session was aborted.")
        self.connections.add(conn)
        host = conn.host.strip("[]")
        if _is_ip_literal(host) and not self.address_allowed(host):
            raise self.refuse(host, host)
        try:
            # Looked up on each call so that tests can stand in for DNS.
            infos = socket.getaddrinfo(host, conn.port, allowed_gai_family(), socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise NameResolutionError(conn.host, conn, exc) from exc
        for info in infos:
            if not self.address_allowed(str(info[4][0])):
                raise self.refuse(host, str(info[4][0]))
        try:
            sock = _connect_first(conn, infos)
        except TimeoutError as exc:
            message = f"Connection to {conn.host} timed out. (connect timeout={conn.timeout})"
            raise ConnectTimeoutError(conn, message) from exc
        except OSError as exc:
            raise NewConnectionError(conn, f"Failed to establish a new connection: {exc}") from exc
        # 0.0.0.0 reaches 127.0.0.1 on Linux: judge where the socket really landed.
        peer = str(sock.getpeername()[0])
        if not self.address_allowed(peer):
            sock.close()
            raise self.refuse(host, peer, peer=True)
        sys.audit("http.client.connect", conn, conn.host, conn.port)
        return sock


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


_AddrInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, tuple[Any, ...]]


def _connect_first(conn: HTTPConnection, infos: list[_AddrInfo]) -> socket.socket:
    """Return a socket connected to the first of ``infos`` that answers, or raise the last error."""
    error: OSError = OSError(f"no address found for {conn.host}")
    for family, kind, proto, _, sockaddr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            for option in conn.socket_options or ():
                sock.setsockopt(*option)
            if conn.timeout is None or isinstance(conn.timeout, int | float):
                sock.settimeout(conn.timeout)
            if conn.source_address:
                sock.bind(conn.source_address)
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        return sock
    raise error


class _GuardedHTTPConnection(HTTPConnection):
    guard: _Guard  # its pool's, given as the pool makes it

    def _new_conn(self) -> socket.socket:
        return self.guard.open_socket(self)


class _GuardedHTTPSConnection(HTTPSConnection):
    """Connects through the guard; TLS still verifies and sends SNI for the hostname."""

    guard: _Guard  # its pool's, given as the pool makes it

    def _new_conn(self) -> socket.socket:
        return self.guard.open_socket(self)


class _GivesItsGuard:
    """A pool that gives its connections its guard as it makes them."""

    guard: _Guard  # its pool manager's, given as the manager makes it

    def _new_conn(self) -> HTTPConnection:
        conn = super()._new_conn()  # type: ignore[misc]
        conn.guard = self.guard
        return conn


class _GuardedHTTPConnectionPool(_GivesItsGuard, HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSConnectionPool(_GivesItsGuard, HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedPoolManager(PoolManager):
    """Makes pools whose connections open their sockets through ``guard``.

    The classes are the module's, the guard each pool's own: classes made per session (eight
    a session, four an adapter) were 61 objects only the cycle collector frees, every call."""

    def __init__(self, guard: _Guard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard
        self.pool_classes_by_scheme = {
            "http": _GuardedHTTPConnectionPool,
            "https": _GuardedHTTPSConnectionPool,
        }

    def _new_pool(
        self,
        scheme: str,
        host: str,
        port: int,
        request_context: dict[str, Any] | None = None,
    ) -> HTTPConnectionPool:
        pool = super()._new_pool(scheme, host, port, request_context)
        pool.guard = self.guard  # type: ignore[attr-defined]
        return pool


class GuardedAdapter(HTTPAdapter):
    """An HTTPAdapter whose connections go only to addresses ``address_allowed`` accepts.

    ``send`` raises AddressNotAllowed for a refused address and ValueError if given a proxy.
    """

    def __init__(self, address_allowed: AddressPolicy = address_allowed, **kwargs: Any) -> None:
        self.guard = _Guard(address_allowed)  # before super().__init__, which builds the pools
        super().__init__(**kwargs)

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        """Build the pool manager with guarded connection pools (as requests builds its own)."""
        self._pool_connections = connections
        self._pool_maxsize = maxsize
        self._pool_block = block
        self.poolmanager = _GuardedPoolManager(
            self.guard, num_pools=connections, maxsize=maxsize, block=block, **pool_kwargs
        )

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: float | tuple[float | None, float | None] | None = None,
        verify: bool | str = True,
        cert: str | tuple[str, str] | None = None,
        proxies: dict[str, str] | None = None,
    ) -> requests.Response:
        """Send ``request`` through guarded connections; see the class docstring for errors."""
        if proxies and any(proxies.values()):
            raise ValueError(
                "the guarded session connects directly (through a proxy it would check the "
                "proxy's address, not the site's): remove the proxies setting"
            )
        try:
            return super().send(request, stream, timeout, verify, cert, proxies)
        except _Refused as refused:
            error = refused.error
            error.request = request
            error.url = redact_url(request.url or "")
            raise error from None


class GuardedSession(requests.Session):
    """A requests session that reaches only addresses its policy allows and follows no redirect.

    Raises UnsafeURL for a URL refused before connecting, AddressNotAllowed for a refused address
    (resolved or connected), and RedirectNotFollowed for a 3xx when redirects were allowed; with
    ``allow_redirects=False`` the 3xx is returned for the caller to fetch its target again here.
    """

    def __init__(self, address_allowed: AddressPolicy = address_allowed) -> None:
        super().__init__()
        self.trust_env = False  # no proxies, netrc or CA bundle from the environment
        self.address_allowed = address_allowed
        self._adapters = [GuardedAdapter(address_allowed), GuardedAdapter(address_allowed)]
        self.mount("http://", self._adapters[0])
        self.mount("https://", self._adapters[1])

    def abort(self) -> None:
        """Stop everything this session does, from any thread: open connections are shut down
        (a read blocked on one, even before the response headers, fails at once) and new ones
        are refused. The worker calls it when a tool call is cancelled or runs out of time."""
        for adapter in self._adapters:
            adapter.guard.abort()

    def request(
        self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any
    ) -> requests.Response:
        """Check ``url`` as given (before requests rewrites it), then send the request."""
        _check_url(url if isinstance(url, str) else url.decode("utf-8", "replace"))
        return super().request(method, url, *args, **kwargs)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        """Send one request without following redirects; see the class docstring for errors."""
        _check_url(request.url or "")
        follow = kwargs.pop("allow_redirects", True)
        response = super().send(request, allow_redirects=False, **kwargs)
        if follow and response.is_redirect:
            raise self._redirect_not_followed(response)
        return response

    def resolve_redirects(
        self,
        resp: requests.Response,
        req: requests.PreparedRequest,
        *args: Any,
        yield_requests: bool = False,
        **kwargs: Any,
    ) -> Generator[Any, None, None]:
        """Yield the next request for ``Response.next``; refuse to send it."""
        if not yield_requests and self.get_redirect_target(resp):
            raise self._redirect_not_followed(resp)
        try:
            yield from super().resolve_redirects(
                resp, req, *args, yield_requests=yield_requests, **kwargs
            )
        except ValueError:
            # requests prepares Response.next even when redirects are not followed; a malformed
            # Location makes that raise. The caller judges the Location itself.
            return

    def _redirect_not_followed(self, response: requests.Response) -> RedirectNotFollowed:
        target = self.get_redirect_target(response) or ""
        try:
            location = urljoin(response.url, target)
        except ValueError:
            location = target
        response.close()
        return RedirectNotFollowed(location, response=response)


def interrupt(response: requests.Response) -> None:
    """Wake a read of ``response`` blocked in another thread, from any thread.

    Closing a response does not wake a blocked ``recv``; shutting its socket down (not closing
    it, which the reading thread owns) does. urllib3 keeps the socket on its connection, or,
    once http.client has handed a closing connection to the response, only inside the
    response's file object. The reader then sees an error or a short body: check the signal.
    """
    raw = getattr(response, "raw", None)
    sock = getattr(getattr(raw, "connection", None), "sock", None)
    if sock is None:
        buffered = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(buffered, "raw", None), "_sock", None)
    if isinstance(sock, socket.socket):
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass  # already closed: nothing left to stop


def _check_url(url: str) -> None:
    problem = find_url_problem(url)
    if problem is not None:
        error = UnsafeURL(problem, url=redact_url(url))
        log.warning("%s", error)
        # the scheme problem names the scheme, which is the caller's text: not a fixed phrase
        _refusals.tell("scheme is not http or https" if problem.startswith("scheme ") else problem)
        raise error


def make_session(
    allow_private_networks: bool, address_allowed: AddressPolicy = address_allowed
) -> requests.Session:
    """Return a plain session when private networks are allowed, else a ``GuardedSession``."""
    if allow_private_networks:
        session = requests.Session()
        session.trust_env = False
        return session
    return GuardedSession(address_allowed)
