"""Downloads one URL for web_fetch: guarded hops, redirects by hand, byte limits, prompt stops.

``download`` raises ``ToolRefused`` for a refused address or domain, ``ToolError`` for every
other failure (a malformed URL or ``Location``, HTTP status, redirects, unsupported type, size,
timeout, network), and
``Cancelled`` when the turn's signal trips, whether by cancellation or its deadline; no
``requests`` exception escapes. The fetch's own ``timeoutSeconds`` budget, covering every hop
and the body, is a ``ToolError`` ("took longer than"), so the model can try another page.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn
from urllib.parse import unquote, urljoin, urlsplit

import requests
import urllib3.exceptions

from tools.api import Cancelled, Signal, ToolError, ToolRefused, normalise_mime_type
from tools.bodies import BodyError, network_reason, read_body, time_budget
from tools.charset import charset_from_content_type
from tools.net import AddressNotAllowed, redact_url
from tools.urls import request_host
from tools.web_fetch.options import DomainRules

PAGE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/json"}
)
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
ACCEPT = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.5"
_FILENAME = re.compile(r"""filename\s*=\s*"?([^";]+)"?""", re.I)


@dataclass(frozen=True)
class FetchLimits:
    """What bounds a download: domain rules, byte limits, the time budget and the User-Agent."""

    rules: DomainRules
    max_bytes: int
    max_file_bytes: int
    timeout_seconds: float
    user_agent: str


@dataclass(frozen=True)
class Download:
    """A downloaded body: the final URL, its bare MIME type and charset, the bytes read, and
    whether reading stopped at the size limit with more to come (``cut``)."""

    url: str
    mime_type: str
    charset: str | None
    data: bytes
    filename: str | None
    cut: bool = False

    @property
    def is_page(self) -> bool:
        """Whether the body is a page (read as text) rather than a file for the ingesters."""
        return self.mime_type in PAGE_TYPES


def download(
    url: str,
    session: requests.Session,
    signal: Signal,
    limits: FetchLimits,
    accepts_file: Callable[[str], bool],
    log: logging.Logger,
) -> Download:
    """Return the body at ``url`` after following redirects; see the module docstring for errors."""
    with time_budget(signal, limits.timeout_seconds) as budget:
        with _translated(url, signal, budget, limits.timeout_seconds):
            return _Fetch(session, budget, limits, log).run(url, accepts_file)


@contextmanager
def _translated(url: str, signal: Signal, budget: Signal, seconds: float) -> Iterator[None]:
    """Turn a stop into ``Cancelled`` or the time-limit error, requests errors into sentences."""
    try:
        yield
    except (
        Cancelled,
        BodyError,
        requests.RequestException,
        urllib3.exceptions.HTTPError,
        OSError,
    ) as exc:
        if signal.cancelled:
            raise Cancelled(signal.reason or "cancelled") from exc
        if budget.cancelled or isinstance(exc, requests.Timeout):
            unit = "second" if seconds == 1 else "seconds"
            raise ToolError(f"Fetching {url} took longer than {seconds:g} {unit}.") from exc
        if isinstance(exc, Cancelled):
            raise
        if isinstance(exc, requests.exceptions.InvalidURL):
            raise ToolError(f"{url} is not a valid URL.") from exc
        reason = exc.reason if isinstance(exc, BodyError) else network_reason(exc)
        raise ToolError(f"Fetching {url} failed: {reason}. {_NEXT_STEP[reason]}") from exc


_NEXT_STEP = {
    "its host name could not be found": "Check the URL.",
    "the site's TLS certificate could not be verified": "Try another page.",
    "the site sent a body that could not be decompressed": "Try another page.",
    "the site did not answer in time": "Try again later.",
    "the site could not be reached": "Try again later.",
    "the connection broke off": "Try again, or try another page.",
}


