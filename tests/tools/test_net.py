"""The guarded fetch against real loopback servers, with DNS simulated by replacing getaddrinfo."""

from __future__ import annotations

import ipaddress
import logging
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.sites import Site, SiteHandler
from tools.net import (
    AddressNotAllowed,
    GuardedSession,
    RedirectNotFollowed,
    UnsafeURL,
    address_allowed,
    find_refusal_reason,
    make_session,
    on_refusal,
)

LARGE_BODY_SIZE = 8 * 1024 * 1024
CHUNK = b"0123456789abcdef" * 4096


def hello(request: SiteHandler) -> None:
    request.reply(200, None, f"hello from {request.server.host}".encode())


def large(request: SiteHandler) -> None:
    request.send_response(200)
    request.send_header("Content-Length", str(LARGE_BODY_SIZE))
    request.end_headers()
    for _ in range(LARGE_BODY_SIZE // len(CHUNK)):
        request.wfile.write(CHUNK)


def make_site(host: str, port: int = 0, tls: ssl.SSLContext | None = None) -> Site:
    """A site answering every path with a hello naming its host, with /redirect (to
    ``site.redirect_to``) and /large (8 MiB); ``site.paths()`` lists what it was asked."""
    site = Site(host, port, tls, protocol="HTTP/1.0")
    site.redirect_to = ""
    site.fallback = hello
    site.route("/redirect", lambda request: request.redirect(302, site.redirect_to))
    site.route("/large", large)
    return site


class FakeDNS:
    """Stands in for socket.getaddrinfo: made-up names get scripted answers, one per call."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        self.answers: dict[str, list[list[str]]] = {}
        self.calls: list[str] = []

    def add(self, name: str, *answers: list[str]) -> None:
        """Answer ``name`` with each list of addresses in turn; the last one repeats."""
        self.answers[name] = list(answers)

    def __call__(self, host: str, port: Any, family: int = 0, type: int = 0, *args: Any) -> Any:  # noqa: A002
        self.calls.append(host)
        if host not in self.answers:
            return self.real(host, port, family, type, *args)
        queue = self.answers[host]
        ips = queue.pop(0) if len(queue) > 1 else queue[0]
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, port, 0, 0))
            if ":" in ip
            else (socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))
            for ip in ips
        ]


def public_127_0_0_2(ip: str) -> bool:
    """A policy that treats 127.0.0.2 as a public address, as the test sites live there."""
    return ip == "127.0.0.2" or address_allowed(ip)


@pytest.fixture(autouse=True)
def only_loopback_is_dialled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that makes a socket connect anywhere but loopback (0.0.0.0 lands there)."""
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        host = address[0]
        assert host == "0.0.0.0" or ipaddress.ip_address(host).is_loopback, f"dialled {host}"
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> FakeDNS:
    fake = FakeDNS(socket.getaddrinfo)
    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return fake


@pytest.fixture
def private_site() -> Iterator[Site]:
    site = make_site("127.0.0.1")
    yield site
    site.stop()


@pytest.fixture
def public_site() -> Iterator[Site]:
    """A site on 127.0.0.2, which the ``public_127_0_0_2`` policy treats as public."""
    site = make_site("127.0.0.2")
    yield site
    site.stop()


@pytest.fixture
def session() -> Iterator[GuardedSession]:
    with GuardedSession(public_127_0_0_2) as guarded:
        yield guarded


REFUSED_ADDRESSES = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.254",
    "100.100.100.200",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.1",
    "192.0.0.192",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "168.63.129.16",
    "::",
    "::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::127.0.0.1",
    "::0.0.0.0",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::7f00:1",
    "64:ff9b:1::808:808",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::1",
    "2001::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:2::1",
    "2001:db8::1",
    "3fff::1",
    "fc00::1",
    "fd00::1",
    "fd00:ec2::254",
    "fe80::1",
    "fe80::1%eth0",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "ff0e::1",
    "100::1",
    "5f00::1",
    "::ffff:0:7f00:1",
    "",
    "localhost",
    "127.1",
    "2130706433",
    " 8.8.8.8",
    "8.8.8.8%eth0",
]

