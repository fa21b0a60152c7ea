"""Failed sign-ins, counted per name and per client address.

After SIGN_IN_MAX_FAILURES failures for a name, or SIGN_IN_MAX_FAILURES_PER_ADDRESS from one
address (trying many names, a few passwords each), within SIGN_IN_LOCK_MINUTES, sign-in is
refused for that name or from that address, whatever the password, until the window ends.

Counts live in Redis, shared by every web process, under the deployment's queue name so that
apps sharing a Redis keep their own. Names are counted as typed (lower-cased), known or not,
so the answer says nothing about which names exist. The current-password field of the
password form is counted and locked the same way: it is a guess at the same password. A
success clears its name's count, not its address's (else one valid account would reset an
address's count). The address is the client's as the TLS proxy reports it when
TRUSTED_PROXIES says how many proxies to believe. When Redis cannot be reached, sign-in is not
throttled (and a warning is logged): people can still sign in during an outage.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass

import redis
from flask import current_app

from core.extensions import get_redis

log = logging.getLogger("lookout.auth")

TOO_MANY = (
    "Too many failed sign-ins for this name. Wait {minutes} and try again, or ask an "
    "administrator to set a new password in Admin → Users "
    "(or with flask --app webapp users set-password {name})."
)
TOO_MANY_HERE = "Too many failed sign-ins from your network address. Wait {minutes} and try again."


@dataclass(frozen=True)
class Lock:
    """Why sign-in is refused: "name" or "address", and for how many more minutes."""

    subject: str
    minutes: int


def describe(lock: Lock, name: str) -> str:
    """Return the sentence that refuses a locked name or address and says how long it lasts."""
    minutes = f"{lock.minutes} minute{'' if lock.minutes == 1 else 's'}"
    message = TOO_MANY if lock.subject == "name" else TOO_MANY_HERE
    return message.format(minutes=minutes, name=name)


def _key(subject: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().lower().encode()).hexdigest()
    return f"lookout:{current_app.config['CELERY_QUEUE']}:sign-in-failures:{subject}:{digest}"


def _limits() -> dict[str, int]:
    config = current_app.config
    return {
        "name": config["SIGN_IN_MAX_FAILURES"],
        "address": config["SIGN_IN_MAX_FAILURES_PER_ADDRESS"],
    }


def find_lock(name: str, address: str | None) -> Lock | None:
    """Return the lock on this name or address, or None when sign-in may be tried."""
    subjects = {"name": name, "address": address or "unknown"}
    try:
        pipe = get_redis().pipeline(transaction=False)
        for subject, value in subjects.items():
            pipe.get(_key(subject, value))
            pipe.ttl(_key(subject, value))
        answers = pipe.execute()
    except redis.RedisError:
        log.warning("sign-in throttling is off: Redis cannot be reached", exc_info=True)
        return None
    for index, (subject, limit) in enumerate(_limits().items()):
        count, ttl = answers[2 * index], answers[2 * index + 1]
        if count is not None and int(count) >= limit:
            return Lock(subject, max(1, math.ceil(ttl / 60)) if ttl and ttl > 0 else 1)
    return None


def note_failure(name: str, address: str | None) -> None:
    """Count a failed sign-in for the name and the address; a window starts at its first."""
    window = current_app.config["SIGN_IN_LOCK_MINUTES"] * 60
    try:
        pipe = get_redis().pipeline(transaction=True)
        for subject, value in (("name", name), ("address", address or "unknown")):
            pipe.set(_key(subject, value), 0, ex=window, nx=True)  # INCR keeps this TTL
            pipe.incr(_key(subject, value))
        pipe.execute()
    except redis.RedisError:
        log.warning("a failed sign-in was not counted: Redis cannot be reached", exc_info=True)


def clear_failures(name: str) -> None:
    """Forget the name's failed sign-ins (after a success, or a new password)."""
    try:
        get_redis().delete(_key("name", name))
    except redis.RedisError:
        log.warning("failed sign-ins were not cleared: Redis cannot be reached", exc_info=True)
