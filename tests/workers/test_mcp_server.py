"""Lookout's /mcp, driven by the official MCP SDK's client against a live server and a real
worker: a user's guarded web tools (SearXNG and a page on loopback), under the user's token,
scopes and quotas, with output wrapped as untrusted as the model reads it in a turn."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from core.extensions import db, get_redis
from core.limits import set_overrides
from core.mcp_tools import NOT_OFFERED
from core.models import ApiToken, UsageCount, User
from core.quotas import WINDOW_SECONDS, key, remaining
from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.coroutines import run_coroutine
from tests.support.live_server import LiveServer
from tests.support.quotas import hold_window
from tests.support.sites import Site
from tests.support.workers import CeleryWorker
from tools.untrusted import NOTICE
from webapp.auth.scopes import MISSING_SCOPE
from webapp.mcp.server import NO_TOKEN

pytestmark = pytest.mark.integration

HANG_SECONDS = 240  # a bound that only a hang reaches, however busy the machine
SEARCH_USED = "Today's web search quota is used up; it resets at 00:00 UTC."
PAGE = b"<html><body><article><p>" + b"Lighthouse facts. " * 50 + b"</p></article></body></html>"


@pytest.fixture
def site():
    """A SearXNG instance that finds one page, and that page, on one loopback server."""
    with Site() as server:
        found = {
            "query": "q",
            "results": [{"title": "Lighthouses", "url": server.url("/page"), "content": "c"}],
        }
        server.serve("/search", "application/json", json.dumps(found).encode())
        server.serve("/page", "text/html; charset=utf-8", PAGE)
        yield server


@pytest.fixture
def stack(make_app, tmp_path, site):
    """The app with the built-in plugins, its worker and its server; the admin's engine is
    SearXNG on the site. Yields the app, the server's /mcp address and a user's token."""
    app = make_app(ALLOW_PRIVATE_NETWORKS=True)
    with LiveServer(app) as web, CeleryWorker(app, tmp_path):
        _admin, admin_token = token_for(app, admin=True)
        user, user_token = token_for(app)
        ChatClient(web.url, admin_token).search_with_searxng(site.url(""))
        yield app, f"{web.url}/mcp", user_token, user.id


def connect(url: str, token: str) -> Client:
    """Return an MCP SDK client of /mcp that sends the token."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


