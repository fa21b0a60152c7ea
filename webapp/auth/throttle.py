"""Failed sign-ins per name: after SIGN_IN_MAX_FAILURES within SIGN_IN_LOCK_MINUTES, that name
is refused (whatever the password) until the window ends.

Counts live in Redis, shared by every web process, under the deployment's queue name so that
apps sharing a Redis keep their own. Names are counted as typed (lower-cased), known or not,
so the answer says nothing about which names exist. A success clears the count. When Redis
cannot be reached, sign-in is not throttled (and a warning is logged): people can still sign
in during an outage.
"""

from __future__ import annotations

import hashlib
import logging
import math

import redis
from flask import current_app

from webapp.turnstate import get_redis

log = logging.getLogger("lookout.auth")


def _key(name: str) -> str:
    digest = hashlib.sha256(name.strip().lower().encode()).hexdigest()
    return f"lookout:{current_app.config['CELERY_QUEUE']}:sign-in-failures:{digest}"


def minutes_locked(name: str) -> int:
    """Return how many minutes (rounded up) the name is still refused; 0 when it is not."""
    try:
        pipe = get_redis().pipeline(transaction=False)
        pipe.get(_key(name))
        pipe.ttl(_key(name))
        count, ttl = pipe.execute()
    except redis.RedisError:
        log.warning("sign-in throttling is off: Redis cannot be reached", exc_info=True)
        return 0
    if count is None or int(count) < current_app.config["SIGN_IN_MAX_FAILURES"]:
        return 0
    return max(1, math.ceil(ttl / 60)) if ttl and ttl > 0 else 1


def note_failure(name: str) -> None:
    """Count a failed sign-in of the name; the window starts at its first failure."""
    window = current_app.config["SIGN_IN_LOCK_MINUTES"] * 60
    try:
        pipe = get_redis().pipeline(transaction=True)
        pipe.set(_key(name), 0, ex=window, nx=True)  # INCR keeps the TTL the first failure set
        pipe.incr(_key(name))
        pipe.execute()
    except redis.RedisError:
        log.warning("a failed sign-in was not counted: Redis cannot be reached", exc_info=True)


def clear_failures(name: str) -> None:
    """Forget the name's failed sign-ins (after a success)."""
    try:
        get_redis().delete(_key(name))
    except redis.RedisError:
        log.warning("failed sign-ins were not cleared: Redis cannot be reached", exc_info=True)
