"""Health: a background check of the database, Redis and a worker, and GET /healthz over it.

`/healthz` is anonymous and hit often (load balancers, ./run, uptime probes), so it never checks
anything itself: it answers from the status a background thread of each web process refreshes
every CHECK_INTERVAL_SECONDS, over connections it keeps (no connection is opened per request).
A part whose last check is older than STALE_AFTER_SECONDS counts as down: a stuck checker must
not report an old "ok" forever. `/healthz` says only which parts are ok; the reasons (which may
name hosts and database users) are for admins, at /admin/health and /api/admin/health.

The checker starts with the first request that asks, which waits for its first round; it stops
when nobody has asked for IDLE_STOP_SECONDS, so an idle process sends no pings.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import redis
from flask import Blueprint, Flask, current_app, jsonify
from sqlalchemy import text

from core import broker
from core.extensions import db
from webapp import queue

bp = Blueprint("health", __name__)
log = logging.getLogger("lookout.health")

PARTS = ("database", "redis", "worker")
CHECK_INTERVAL_SECONDS = 5.0
STALE_AFTER_SECONDS = 15.0
IDLE_STOP_SECONDS = 60.0
PING_TIMEOUT_SECONDS = 2.0
FIRST_ROUND_WAIT_SECONDS = 3 * PING_TIMEOUT_SECONDS


@dataclass(frozen=True)
class Check:
    """One part's last result: ok, why not (for admins), and when (time.monotonic())."""

    ok: bool
    error: str | None
    at: float


def check_database() -> Check:
    """Return whether a trivial query succeeds."""
    try:
        db.session.execute(text("SELECT 1"))
    except Exception as error:  # any driver error means unhealthy, and is reported to admins
        db.session.rollback()
        return Check(False, f"The database did not answer: {error}", time.monotonic())
    finally:
        db.session.remove()  # the connection goes back to the pool between rounds
    return Check(True, None, time.monotonic())


def check_redis(client: redis.Redis) -> Check:
    """Return whether Redis answers PING on the checker's own, kept connection."""
    try:
        client.ping()
    except redis.RedisError as error:
        return Check(False, f"Redis did not answer: {error}", time.monotonic())
    return Check(True, None, time.monotonic())


def check_worker(redis_ok: bool) -> Check:
    """Return whether a worker answers the ping task within the timeout."""
    if not redis_ok:
        return Check(False, "No worker can be reached while Redis is down.", time.monotonic())
    try:
        answer = queue.call(broker.PING, timeout=PING_TIMEOUT_SECONDS)
    except queue.QueueError as error:
        return Check(False, str(error), time.monotonic())
    if answer != "pong":
        message = f"The worker answered {answer!r} instead of 'pong'."
        return Check(False, message, time.monotonic())
    return Check(True, None, time.monotonic())


class HealthMonitor:
    """The checker thread of one app in one process, and the last result of each part."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.checks: dict[str, Check] = {}
        self.rounds = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._first_round = threading.Event()
        self._asked_at = time.monotonic()
        self._redis = redis.Redis.from_url(
            app.config["REDIS_URL"], socket_connect_timeout=1, socket_timeout=1
        )

    def status(self) -> dict[str, Check]:
        """Return each part's last check, a stale one turned into "down"; start the checker."""
        self._asked_at = time.monotonic()
        self._ensure_running()
        self._first_round.wait(FIRST_ROUND_WAIT_SECONDS)
        now = time.monotonic()
        status = {}
        for part in PARTS:
            check = self.checks.get(part)
            if check is None:
                status[part] = Check(False, "Not checked yet: the health check is starting.", now)
            elif now - check.at > STALE_AFTER_SECONDS:
                age = round(now - check.at)
                error = f"Not checked for {age} seconds: the health check itself is stuck."
                status[part] = Check(False, error, check.at)
            else:
                status[part] = check
        return status

    def run_round(self) -> None:
        """Check every part once and keep the results."""
        with self.app.app_context():
            checks = {"database": check_database(), "redis": check_redis(self._redis)}
            checks["worker"] = check_worker(checks["redis"].ok)
        self.checks = checks
        self.rounds += 1
        self._first_round.set()

    def stop(self) -> None:
        """Stop the checker thread (it starts again with the next request that asks)."""
        self._stop.set()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=FIRST_ROUND_WAIT_SECONDS)

    def _ensure_running(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop = threading.Event()
            self._first_round.clear()  # results from before an idle stop are too old to serve
            self._thread = threading.Thread(
                target=self._loop, args=(self._stop,), name="lookout-health", daemon=True
            )
            self._thread.start()

    def _loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.run_round()
            except Exception:  # the thread must outlive any one failed round
                log.exception("a health check round failed")
            if time.monotonic() - self._asked_at > IDLE_STOP_SECONDS:
                break
            stop.wait(CHECK_INTERVAL_SECONDS)


def get_monitor() -> HealthMonitor:
    """Return the current app's health monitor."""
    return current_app.extensions["lookout_health"]


def init_health(app: Flask) -> None:
    """Attach a health monitor (not yet started) to the app and serve /healthz."""
    app.extensions["lookout_health"] = HealthMonitor(app)
    app.register_blueprint(bp)


@bp.get("/healthz")
def healthz():
    """Answer 200 when every part is up, 503 naming which are down (never why: see /admin)."""
    status = get_monitor().status()
    ok = all(check.ok for check in status.values())
    checks = {part: {"ok": check.ok} for part, check in status.items()}
    return jsonify({"ok": ok, "checks": checks}), 200 if ok else 503


def health_details() -> tuple[dict, bool]:
    """Return the admins' view of health (with reasons and ages) and whether all is up."""
    status = get_monitor().status()
    now = time.monotonic()
    checks = {
        part: {
            "ok": check.ok,
            "error": check.error,
            "checkedSecondsAgo": round(max(0.0, now - check.at), 1),
        }
        for part, check in status.items()
    }
    ok = all(check.ok for check in status.values())
    return {"ok": ok, "checks": checks}, ok
