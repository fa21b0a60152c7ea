"""Pooled database connections are checked before use only once they sat idle a while
(``core.extensions.ping_when_idle``): one the server dropped meanwhile is replaced, unseen."""

from __future__ import annotations

import time

import psycopg
import pytest

from core.extensions import IDLE_PING_SECONDS
from tests.support.databases import libpq_url


@pytest.fixture
def app(make_app, migrated_postgres_url):
    """The app on a fresh migrated PostgreSQL database."""
    return make_app(DATABASE_URL=migrated_postgres_url)


def drop_other_connections(database_url: str) -> int:
    """Make the server end every other connection to the database; return how many."""
    with psycopg.connect(libpq_url(database_url), autocommit=True) as connection:
        rows = connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


@pytest.mark.postgres
def test_a_request_after_the_server_dropped_the_idle_pooled_connection_is_answered(
    app, make_user, bearer, migrated_postgres_url
):
    """The pool no longer pings on every checkout (issue 29): a connection left idle, which a
    restarted or tidying server may have dropped, is still checked, and replaced, before the
    next request uses it."""
    headers = bearer(make_user("ada"))
    client = app.test_client()
    assert client.get("/api/conversations", headers=headers).status_code == 200
    assert drop_other_connections(migrated_postgres_url) >= 1
    time.sleep(IDLE_PING_SECONDS + 0.2)
    answer = client.get("/api/conversations", headers=headers)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json() == client.get("/api/conversations", headers=headers).get_json()
