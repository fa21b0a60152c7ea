"""Shared fixtures: Redis, migrated apps, users and signed-in clients, PostgreSQL, workers, servers.

Fixtures (see each docstring):
    redis_url            session: $REDIS_URL, or a private redis-server on a free port
    make_app(**config)   a new app on a fresh migrated SQLite file (or config's DATABASE_URL)
    app, client          one such app and its Flask test client
    make_user(name, admin=False, password="password", disabled=False) -> User (detached)
    signed_in_client(user_or_name=None, admin=False) -> client signed in via the real form,
                         sending X-CSRFToken on every request; `.user` is the User
    make_token(user, name="test") -> the bearer token text
    bearer(user) -> {"Authorization": "Bearer ..."} headers
    postgres_url         a fresh PostgreSQL database (dropped afterwards); skips loudly when
                         TEST_POSTGRES_URL is unset, fails instead when CI=true
    migrated_postgres_url  the same, with the migrations applied
    celery_worker        a real worker process for `app`, answering pings, stopped at teardown
    fake_model           a scripted model server of the test's own (tests.support.fake_model)
    live_server          `app` served over HTTP on 127.0.0.1; `.url`
    chromium_executable  path to Chromium; skips loudly (fails when CI=true) when missing
    usage_day            the day usage is counted on, frozen at USAGE_DAY in this process (the
                         app, its test client and live_server; not a worker process)
"""

from __future__ import annotations

import os
import shutil
import uuid
from datetime import date
from pathlib import Path

import pytest

from core.extensions import db
from core.models import ApiToken, User
from core.models import usage as usage_counts
from tests.support import accounts, databases
from tests.support.fake_model import FakeModel
from tests.support.live_server import LiveServer
from tests.support.processes import stop_orphans
from tests.support.redis_server import RedisServer
from tests.support.workers import CeleryWorker
from webapp import create_app

RUN_ID = uuid.uuid4().hex[:8]
# Mid-month, so that "today" and "this month" differ by days on either side.
USAGE_DAY = date(2026, 11, 18)
IN_CI = os.environ.get("CI", "").lower() == "true"
SKIPPED_SERVICES: list[str] = []


def skip_or_fail(reason: str) -> None:
    """Skip the test with a loud reason, or fail it under CI, where every service must be there."""
    if IN_CI:
        pytest.fail(f"CI=true but {reason}")
    SKIPPED_SERVICES.append(reason)
    pytest.skip(f"!!! SKIPPED, NOT TESTED: {reason} !!!")


def pytest_sessionstart(session):
    """Stop what a killed earlier run left running, before it slows this one down."""
    killed = stop_orphans()
    if killed:
        print(f"tests: killed {killed} processes left running by an earlier run that was killed")


def pytest_terminal_summary(terminalreporter):
    """Repeat, at the very end, which services were missing so that skips are not overlooked."""
    if SKIPPED_SERVICES:
        terminalreporter.section("SERVICES MISSING: SOME TESTS DID NOT RUN", sep="!")
        for reason in sorted(set(SKIPPED_SERVICES)):
            terminalreporter.write_line(f"{SKIPPED_SERVICES.count(reason)} skipped: {reason}")


@pytest.fixture(scope="session")
def redis_url():
    """The Redis URL for the suite: $REDIS_URL when set, else a private server for the session."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    with RedisServer() as server:
        yield server.url


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """An SQLite file migrated once per session, copied for each test's app."""
    path = tmp_path_factory.mktemp("template") / "lookout.db"
    app = create_app({"DATABASE_URL": f"sqlite:///{path}", "SECRET_KEY": "template"})
    databases.migrate(app)
    with app.app_context():
        db.engine.dispose()
    return path


@pytest.fixture
def make_app(tmp_path, redis_url, sqlite_template):
    """Return a factory of apps: test settings, a unique Celery queue, a fresh migrated database.

    Keyword arguments override settings (e.g. DATABASE_URL=migrated_postgres_url, REDIS_URL=...).
    """
    made = []

    def make(**config):
        if "DATABASE_URL" not in config:
            path = tmp_path / f"lookout-{len(made)}.db"
            shutil.copyfile(sqlite_template, path)
            config["DATABASE_URL"] = f"sqlite:///{path}"
        settings = {
            "TESTING": True,
            "SECRET_KEY": "test-secret-key",
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"lookout-test-{RUN_ID}-{uuid.uuid4().hex[:8]}",
            **config,
        }
        app = create_app(settings)
        made.append(app)
        return app

    yield make
    for app in made:
        app.extensions["lookout_health"].stop()  # the /healthz checker, if a test started it
        with app.app_context():
            db.engine.dispose()