ALLOWED_ADDRESSES = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.1",
    "172.32.0.1",
    "192.0.1.1",
    "192.88.98.255",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize("ip", REFUSED_ADDRESSES)
def test_address_that_is_not_globally_routable_is_refused(ip: str) -> None:
    assert not address_allowed(ip)
    assert find_refusal_reason(ip)


@pytest.mark.parametrize("ip", ALLOWED_ADDRESSES)
def test_globally_routable_address_is_allowed(ip: str) -> None:
    assert address_allowed(ip)
    assert find_refusal_reason(ip) is None


def test_refusal_reason_names_the_ipv4_inside_an_ipv6_form() -> None:
    assert find_refusal_reason("64:ff9b::a9fe:a9fe") == (
        "link-local (cloud metadata) (169.254.169.254 inside NAT64 IPv6)"
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://0.0.0.0:{port}/",
        "http://2130706433:{port}/",
        "http://0x7f.1:{port}/",
        "http://0177.0.0.1:{port}/",
        "http://127.1:{port}/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
    ],
)
def test_loopback_server_is_refused_however_it_is_spelled(
    url: str, private_site: Site, session: GuardedSession
) -> None:
    with pytest.raises(AddressNotAllowed) as refused:
        session.get(url.format(port=private_site.port))
    assert isinstance(refused.value, requests.ConnectionError)
    assert private_site.paths() == []


@pytest.mark.parametrize(
    "url", ["http://2130706433:{port}/", "http://0x7f.1:{port}/", "http://127.1:{port}/"]
)
def test_numeric_spellings_do_reach_loopback_without_the_guard(
    url: str, private_site: Site
) -> None:
    """Shows that the spellings refused above really lead to the loopback server."""
    with make_session(allow_private_networks=True) as plain:
        assert plain.get(url.format(port=private_site.port)).text == "hello from 127.0.0.1"


def test_name_resolving_to_a_private_address_is_refused_at_connect_time(
    dns: FakeDNS, private_site: Site, session: GuardedSession
) -> None:
    dns.add("intranet.test", ["127.0.0.1"])
    with pytest.raises(AddressNotAllowed) as refused:
        session.get(f"http://intranet.test:{private_site.port}/")
    assert refused.value.host == "intranet.test"
    assert refused.value.address == "127.0.0.1"
    assert refused.value.reason == "loopback"
    assert dns.calls == ["intranet.test"]
    assert private_site.paths() == []


def test_name_resolving_to_a_public_and_a_private_address_is_refused(
    dns: FakeDNS, public_site: Site, session: GuardedSession
) -> None:
    dns.add("mixed.test", ["127.0.0.2", "127.0.0.1"])
    with pytest.raises(AddressNotAllowed):
        session.get(f"http://mixed.test:{public_site.port}/")
    assert public_site.paths() == []


def test_public_address_is_fetched(public_site: Site, session: GuardedSession) -> None:
    response = session.get(public_site.url(), timeout=(5, 10))
    assert response.status_code == 200
    assert response.text == "hello from 127.0.0.2"


def test_a_guarded_session_leaves_nothing_for_the_cycle_collector(public_site: Site) -> None:
    """Regression: each guarded session made four connection and pool classes an adapter,
    eight a tool call, which only the cycle collector freed (61 objects a session), and a
    worker makes a session a tool call."""
    import gc

    def fetch_once() -> None:
        with GuardedSession(public_127_0_0_2) as guarded:
            assert guarded.get(public_site.url(), timeout=(5, 10)).text == "hello from 127.0.0.2"

    fetch_once()  # imports, caches
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            fetch_once()
        gc.collect()
        # Other threads' garbage (the site's) is not the session's: classes and guards are.
        left = [
            thing
            for thing in gc.garbage
            if isinstance(thing, type) or type(thing).__module__.startswith(("tools.", "urllib3"))
        ]
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    assert left == []


