"""The extensions every app of Lookout's shares, created unbound here and attached to each app
by ``core.app.create_app``: the database, migrations, sign-in, CSRF, and the Redis client."""

import sqlite3
import time

import redis
from flask import Flask, current_app
from flask_login import LoginManager
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from flask_wtf.csrf import CSRFProtect
from sqlalchemy import event, exc
from sqlalchemy.engine import Engine

db = SQLAlchemy()
migrate = Migrate()
login_manager = LoginManager()
csrf = CSRFProtect()

REDIS_MAX_CONNECTIONS = 10_000
REDIS_READ_TIMEOUT_SECONDS = 30  # above the longest blocking read (the event stream's 15 s)
# A pooled connection unused this long is checked before use: the server may have restarted,
# or dropped it, meanwhile. One used since went out unchecked; a check costs a round trip.
IDLE_PING_SECONDS = 1.0
_USED_AT = "lookout_used_at"


def init_redis(app: Flask) -> None:
    """Attach one Redis client (a thread-safe connection pool) to the app."""
    app.extensions["lookout_redis"] = redis.Redis.from_url(
        app.config["REDIS_URL"],
        socket_connect_timeout=2,
        socket_timeout=REDIS_READ_TIMEOUT_SECONDS,
        health_check_interval=30,
        # Every page following a turn holds a connection in a blocking read; redis-py's
        # default cap of 100 broke the 101st stream.
        max_connections=REDIS_MAX_CONNECTIONS,
    )


def get_redis() -> redis.Redis:
    """Return the current app's Redis client."""
    return current_app.extensions["lookout_redis"]


@event.listens_for(Engine, "connect")
def tune_sqlite(dbapi_connection, connection_record) -> None:
    """Turn on foreign keys and write-ahead logging for SQLite, so web and worker share the file."""
    if isinstance(dbapi_connection, sqlite3.Connection):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        # In WAL mode NORMAL stays consistent after a crash and fsyncs only at checkpoints; a
        # power cut may lose the last commits. FULL made every commit wait on the disk.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=15000")
        cursor.close()


def ping_when_idle(engine: Engine, seconds: float = IDLE_PING_SECONDS) -> None:
    """Check each connection ``engine``'s pool hands out that sat unused for ``seconds`` or
    more, as ``pool_pre_ping`` checked every one: a connection found gone is replaced, and
    every connection pooled before it with it (they went with the same server).

    ``pool_pre_ping`` cost a round trip on every checkout, that is on every request and task.
    """

    @event.listens_for(engine, "checkin")
    def note_use(dbapi_connection, connection_record) -> None:
        connection_record.info[_USED_AT] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def check_if_idle(dbapi_connection, connection_record, connection_proxy) -> None:
        used_at = connection_record.info.get(_USED_AT)
        if used_at is None or time.monotonic() - used_at < seconds:
            return  # fresh from connect, or used a moment ago
        dialect = engine.dialect
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if not dialect.is_disconnect(error, dbapi_connection, None):
                raise
            raise exc.InvalidatePoolError() from error  # the pool connects anew
