"""Runs a search with any engine: sends its request, words failures, and cleans the results.

Everything here is written once for every engine: the User-Agent, the 15 second timeout
combined with the turn's signal, the mapping of HTTP and network errors to sentences that name
the engine (never its key), and the cleaning and cutting of titles and snippets (which the
adapters hand over as plain text: only an adapter knows whether its engine sends HTML).

Every failure of the engine is an ``EngineFailed``, a ``ToolError`` that keeps what happened
(``cause``: the spec's sentence with the engine's own words) apart from the next step
(``advice``), and says whether only whoever set the engine up can take that step
(``admin_only``): a user searching with the admin's engine reads the cause, then who can fix it.
A failure that another engine could get past (the engine is rate-limited, blocked or down) is
an ``EngineUnavailable``, whose ``reason`` says which, so that a fallback engine may answer
instead. Errors::

    tools.api.ToolError
    └── EngineFailed          the engine failed; ``cause``, ``advice``, ``admin_only``
        └── EngineUnavailable it is rate-limited, blocked or down (``reason``)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import requests

from tools.api import Cancelled, Signal, ToolError, ToolRefused
from tools.bodies import BodyError, read_body, time_budget
from tools.charset import charset_from_content_type, decode_json
from tools.citations import cut_title, is_presentable_url
from tools.net import AddressNotAllowed, redact_url
from tools.rates import retry_after
from tools.settings import header_unsafe_character, header_unsafe_sentence
from tools.web_search.engine import (
    UNREADABLE_CHARACTERS,
    EngineBlocked,
    EngineRequest,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
    text_from_html,
)
from tools.web_search.sessions import SearchSession

TIMEOUT_SECONDS = 15
MAX_BODY_BYTES = 5_000_000
MAX_SNIPPET_CHARS = 500
MAX_DETAIL_CHARS = 300
TRY_LATER = "Try again later."
WEB_PAGE_HINT = (
    "It sent a web page where Lookout expected JSON: check the engine's address, and any"
    " proxy or sign-in page between this server and the engine."
)


class EngineFailed(ToolError):
    """The engine failed: ``cause`` says what happened, ``advice`` what to do, and
    ``admin_only`` whether only whoever set the engine up (its key, its address) can do it."""

    def __init__(self, cause: str, advice: str = "", admin_only: bool = False) -> None:
        super().__init__(f"{cause} {advice}".strip())
        self.cause = cause
        self.advice = advice
        self.admin_only = admin_only


class EngineUnavailable(EngineFailed):
    """The engine could not search now: ``reason`` is "rate-limited", "blocked" or "down"."""

    def __init__(
        self,
        cause: str,
        reason: str,
        retry_after: float | None = None,
        advice: str = "",
        admin_only: bool = False,
    ) -> None:
        super().__init__(cause, advice, admin_only)
        self.reason = reason
        self.retry_after = retry_after  # seconds, when a rate-limited engine said how long


def run_search(
    engine: SearchEngine,
    search: Search,
    session: requests.Session,
    signal: Signal,
    user_agent: str,
    leave: float = 0.0,
) -> list[SearchResult]:
    """Return the engine's results for ``search``, cleaned and cut to ``search.count``.

    The engine has ``TIMEOUT_SECONDS`` to answer, within the signal's deadline less ``leave``
    seconds (kept for a fallback engine). A ``SearchSession`` is shut down the moment the
    signal trips, even before the engine's response headers. Raises ``EngineFailed`` naming
    the engine (``EngineUnavailable`` when it is rate-limited, blocked or down), ``ToolRefused``
    for a refused address, and ``tools.api.Cancelled`` when the signal trips. No message holds
    the key or the base URL's credentials.
    """
    odd = header_unsafe_character(search.api_key)
    if odd is not None:  # a key stored before keys were checked: say so rather than send it
        cause = header_unsafe_sentence(odd, f"The {engine.name} API key")
        raise EngineFailed(cause, "Copy it again from the engine's page and save it.", True)
    request = engine.request(search)
    hidden = secrets(search)
    limit = TIMEOUT_SECONDS
    if leave:
        limit = max(1.0, min(limit, signal.remaining() - leave))
    status, body, headers = _send(engine, request, session, signal, user_agent, limit)
    if status != 200:
        cause, admin_only = error_message(engine, status, body, *hidden)
        reason = engine.unavailable(status)
        if reason is None:
            hint = _redirect_hint(engine, request.url, status, headers)
            raise EngineFailed(cause, hint, admin_only or bool(hint))
        wait = retry_after(headers) if reason == "rate-limited" else None
        raise EngineUnavailable(cause, reason, wait, admin_only=admin_only)
    try:
        found = engine.parse(body)
    except EngineBlocked as exc:
        raise EngineUnavailable(scrub(exc.message, *hidden), "blocked") from None
    except MalformedResponse as exc:
        # An error body sent with a 200 still says what went wrong; a web page says where.
        cause = with_detail(engine, unreadable(engine), body, *hidden)
        raise EngineFailed(cause, WEB_PAGE_HINT if exc.web_page else "", True) from None
    return clean_results(found, search.count)


def secrets(search: Search) -> tuple[str, ...]:
    """Return what no message may show: the key, and the base URL's user name and password."""
    hidden = [search.api_key or ""]
    try:
        parts = urlsplit(search.base_url or "")
    except ValueError:
        parts = urlsplit("")
    if parts.password:
        hidden.append(unquote(parts.password))
        hidden.append(parts.password)
    if parts.username or parts.password:
        userinfo = parts.netloc.rpartition("@")[0]
        hidden += [userinfo, unquote(userinfo)]
    return tuple(sorted({h for h in hidden if h.strip()}, key=len, reverse=True))