def test_name_resolving_to_a_public_address_is_fetched(
    dns: FakeDNS, public_site: Site, session: GuardedSession
) -> None:
    dns.add("public.test", ["127.0.0.2"])
    assert session.get(f"http://public.test:{public_site.port}/").text == "hello from 127.0.0.2"


def test_redirect_raises_when_redirects_are_allowed(
    public_site: Site, private_site: Site, session: GuardedSession
) -> None:
    public_site.redirect_to = private_site.url("/secret")
    with pytest.raises(RedirectNotFollowed) as not_followed:
        session.get(public_site.url("/redirect"))
    assert not_followed.value.location == private_site.url("/secret")
    assert not_followed.value.response is not None
    assert not_followed.value.response.status_code == 302
    assert private_site.paths() == []


def test_relative_redirect_location_is_made_absolute(
    public_site: Site, session: GuardedSession
) -> None:
    public_site.redirect_to = "/elsewhere"
    with pytest.raises(RedirectNotFollowed) as not_followed:
        session.request("GET", public_site.url("/redirect"))
    assert not_followed.value.location == public_site.url("/elsewhere")


def test_private_address_is_refused_after_redirect(
    public_site: Site, private_site: Site, session: GuardedSession
) -> None:
    public_site.redirect_to = private_site.url("/secret")
    response = session.get(public_site.url("/redirect"), allow_redirects=False)
    assert response.status_code == 302
    assert response.history == []
    with pytest.raises(AddressNotAllowed):
        session.get(response.headers["Location"], allow_redirects=False)
    assert response.next is not None
    with pytest.raises(AddressNotAllowed):
        session.send(response.next)
    assert private_site.paths() == []


def test_public_redirect_can_be_followed_by_hand(
    public_site: Site, session: GuardedSession
) -> None:
    public_site.redirect_to = public_site.url("/landing")
    response = session.get(public_site.url("/redirect"), allow_redirects=False)
    assert session.get(response.headers["Location"]).text == "hello from 127.0.0.2"
    assert public_site.paths() == ["/redirect", "/landing"]


def test_rebinding_name_connects_only_to_the_address_that_was_checked(
    dns: FakeDNS, public_site: Site, session: GuardedSession
) -> None:
    """DNS rebinding: the second answer must never be the one connected to."""
    try:
        rebound = make_site("127.0.0.1", public_site.port)
    except OSError:
        pytest.skip("port taken on 127.0.0.1")
    try:
        dns.add("rebind.test", ["127.0.0.2"], ["127.0.0.1"])
        response = session.get(f"http://rebind.test:{public_site.port}/")
        assert response.text == "hello from 127.0.0.2"
        assert dns.calls == ["rebind.test"]
        assert rebound.paths() == []
    finally:
        rebound.stop()


def test_rebinding_name_is_refused_when_its_new_answer_is_private(
    dns: FakeDNS, public_site: Site, private_site: Site
) -> None:
    """A fresh connection resolves again, and the new private answer is refused."""
    dns.add("rebind.test", ["127.0.0.2"], ["127.0.0.1"])
    with GuardedSession(public_127_0_0_2) as first, GuardedSession(public_127_0_0_2) as second:
        first.get(f"http://rebind.test:{public_site.port}/")
        with pytest.raises(AddressNotAllowed):
            second.get(f"http://rebind.test:{private_site.port}/")
    assert private_site.paths() == []