@pytest.fixture
def app(make_app):
    """An app on a fresh migrated SQLite database, with CSRF protection on as in production."""
    return make_app()


@pytest.fixture
def client(app):
    """A Flask test client of `app`, signed in as nobody."""
    return app.test_client()


@pytest.fixture
def make_user(app):
    """Return a factory that stores a user and returns it (detached, attributes loaded)."""

    def make(name: str, admin: bool = False, password: str = "password", disabled=False) -> User:
        with app.app_context():
            user = User.make(name, password, admin=admin)
            user.disabled = disabled
            db.session.add(user)
            db.session.commit()
            db.session.refresh(user)
            db.session.expunge(user)
            return user

    return make


@pytest.fixture
def signed_in_client(app, make_user):
    """Return a factory of test clients signed in through the real form.

    Pass a User made with password "password", or a name (a user is made), and admin=True for an
    admin. Every request of the client carries the session's X-CSRFToken header, so JSON calls
    pass CSRF checks; the client's `.user` is the User.
    """

    def make(user: User | str | None = None, admin: bool = False):
        if not isinstance(user, User):
            user = make_user(user or f"user-{uuid.uuid4().hex[:6]}", admin=admin)
        client = app.test_client()
        response = accounts.sign_in(client, user.name, "password")
        assert response.status_code == 302, response.get_data(as_text=True)
        token = accounts.csrf_token_from(client.get("/").get_data(as_text=True))
        client.environ_base["HTTP_X_CSRFTOKEN"] = token
        client.user = user
        return client

    return make


@pytest.fixture
def make_token(app):
    """Return a factory that creates an API token for a user and returns the token text."""

    def make(user: User, name: str = "test") -> str:
        with app.app_context():
            row, token = ApiToken.make(db.session.get(User, user.id), name)
            db.session.add(row)
            db.session.commit()
            return token

    return make


@pytest.fixture
def bearer(make_token):
    """Return a factory of Authorization headers carrying a fresh token of the given user."""
    return lambda user: {"Authorization": f"Bearer {make_token(user)}"}


@pytest.fixture
def postgres_url():
    """A fresh, empty PostgreSQL database (dropped afterwards) on $TEST_POSTGRES_URL's server."""
    server = os.environ.get("TEST_POSTGRES_URL")
    if not server:
        skip_or_fail("TEST_POSTGRES_URL is not set, so PostgreSQL was not tested")
    url = databases.create_postgres_database(server)
    yield url
    databases.drop_postgres_database(server, url)


@pytest.fixture
def migrated_postgres_url(postgres_url, make_app):
    """A fresh PostgreSQL database with every migration applied."""
    databases.migrate(make_app(DATABASE_URL=postgres_url))
    return postgres_url


@pytest.fixture
def celery_worker(app, tmp_path):
    """A real `celery -A workers worker --pool threads` process serving `app`'s queue and database.

    Started with the app's settings as environment; yields the CeleryWorker (its `.log` path helps
    when a test fails) once the worker answered the ping, and stops it at teardown.
    """
    worker = CeleryWorker(app, tmp_path).start()
    yield worker
    worker.stop()


@pytest.fixture
def fake_model():
    """A scripted model server of this test's own."""
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def usage_day(monkeypatch) -> date:
    """Freeze the day usage is counted on at USAGE_DAY: a test that counts today's usage and
    then reads it back would otherwise see the day change between, run at 23:59:59."""
    monkeypatch.setattr(usage_counts, "today", lambda: USAGE_DAY)
    return USAGE_DAY


@pytest.fixture
def live_server(app):
    """`app` served over HTTP by werkzeug in a thread on 127.0.0.1; `.url` is the base URL."""
    with LiveServer(app) as server:
        yield server


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """The path of a Chromium binary, for browser tests."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    skip_or_fail("Chromium is not installed (apt-get install chromium), so pages were not tested")


# One Playwright per session, for every folder: a second session-scoped copy (a fixture
# imported into another module) kept its event loop running in the main thread, and every
# later page test failed with "Sync API inside the asyncio loop".
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser(chromium_executable):
    """The system Chromium under Playwright (never a downloaded browser), closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_executable, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page in its own browser context (own cookies), closed after the test."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    yield context.new_page()
    context.close()