class _Fetch:
    """One download in progress: the hops and the body, stopped by ``budget``.

    A hop's request waits for its headers at most what is left of the budget; a body is read
    by ``read_body``, which shuts the socket down the moment the budget trips.
    """

    def __init__(
        self,
        session: requests.Session,
        budget: Signal,
        limits: FetchLimits,
        log: logging.Logger,
    ) -> None:
        self.session = session
        self.budget = budget
        self.limits = limits
        self.log = log

    def run(self, url: str, accepts_file: Callable[[str], bool]) -> Download:
        response, final_url = self._follow(url)
        with response:
            content_type = response.headers.get("Content-Type", "")
            mime_type = normalise_mime_type(content_type) or "application/octet-stream"
            cut = False
            if mime_type in PAGE_TYPES:
                body = read_body(response, self.limits.max_bytes, self.budget)
                data, cut = body.data, body.cut
            else:
                data = self._read_file(response, final_url, mime_type, accepts_file)
        return Download(
            url=final_url,
            mime_type=mime_type,
            charset=charset_from_content_type(content_type),
            data=data,
            filename=_filename(response, final_url),
            cut=cut,
        )

    def _follow(self, url: str) -> tuple[requests.Response, str]:
        current = url
        for hop in range(MAX_REDIRECTS + 1):
            response = self._get(current)
            status = response.status_code
            if status in REDIRECT_STATUSES and response.headers.get("Location"):
                location = response.headers["Location"]
                response.close()
                if hop == MAX_REDIRECTS:
                    raise ToolError(f"Fetching {url} stopped after {MAX_REDIRECTS} redirects.")
                try:
                    current = urljoin(current, location)
                except ValueError:
                    raise ToolError(
                        f"Fetching {url} failed: the site redirected to an address that is not "
                        "a valid URL. Try another page."
                    ) from None
                continue
            if status >= 400 or status in REDIRECT_STATUSES:
                response.close()
                raise ToolError(f"Fetching {current} failed (HTTP {status}).")
            return response, current
        raise AssertionError("unreachable: the loop returns or raises")

    def _get(self, url: str) -> requests.Response:
        try:
            scheme = urlsplit(url).scheme.lower()
        except ValueError:
            raise ToolError(f"{url} is not a valid URL.") from None
        if scheme not in ("http", "https"):
            self._refuse(url, "only http and https addresses are read")
        try:
            host = request_host(url)
        except ValueError:
            raise ToolError(f"{url} is not a valid URL.") from None
        # The lists judge the host the connection will be made to, however the URL spells it.
        reason = self.limits.rules.refusal(host)
        if reason is not None:
            self._refuse(url, reason)
        timeout = self.budget.timeout(self.limits.timeout_seconds)
        try:
            response = self.session.get(
                url,
                headers={"User-Agent": self.limits.user_agent, "Accept": ACCEPT},
                allow_redirects=False,
                stream=True,
                timeout=None if math.isinf(timeout) else timeout,
            )
        except AddressNotAllowed as exc:
            self._refuse(url, exc.why, exc)
        return response

    def _refuse(self, url: str, why: str, cause: Exception | None = None) -> NoReturn:
        # The spec's sentence, then why, so that the person can tell a private address from
        # the admin's domain lists.
        self.log.warning("web_fetch refused %s: %s", redact_url(url), why)
        raise ToolRefused(f"Fetching {url} is not allowed: {why}.") from cause

    def _read_file(
        self,
        response: requests.Response,
        url: str,
        mime_type: str,
        accepts_file: Callable[[str], bool],
    ) -> bytes:
        if not accepts_file(mime_type):
            raise ToolError(f"{url} is of type {mime_type}, which Lookout cannot read.")
        limit = self.limits.max_file_bytes
        too_large = ToolError(f"{url} is larger than the {limit / 1_000_000:g} MB limit for files.")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_large
        body = read_body(response, limit, self.budget)
        if body.cut:
            raise too_large
        return body.data


def _filename(response: requests.Response, url: str) -> str | None:
    match = _FILENAME.search(response.headers.get("Content-Disposition", ""))
    if match:
        return match.group(1).strip() or None
    last = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return last or None