def test_connected_peer_is_checked_again(private_site: Site) -> None:
    """Connecting to 0.0.0.0 lands on 127.0.0.1; a policy wrongly allowing 0.0.0.0 is caught."""

    def allows_unspecified(ip: str) -> bool:
        return ip == "0.0.0.0"

    with GuardedSession(allows_unspecified) as session:
        with pytest.raises(AddressNotAllowed) as refused:
            session.get(f"http://0.0.0.0:{private_site.port}/")
    assert refused.value.address == "127.0.0.1"
    assert "connected peer" in refused.value.reason
    assert private_site.paths() == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://user:hunter2@127.0.0.2:{port}/", "credentials"),
        ("http://user@127.0.0.2:{port}/", "credentials"),
        ("http://127.0.0.1:{port}\\@127.0.0.2:{port}/", "backslash"),
        ("http://127.0.0.2:{port}/a b", "space"),
        ("http://127.0.0.2:{port}/a\tb", "control"),
        ("http://127.0.0.2:{port}/a\nb", "control"),
        ("http://127.0.0.2:{port}/a\x00b", "control"),
        ("ftp://127.0.0.2:{port}/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("http:///path", "no host"),
        ("http://127.0.0.2:99999/", "unparsable"),
    ],
)
def test_unsafe_url_is_refused_before_connecting(
    url: str, reason: str, public_site: Site, session: GuardedSession
) -> None:
    with pytest.raises(UnsafeURL) as refused:
        session.get(url.format(port=public_site.port))
    assert reason in refused.value.reason
    assert isinstance(refused.value, AddressNotAllowed)
    assert isinstance(refused.value, requests.exceptions.InvalidURL)
    assert "hunter2" not in str(refused.value)
    assert public_site.paths() == []


def test_unsafe_prepared_request_is_refused_by_send(
    public_site: Site, session: GuardedSession
) -> None:
    prepared = requests.Request("GET", f"http://user:pw@127.0.0.2:{public_site.port}/").prepare()
    with pytest.raises(UnsafeURL):
        session.send(prepared)
    assert public_site.paths() == []


def test_refusal_is_logged_once_without_query_string_or_credentials(
    dns: FakeDNS, private_site: Site, session: GuardedSession, caplog: pytest.LogCaptureFixture
) -> None:
    dns.add("secret.test", ["127.0.0.1"])
    caplog.set_level(logging.WARNING, logger="lookout.net")
    with pytest.raises(AddressNotAllowed) as refused:
        session.get(f"http://secret.test:{private_site.port}/page?token=abc123#frag")
    [record] = caplog.records
    assert record.name == "lookout.net"
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "refused 127.0.0.1 for secret.test: loopback"
    assert "abc123" not in str(refused.value) and "abc123" not in refused.value.url
    assert refused.value.url == f"http://secret.test:{private_site.port}/page"


def test_unsafe_url_refusal_is_logged_without_credentials(
    session: GuardedSession, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lookout.net")
    with pytest.raises(UnsafeURL):
        session.get("http://user:hunter2@example.test/x?key=sesame")
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "refused URL http://example.test/x: credentials (user@) in the URL"
    )


def test_refusals_are_told_to_listeners_by_rule_once_each(
    dns: FakeDNS, private_site: Site, session: GuardedSession
) -> None:
    heard: list[str] = []
    remove = on_refusal(heard.append)
    on_refusal(heard.append)  # added twice, heard once
    try:
        dns.add("inside.test", ["10.1.2.3"])
        for url in (
            f"http://127.0.0.1:{private_site.port}/",
            "http://inside.test/",
            "gopher://example.test/",
            "http://user:pw@example.test/",
        ):
            with pytest.raises(AddressNotAllowed):
                session.get(url)
    finally:
        remove()
    assert heard == [
        "loopback",
        "private network",
        "scheme is not http or https",
        "credentials (user@) in the URL",
    ]
    with pytest.raises(AddressNotAllowed):
        session.get(f"http://127.0.0.1:{private_site.port}/")
    assert len(heard) == 4
    assert private_site.paths() == []


def test_plain_session_reaches_loopback_when_private_networks_are_allowed(
    private_site: Site,
) -> None:
    with make_session(allow_private_networks=True) as plain:
        assert not isinstance(plain, GuardedSession)
        assert plain.get(private_site.url()).text == "hello from 127.0.0.1"