def unreadable(engine: SearchEngine) -> str:
    """Return the message for a body that is not what the engine should send."""
    return f"{engine.name} returned a response Lookout could not read."


def _send(
    engine: SearchEngine,
    request: EngineRequest,
    session: requests.Session,
    signal: Signal,
    user_agent: str,
    limit: float,
) -> tuple[int, str, Mapping[str, str]]:
    timeout = signal.timeout(limit)
    headers = {"User-Agent": user_agent, **(request.headers or {})}
    # One budget for the request and its body: the engine's time limit or the turn's deadline.
    with time_budget(signal, timeout) as budget:
        # A stop shuts the search's own connection down, even while it waits for headers.
        undo = budget.on_cancel(session.abort) if isinstance(session, SearchSession) else None
        try:
            response = session.request(
                request.method,
                request.url,
                params=request.params,
                data=request.data,
                json=request.json,
                headers=headers,
                timeout=timeout,
                stream=True,
                allow_redirects=False,
            )
            with response:
                body = read_body(response, MAX_BODY_BYTES, budget)
        except AddressNotAllowed as exc:
            raise ToolRefused(
                f"Fetching {redact_url(request.url)} is not allowed: {exc.why}."
            ) from None
        except (requests.RequestException, BodyError, Cancelled) as exc:
            signal.raise_if_cancelled()
            if budget.cancelled or isinstance(exc, requests.Timeout):
                raise EngineUnavailable(_too_slow(engine, limit), "down", None, TRY_LATER) from None
            if isinstance(exc, BodyError):
                raise EngineUnavailable(
                    f"{engine.name} stopped answering halfway.", "down", None, TRY_LATER
                ) from None
            raise EngineUnavailable(
                f"{engine.name} could not be reached.",
                "down",
                None,
                "Check its address, or try again later.",
                admin_only=True,
            ) from None
        finally:
            if undo is not None:
                undo()
    if body.cut:
        raise EngineFailed(unreadable(engine), admin_only=True)
    content_type = response.headers.get("Content-Type", "")
    text = decode_json(body.data, charset_from_content_type(content_type))
    return response.status_code, text, response.headers


def _redirect_hint(engine: SearchEngine, url: str, status: int, headers: Mapping[str, str]) -> str:
    """Return the sentence naming the base URL an engine at a base URL redirects to, or ""."""
    location = headers.get("Location") if 300 <= status < 400 else None
    if not engine.needs_base_url or not location or not location.strip():
        return ""
    try:
        target = urlsplit(urljoin(url, location.strip()))
    except ValueError:
        return ""
    if target.username or target.password:
        return ""  # never repeat credentials
    path = target.path.rstrip("/")
    path = path.removesuffix("/search").rstrip("/")
    base = urlunsplit((target.scheme, target.netloc, path, "", ""))
    if not is_presentable_url(base) or len(base) > MAX_DETAIL_CHARS:
        return ""
    return f"It redirects to {base}; enter that as its base URL."


