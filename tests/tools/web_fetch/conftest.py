"""Fixtures for web_fetch: a loopback site on 127.0.0.2 treated as public, simulated DNS, calls.

Fixtures:
    site        a tests.support.sites.Site on 127.0.0.2; ``site.route(path, handler)`` serves a
                path, ``site.requests`` records (path, headers) of every request received
    dns         a dict of host name -> IP that ``socket.getaddrinfo`` answers from (other names
                fail to resolve, so no test reaches real DNS)
    web_fetch   ``web_fetch(options=None, ingesters=(), parsers=None)`` -> a Runner that calls
                the started tool (parsing in-process unless ``parsers`` is a pool); set its
                ``quotas`` to count them, read what its calls metered in ``spent``
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.support.sites import Site
from tools.api import Citation, Ingester, Parsers, Quotas, Signal, Tool
from tools.net import GuardedSession
from tools.testing import start_plugin, tool_context_for_test
from tools.web_fetch import plugin

PUBLIC_IP = "127.0.0.2"


@pytest.fixture
def site() -> Iterator[Site]:
    with Site(PUBLIC_IP) as server:
        yield server


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Answer getaddrinfo from a dict; IP literals pass through; other names do not resolve."""
    names: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[name], int(port)))]
        if name.replace(".", "").isdigit():
            return real(host, port, *args, **kwargs)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return names


@dataclass
class Runner:
    """Calls one started web_fetch tool as a turn would, through a guarded session."""

    tool: Tool
    turn_cache: dict[str, Any] = field(default_factory=dict)
    citations: list[Citation] = field(default_factory=list)
    quotas: Quotas | None = None
    spent: list[tuple[str, str, int]] = field(default_factory=list)

    def __call__(self, url: str, offset: int | None = None, signal: Signal | None = None) -> Any:
        raw: dict[str, Any] = {"url": url}
        if offset is not None:
            raw["offset"] = offset
        session = GuardedSession(address_allowed=lambda ip: ip == PUBLIC_IP)
        ctx, citations = tool_context_for_test(
            fetch=session, signal=signal, turn_cache=self.turn_cache, quotas=self.quotas
        )
        try:
            return self.tool.execute(self.tool.validate_input(raw), ctx)
        finally:
            self.citations.extend(citations)
            self.spent.extend(ctx.meter.counts())
            session.close()


@pytest.fixture
def web_fetch() -> Callable[..., Runner]:
    def start(
        options: dict[str, Any] | None = None,
        ingesters: tuple[Ingester, ...] = (),
        parsers: Parsers | None = None,
    ) -> Runner:
        tools = start_plugin(plugin, options or {}, ingesters=ingesters, parsers=parsers)
        return Runner(tools["web_fetch"])

    return start