def test_guarded_session_is_made_when_private_networks_are_not_allowed(
    private_site: Site,
) -> None:
    with make_session(allow_private_networks=False) as guarded:
        assert isinstance(guarded, GuardedSession)
        assert guarded.trust_env is False
        with pytest.raises(AddressNotAllowed):
            guarded.get(private_site.url())


def test_environment_proxies_are_ignored(
    monkeypatch: pytest.MonkeyPatch, public_site: Site, session: GuardedSession
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "")
    assert session.get(public_site.url()).text == "hello from 127.0.0.2"


def test_explicit_proxy_is_rejected(public_site: Site, session: GuardedSession) -> None:
    with pytest.raises(ValueError, match="proxies"):
        session.get(public_site.url(), proxies={"http": "http://127.0.0.2:9"})
    assert public_site.paths() == []


def test_large_body_streams_through_the_guard(public_site: Site, session: GuardedSession) -> None:
    with session.get(public_site.url("/large"), stream=True) as response:
        sizes = [len(chunk) for chunk in response.iter_content(64 * 1024)]
    assert sum(sizes) == LARGE_BODY_SIZE
    assert len(sizes) > 1


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for lookout.test, made with the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", "/CN=lookout.test",
         "-addext", "subjectAltName=DNS:lookout.test",
         "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_site(certificate: tuple[Path, Path]) -> Iterator[tuple[Site, list[str | None]]]:
    """An HTTPS site on 127.0.0.2 serving lookout.test, with the SNI names clients sent."""
    server_names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    context.sni_callback = lambda _sock, name, _context: server_names.append(name)
    site = make_site("127.0.0.2", tls=context)
    yield site, server_names
    site.stop()


def test_https_verifies_the_certificate_and_sends_sni_for_the_hostname(
    dns: FakeDNS,
    tls_site: tuple[Site, list[str | None]],
    certificate: tuple[Path, Path],
    session: GuardedSession,
) -> None:
    site, server_names = tls_site
    dns.add("lookout.test", ["127.0.0.2"])
    response = session.get(f"https://lookout.test:{site.port}/", verify=str(certificate[0]))
    assert response.text == "hello from 127.0.0.2"
    assert server_names == ["lookout.test"]


def test_https_refuses_a_certificate_for_another_name(
    dns: FakeDNS,
    tls_site: tuple[Site, list[str | None]],
    certificate: tuple[Path, Path],
    session: GuardedSession,
) -> None:
    site, _ = tls_site
    dns.add("other.test", ["127.0.0.2"])
    with pytest.raises(requests.exceptions.SSLError):
        session.get(f"https://other.test:{site.port}/", verify=str(certificate[0]))
    assert site.paths() == []


def test_https_to_a_private_name_is_refused_before_the_handshake(
    dns: FakeDNS, certificate: tuple[Path, Path], session: GuardedSession
) -> None:
    dns.add("lookout.test", ["10.1.2.3"])
    with pytest.raises(AddressNotAllowed) as refused:
        session.get("https://lookout.test/", verify=str(certificate[0]))
    assert refused.value.reason == "private network"


def test_abort_wakes_a_read_blocked_before_the_response_headers():
    """Regression: a cancelled tool call waited for a silent server until the HTTP timeout."""
    import socket as socket_module
    import time

    listener = socket_module.socket()
    listener.bind(("127.0.0.2", 0))
    listener.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    session = GuardedSession(address_allowed=lambda ip: ip == "127.0.0.2")
    url = f"http://127.0.0.2:{listener.getsockname()[1]}/silent"
    threading.Timer(0.3, session.abort).start()
    started = time.monotonic()
    with pytest.raises(requests.RequestException):
        session.get(url, timeout=10, allow_redirects=False)
    assert time.monotonic() - started < 2
    with pytest.raises(requests.RequestException):
        session.get(url, timeout=10, allow_redirects=False)  # aborted sessions stay aborted
    for connection, _address in accepted:
        connection.close()
    listener.close()