def use(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Connect with the SDK's client, list the tools and make the calls; return what came."""

    async def session() -> dict[str, Any]:
        async with connect(url, token) as client:
            listed = await client.list_tools()
            results = [await client.call_tool(name, args) for name, args in calls]
            return {"tools": listed.tools, "results": results}

    return run_coroutine(session)


def refusal_of(url: str, token: str) -> MCPError:
    """Return the error the SDK's client raises when it connects with this token."""

    async def session() -> None:
        async with connect(url, token) as client:
            await client.list_tools()

    with pytest.raises(BaseException) as caught:  # the SDK's task group may wrap it
        run_coroutine(session)
    error = caught.value
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    assert isinstance(error, MCPError), repr(caught.value)
    return error


def text_of(result) -> str:
    """Return the one text a tool result holds."""
    assert len(result.content) == 1
    return result.content[0].text


def test_an_mcp_client_searches_and_fetches_with_lookouts_guarded_tools(stack, site):
    app, url, token, user_id = stack

    came = use(
        url,
        token,
        [("web_search", {"query": "lighthouse"}), ("web_fetch", {"url": site.url("/page")})],
    )

    assert {t.name for t in came["tools"]} == {"web_search", "web_fetch"}
    assert all(t.input_schema["type"] == "object" for t in came["tools"])
    search, fetch = came["results"]
    assert not search.is_error and not fetch.is_error
    assert text_of(search).startswith("<untrusted_tool_output id=")
    assert NOTICE in text_of(search) and site.url("/page") in text_of(search)
    assert search.meta["lookout/sources"] == [{"url": site.url("/page"), "title": "Lighthouses"}]
    assert text_of(fetch).startswith("<untrusted_tool_output id=")
    assert "Lighthouse facts." in text_of(fetch)
    assert [p.partition("?")[0] for p in site.paths()] == ["/search", "/page"]
    with app.app_context():
        used = {
            row.metric: row.amount
            for row in db.session.scalars(db.select(UsageCount).filter_by(user_id=user_id))
        }
    assert used["searches"] == 1 and used["pagesFetched"] == 1


def test_a_user_whose_search_quota_is_spent_gets_a_tool_error_with_its_sentence(stack):
    app, url, token, user_id = stack
    with app.app_context():
        set_overrides(user_id, {"searchesPerDay": 1})
        db.session.commit()
        hold_window(get_redis(), key(user_id, "searchesPerDay"), WINDOW_SECONDS["day"])
    search = ("web_search", {"query": "lighthouse"})

    first, second = use(url, token, [search, search])["results"]

    assert not first.is_error
    assert second.is_error
    assert SEARCH_USED in text_of(second)
    with app.app_context():
        shown = {row["limit"]: row for row in remaining(user_id)}
        errors = db.session.scalars(
            db.select(UsageCount.amount).filter_by(user_id=user_id, metric="toolErrors")
        ).all()
    assert shown["searchesPerDay"]["used"] == 1
    assert errors == [1]


def test_a_tool_the_user_switched_off_is_neither_listed_nor_run(stack, site):
    _app, url, token, _user_id = stack
    base = url.removesuffix("/mcp")
    switched = ChatClient(base, token).call(
        "PUT", "/api/plugins/web_fetch/tools/web_fetch", json={"enabled": False}
    )
    assert switched.status_code == 200, switched.text

    async def session() -> tuple[list[str], MCPError]:
        async with connect(url, token) as client:
            listed = await client.list_tools()
            with pytest.raises(MCPError) as refused:
                await client.call_tool("web_fetch", {"url": site.url("/page")})
            return [t.name for t in listed.tools], refused.value

    names, refused = run_coroutine(session)

    assert names == ["web_search"]
    assert refused.error.message == NOT_OFFERED.format(name="web_fetch")
    assert site.paths() == []


def test_a_bad_token_is_refused_with_401_and_a_sentence(stack):
    _app, url, _token, _user_id = stack

    refused = requests.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": "Bearer lk_not-a-token"},
        timeout=30,
    )

    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    assert refused.json()["error"]["message"] == NO_TOKEN
    assert refusal_of(url, "lk_not-a-token").error.message == NO_TOKEN


def test_a_token_without_the_chat_scope_is_refused_with_403(stack):
    app, url, _token, _user_id = stack
    with app.app_context():
        admin = User.make("ops", "password", admin=True)
        row, admin_only = ApiToken.make(admin, "ops", scopes=["admin"])
        db.session.add_all([admin, row])
        db.session.commit()

    refused = requests.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {admin_only}"},
        timeout=30,
    )

    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == MISSING_SCOPE.format(scope="chat")
    assert refusal_of(url, admin_only).error.message == MISSING_SCOPE.format(scope="chat")


def endless_fetch(site) -> dict[str, Any]:
    """Return a JSON-RPC tools/call of web_fetch for the site's endless page."""
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "web_fetch", "arguments": {"url": site.url("/endless")}},
    }


def fetching(site) -> bool:
    """Return whether a worker is reading the site's endless page, waiting as long as a hang:
    the ": running" comment says only that the call was sent, and a client that leaves before
    a worker takes the call cancels it before its fetch starts."""
    stop = time.monotonic() + HANG_SECONDS
    while time.monotonic() < stop:
        if site.bytes_sent:
            return True
        time.sleep(0.05)
    return False