def _too_slow(engine: SearchEngine, limit: float) -> str:
    return f"{engine.name} did not answer within {round(limit, 1):g} seconds."


def error_message(engine: SearchEngine, status: int, body: str, *hidden: str) -> tuple[str, bool]:
    """Return what an error status means (the spec's sentence, or the engine's own, with the
    engine's explanation appended) and whether only whoever set the engine up can act on it:
    anything but a rate limit (429), a block or the engine's own failure (5xx)."""
    message = engine.describe_error(status, body)
    if message is None:
        if status in (401, 403):
            message = f"The {engine.name} API key was rejected."
        elif status == 429:
            message = f"{engine.name}'s rate limit was reached."
        else:
            message = f"{engine.name} search failed (HTTP {status})."
    admin_only = status != 429 and status < 500 and engine.unavailable(status) != "blocked"
    return with_detail(engine, message, body, *hidden), admin_only


def with_detail(engine: SearchEngine, message: str, body: str, *hidden: str) -> str:
    """Return ``message`` with the engine's own explanation from ``body`` appended, if any."""
    detail = _detail(engine, body, *hidden)
    if detail:
        message = f'{message} {engine.name} said: "{detail}"'
    return scrub(message, *hidden)


def _detail(engine: SearchEngine, body: str, *hidden: str) -> str | None:
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):
        return None
    try:
        detail = engine.error_detail(parsed)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        return None
    if not detail:
        return None
    text = " ".join(scrub(str(detail), *hidden).split())
    if len(text) > MAX_DETAIL_CHARS:
        text = text[: MAX_DETAIL_CHARS - 1].rstrip() + "…"
    return text or None


def scrub(text: str, *hidden: str | None) -> str:
    """Return ``text`` with every occurrence of each secret in ``hidden`` hidden."""
    for secret in hidden:
        if secret and secret.strip():
            text = text.replace(secret, "[hidden]")
            if secret.strip() != secret:
                text = text.replace(secret.strip(), "[hidden]")
    return text


def clean_results(found: list[SearchResult], count: int) -> list[SearchResult]:
    """Return at most ``count`` results with http(s) URLs, each page once, their text made
    plain by one rule for every engine (``text_from_html``) and cut: a title as its citation
    keeps it, a snippet to ``MAX_SNIPPET_CHARS``."""
    out: list[SearchResult] = []
    seen: set[str] = set()
    for result in found:
        url = result.url.strip() if isinstance(result.url, str) else ""
        if url.startswith("//"):
            url = f"https:{url}"  # protocol-relative: the secure scheme is the safe guess
        if not is_presentable_url(url) or page_key(url) in seen:
            continue
        seen.add(page_key(url))
        snippet = plain_text(result.snippet)
        if len(snippet) > MAX_SNIPPET_CHARS:
            snippet = snippet[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
        out.append(SearchResult(cut_title(plain_text(result.title)) or "", url, snippet))
        if len(out) >= count:
            break
    return out


def page_key(url: str) -> str:
    """Return what two URLs of the same page share: scheme and host in lower case, no
    default port, no fragment, and ``/`` for an empty path."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        return url  # a port no server has: nothing to compare but the URL itself
    netloc = host if port in (None, {"http": 80, "https": 443}.get(scheme)) else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = f"{parts.username or ''}:{parts.password or ''}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def plain_text(fragment: str | None) -> str:
    """Return a title or snippet from any engine as plain text, whitespace collapsed."""
    return clean_text(text_from_html(fragment or ""))


def clean_text(text: str | None) -> str:
    """Return plain ``text`` without characters no reader sees, whitespace collapsed.

    Never parses markup: text such as ``std::vector<T>`` is kept as it is.
    """
    return " ".join(UNREADABLE_CHARACTERS.sub(" ", text or "").split())
