"""Runs a search with any engine: sends its request, words failures, and cleans the results.

Everything here is written once for every engine: the User-Agent, the 15 second timeout
combined with the turn's signal, the mapping of HTTP and network errors to sentences that name
the engine (never its key), and the stripping and cutting of titles and snippets.
"""

from __future__ import annotations

import html
import json
import re
import time
from typing import Any

import lxml.etree
import lxml.html
import requests
import urllib3

from tools.api import Signal, ToolError, ToolRefused
from tools.citations import is_presentable_url
from tools.net import AddressNotAllowed, interrupt
from tools.web_search.engine import (
    EngineBlocked,
    EngineRequest,
    MalformedResponse,
    Search,
    SearchEngine,
    SearchResult,
)

TIMEOUT_SECONDS = 15
MAX_BODY_BYTES = 5_000_000
MAX_SNIPPET_CHARS = 500
MAX_DETAIL_CHARS = 300
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TAG = re.compile(r"<[^>]*>")
_READ_ERRORS = (requests.RequestException, urllib3.exceptions.HTTPError, OSError, AttributeError)


def run_search(
    engine: SearchEngine,
    search: Search,
    session: requests.Session,
    signal: Signal,
    user_agent: str,
) -> list[SearchResult]:
    """Return the engine's results for ``search``, cleaned and cut to ``search.count``.

    Raises ``ToolError`` naming the engine (``ToolRefused`` for a refused address) and
    ``tools.api.Cancelled`` when the signal trips.
    """
    request = engine.request(search)
    status, body = _send(engine, request, session, signal, user_agent)
    if status != 200:
        raise ToolError(error_message(engine, status, body, search.api_key))
    try:
        found = engine.parse(body)
    except EngineBlocked as exc:
        raise ToolError(scrub(exc.message, search.api_key)) from None
    except MalformedResponse:
        raise ToolError(unreadable(engine)) from None
    return clean_results(found, search.count)


def unreadable(engine: SearchEngine) -> str:
    """Return the message for a body that is not what the engine should send."""
    return f"{engine.name} returned a response Lookout could not read."


def _send(
    engine: SearchEngine,
    request: EngineRequest,
    session: requests.Session,
    signal: Signal,
    user_agent: str,
) -> tuple[int, str]:
    timeout = signal.timeout(TIMEOUT_SECONDS)
    deadline = time.monotonic() + timeout
    headers = {"User-Agent": user_agent, **(request.headers or {})}
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
    except AddressNotAllowed:
        raise ToolRefused(f"Fetching {request.url} is not allowed.") from None
    except requests.Timeout:
        signal.raise_if_cancelled()
        raise ToolError(_too_slow(engine)) from None
    except requests.RequestException:
        signal.raise_if_cancelled()
        raise ToolError(
            f"{engine.name} could not be reached. Check its address, or try again later."
        ) from None
    undo = signal.on_cancel(lambda: _stop(response))
    try:
        data = _read(engine, response, deadline, signal)
    finally:
        undo()
        response.close()
    return response.status_code, data.decode(_charset(response), errors="replace")


def _read(engine: SearchEngine, response: Any, deadline: float, signal: Signal) -> bytes:
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(64 * 1024):
            signal.raise_if_cancelled()
            if time.monotonic() > deadline:
                raise ToolError(_too_slow(engine))
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ToolError(unreadable(engine))
            chunks.append(chunk)
    except _READ_ERRORS:
        # Closing the response on cancel breaks the read; report the cancel, not the break.
        signal.raise_if_cancelled()
        if time.monotonic() >= deadline - 0.05:
            raise ToolError(_too_slow(engine)) from None
        raise ToolError(f"{engine.name} stopped answering halfway. Try again later.") from None
    signal.raise_if_cancelled()
    return b"".join(chunks)


def _stop(response: Any) -> None:
    interrupt(response)
    response.close()


def _too_slow(engine: SearchEngine) -> str:
    return f"{engine.name} did not answer within {TIMEOUT_SECONDS} seconds. Try again later."


def _charset(response: Any) -> str:
    content_type = response.headers.get("Content-Type", "")
    match = re.search(r"charset=[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    if match:
        try:
            "".encode(match.group(1))
            return match.group(1)
        except LookupError:
            pass
    return "utf-8"


def error_message(engine: SearchEngine, status: int, body: str, api_key: str | None) -> str:
    """Return the sentence for an error status, with the engine's own explanation appended."""
    message = engine.describe_error(status, body)
    if message is None:
        if status in (401, 403):
            message = f"The {engine.name} API key was rejected."
        elif status == 429:
            message = f"{engine.name}'s rate limit was reached."
        else:
            message = f"{engine.name} search failed (HTTP {status})."
    detail = _detail(engine, body, api_key)
    if detail:
        message = f'{message} {engine.name} said: "{detail}"'
    return scrub(message, api_key)


def _detail(engine: SearchEngine, body: str, api_key: str | None) -> str | None:
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    try:
        detail = engine.error_detail(parsed)
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    if not detail:
        return None
    text = " ".join(scrub(str(detail), api_key).split())
    if len(text) > MAX_DETAIL_CHARS:
        text = text[: MAX_DETAIL_CHARS - 1].rstrip() + "…"
    return text or None


def scrub(text: str, secret: str | None) -> str:
    """Return ``text`` with every occurrence of ``secret`` hidden."""
    if secret and secret.strip():
        text = text.replace(secret, "[hidden]")
        if secret.strip() != secret:
            text = text.replace(secret.strip(), "[hidden]")
    return text


def clean_results(found: list[SearchResult], count: int) -> list[SearchResult]:
    """Return at most ``count`` results with http(s) URLs, each URL once, text cleaned."""
    out: list[SearchResult] = []
    seen: set[str] = set()
    for result in found:
        url = result.url.strip()
        if not is_presentable_url(url) or url in seen:
            continue
        seen.add(url)
        snippet = clean_text(result.snippet)
        if len(snippet) > MAX_SNIPPET_CHARS:
            snippet = snippet[: MAX_SNIPPET_CHARS - 1].rstrip() + "…"
        out.append(SearchResult(clean_text(result.title), url, snippet))
        if len(out) >= count:
            break
    return out


def clean_text(text: str | None) -> str:
    """Return ``text`` without HTML tags and entities, whitespace collapsed."""
    text = _CONTROL.sub(" ", text or "")
    if "<" in text or "&" in text:
        try:
            text = lxml.html.fragment_fromstring(text, create_parent="div").text_content()
        except (lxml.etree.ParserError, ValueError):
            text = html.unescape(_TAG.sub(" ", text))
    return " ".join(text.split())