def worker_said(worker: CeleryWorker, words: str, within: float = HANG_SECONDS) -> bool:
    """Return whether the worker's log says ``words`` before the bound runs out."""
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        if words in worker.log.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.timeout(2 * HANG_SECONDS)  # the bounds below catch hangs on a loaded machine
def test_a_client_that_goes_away_cancels_its_call(make_app, tmp_path, site):
    """The fetch of an endless page stops when the MCP client closes its request, long
    before the fetch's own deadline (five minutes, set here).

    Regression: the test's client left as it read the first ": running" (the line iterator
    it dropped closed the connection), before a worker on a busy machine had started the
    fetch, so the cancelled call never reached the page and the page never saw it leave."""
    site.route("/endless", lambda request: request.stream("text/html", b"<p>x</p>", None, 0.05))
    app = make_app(ALLOW_PRIVATE_NETWORKS=True)
    with LiveServer(app) as web, CeleryWorker(app, tmp_path) as worker:
        _admin, admin_token = token_for(app, admin=True)
        _user, token = token_for(app)
        saved = ChatClient(web.url, admin_token).call(
            "PUT", "/api/admin/plugins/web_fetch/options", json={"timeoutSeconds": 300}
        )
        assert saved.status_code == 200, saved.text
        call = endless_fetch(site)
        with requests.post(
            f"{web.url}/mcp",
            json=call,
            headers={"Authorization": f"Bearer {token}"},
            stream=True,
            timeout=HANG_SECONDS,
        ) as running:
            assert running.headers["Content-Type"].startswith("text/event-stream")
            # One iterator, held: a dropped one closes the connection as it is collected.
            lines = running.iter_lines()
            assert next(lines) == b": running"
            assert fetching(site)
        # The client is gone: the fetch is cancelled, and the page's server sees it leave.
        assert site.client_gone.wait(HANG_SECONDS)
        assert worker_said(worker, "tool=web_fetch duration_ms=")
        logged = [line for line in worker.log.read_text(errors="replace").splitlines()]
        assert [line for line in logged if "tool=web_fetch" in line][0].endswith(
            "outcome=cancelled"
        ), logged


MCP_CALLS_FULL = (
    "Your programs have 1 tool call running through Lookout, the most one person may have at "
    "once. Wait for one to finish, then call again."
)


@pytest.mark.timeout(2 * HANG_SECONDS)  # the bounds below catch hangs on a loaded machine
def test_a_program_past_its_calls_at_once_is_told_to_wait_and_a_finished_call_frees_its_place(
    stack, site
):
    """Each MCP call holds a web thread and a worker's; one user's programs may hold
    QUOTA_MCP_CALLS of them (here 1), and a call its client left stops counting."""
    app, url, token, user_id = stack
    site.route("/endless", lambda request: request.stream("text/html", b"<p>x</p>", None, 0.05))
    with app.app_context():
        set_overrides(user_id, {"mcpCalls": 1})
        db.session.commit()
    call = endless_fetch(site)
    with requests.post(
        url,
        json=call,
        headers={"Authorization": f"Bearer {token}"},
        stream=True,
        timeout=HANG_SECONDS,
    ) as running:
        lines = running.iter_lines()  # held: a dropped one closes the connection
        assert next(lines) == b": running"
        assert fetching(site)
        (refused,) = use(url, token, [("web_search", {"query": "lighthouse"})])["results"]
        assert refused.is_error
        assert text_of(refused) == f"Error: {MCP_CALLS_FULL}"
        with app.app_context():
            assert {r["limit"]: r for r in remaining(user_id)}["mcpCalls"]["used"] == 1
    # The first client left: its call is cancelled and its place freed.
    assert site.client_gone.wait(HANG_SECONDS)
    deadline = time.monotonic() + HANG_SECONDS
    while True:
        with app.app_context():
            used = {r["limit"]: r for r in remaining(user_id)}["mcpCalls"]["used"]
        if used == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert used == 0
    (search,) = use(url, token, [("web_search", {"query": "lighthouse"})])["results"]
    assert not search.is_error
