"""What the fuzz tests of /v1 and /mcp share: hypothesis's settings, hostile JSON, and the app
served over HTTP with a worker, every connection of both held to loopback.

    with fuzzed_app(directory, redis_url, sqlite_template, "v1") as app:
        with guarded_server(app, directory) as server:   # a user's bearer session, server.url
            ...

``FUZZ_EXAMPLES`` sets the examples per drawn test (default 40).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.extensions import db
from tests.conftest import RUN_ID
from tests.support import loopback
from tests.support.chat_page import token_for
from tests.support.live_server import LiveServer
from tests.support.workers import CeleryWorker
from webapp import create_app

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
TIMEOUT_SECONDS = max(300, EXAMPLES * 10)  # the module's: a bound only a hang reaches


def fuzz_settings(examples: int) -> settings:
    """Return hypothesis's settings for a fuzz test of ``examples`` cases a test: the same
    cases each run (derandomized, no example database), no deadline on a busy machine."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=True,
    )


FUZZ = fuzz_settings(EXAMPLES)
# Texts that broke servers before: NUL, half a UTF-16 pair, one over a 65,535 limit.
HOSTILE_TEXTS = ["", "\x00", "\ud800", "\udfff x", "a" * 70_000]


def hostile_json(keys: list[str], texts: list[str]) -> st.SearchStrategy[Any]:
    """Return JSON of every type: numbers at the edges, the hostile texts and ``texts``, and
    lists and objects (keyed by ``keys``, NUL and a lone surrogate) of them."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
        st.sampled_from(HOSTILE_TEXTS + texts),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.sampled_from([*keys, "\x00", "\ud800"]), inner, max_size=4),
        ),
        max_leaves=12,
    )


def encoded(value: Any) -> bytes:
    """Return ``value`` as JSON bytes, lone surrogates escaped (as a client may send them)."""
    return json.dumps(value).encode()


def nested(depth: int) -> bytes:
    """Return ``depth`` nested lists as JSON."""
    return b"[" * depth + b"]" * depth


# Bodies sent as something other than JSON, and credentials that are not a token.
CONTENT_TYPES = [
    None,
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/json; charset=latin-1",
    "application/json; charset=utf-16",
    "application/json; charset=nonsense",
    "application/json\x00",
    "application/xml",
    "text/event-stream",
    "*/*",
]
AUTHORIZATIONS = [
    None,
    "",
    "Bearer",
    "Bearer ",
    "Bearer nope",
    "Basic dXNlcjpwYXNz",
    "Bearer " + "a" * 10_000,
    "Bearer lk_\xe9\xff",
    "Token abc",
]


def send_raw(
    session: requests.Session,
    path: str,
    body: bytes,
    content_type: str | None = "application/json",
    timeout: float = 60,
) -> requests.Response:
    """POST raw bytes to ``path`` of the session's server and read the whole answer (an event
    stream to its end); ``timeout`` is a bound only a hang reaches."""
    headers = {"Accept": "application/json, text/event-stream"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return session.post(f"{session.url}{path}", data=body, headers=headers, timeout=timeout)


def fuzz_bodies(check: Callable[[bytes], None], hostile: st.SearchStrategy[Any]) -> None:
    """Call ``check`` with drawn bodies: ``hostile`` JSON, then any bytes at all."""
    for bodies in (hostile.map(encoded), st.binary(max_size=200)):

        @FUZZ
        @given(body=bodies)
        def fuzz(body: bytes) -> None:
            check(body)

        fuzz()


def strict_json(text: str) -> Any:
    """Return the JSON of ``text``; ValueError for NaN or Infinity, which are not JSON (Python's
    parser reads them, a client's need not)."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON: {text[:200]}")

    return json.loads(text, parse_constant=refuse)


def assert_no_server_error(response: requests.Response) -> None:
    """Assert the answer is no 5xx and shows no traceback."""
    assert "Traceback" not in response.text, response.text
    assert response.status_code < 500, f"{response.status_code}: {response.text[:2000]}"


@contextmanager
def fuzzed_app(
    directory: Path, redis_url: str, sqlite_template: Path, name: str, **config: Any
) -> Iterator[Flask]:
    """Yield an app with the built-in plugins, on its own database and queue."""
    path = directory / "lookout.db"
    shutil.copyfile(sqlite_template, path)
    app = create_app(
        {
            "TESTING": True,
            "SECRET_KEY": f"{name}-fuzz-tests",
            "DATABASE_URL": f"sqlite:///{path}",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-{name}-fuzz-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            **config,
        }
    )
    try:
        yield app
    finally:
        with app.app_context():
            db.engine.dispose()


@contextmanager
def guarded_server(app: Flask, directory: Path) -> Iterator[requests.Session]:
    """Serve ``app`` over HTTP with a worker, this process and the worker held to loopback;
    yield a session holding a new user's chat token, with ``url`` (the server's) set on it.
    Fails after when anything tried to reach past loopback."""
    log = directory / "refused.log"
    guard = loopback.install(log)
    try:
        env = loopback.environ({}, log)
        with CeleryWorker(app, directory, concurrency=2, extra_env=env), LiveServer(app) as live:
            with requests.Session() as session:
                session.headers["Authorization"] = f"Bearer {token_for(app)[1]}"
                session.url = live.url
                yield session
    finally:
        loopback.uninstall(guard)
    assert not log.exists(), f"Connections outside loopback:\n{log.read_text()}"
