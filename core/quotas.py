"""What each user has used of their limits, counted where every web and worker process sees it.

Counts that run over a clock window live in Redis, one key per user and limit that expires at
the window's end (the hour or the day, UTC); one Lua script reads, checks and adds in one step,
so no two processes can both take the last unit. Counts of what is open or stored now are read
from the database (open turns, stored attachments) or a Redis set (open event streams), so they
free themselves when a turn ends however it ends.

Keys, all under ``lookout:quota:<user>:``
    <limit>    a window's count (``turnsPerHour``, ``searchesPerDay``, ``fetchBytesPerDay``,
               ``uploadsPerHour``)
    starting   a lock held while a turn is checked and stored: two POSTs never both pass
               (``core.turn_starts``, which takes it with the hour's count in one script)
    uploading  a lock held while an upload is checked against the room left, and stored
    streams    a sorted set of the user's open event streams, by when they opened
    mcpCalls   a sorted set of the user's MCP tool calls running, by when each must be over

Errors::

    Exception
    └── QuotaExceeded   over a limit: ``message`` says which and when it frees, ``retry_after``
                        is the seconds to say in the HTTP ``Retry-After`` header
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from sqlalchemy import case, func

from core.extensions import db, get_redis
from core.limits import allowances, allowed, get_limit
from core.models import Conversation, Turn, Upload
from core.models.uploads import room_taken
from core.streams import open_stream_count
from core.turn.state import LuaScript
from core.turn.states import OPEN_STATUSES
from tools.quotas import Quotas, QuotaUsed

WINDOW_SECONDS = {"hour": 3600, "day": 86400}
# An open turn frees its slot when it ends, which no one can foretell: try again this soon.
OPEN_TURN_RETRY_SECONDS = 10
# Room frees only when the user deletes attachments: a client may ask again this soon.
UPLOAD_RETRY_SECONDS = 60
# How long a turn's start may wait for the user's other starts, and hold them at most.
START_WAIT_SECONDS = 10
START_HOLD_SECONDS = 30

# KEYS[1]: the user's running MCP calls. ARGV: the call's id, allowed, now and the call's end
# (ms). Forgets calls past their end (a web process that died never said they ended), then adds
# this one unless ``allowed`` run already; the set lasts until its latest call's end. Answers 1
# when it was added, else 0.
_START_CALL = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], latest[2])
return 1
"""

# KEYS[1]: the window's counter. ARGV: allowed, amount, window seconds, mode: "take" adds
# unless that would pass allowed, "check" only says whether it would, "add" always adds.
# Answers {passed (1 or 0), used after, milliseconds until the window ends}.
_COUNT = LuaScript("""
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window_ms = tonumber(ARGV[3]) * 1000
local allowed = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = redis.call('PTTL', KEYS[1])
if left < 0 then left = (math.floor(now_ms / window_ms) + 1) * window_ms - now_ms end
if ARGV[4] ~= 'add' and used + amount > allowed then return {0, used, left} end
if ARGV[4] == 'check' then return {1, used, left} end
used = redis.call('INCRBY', KEYS[1], amount)
redis.call('PEXPIRE', KEYS[1], left)
return {1, used, left}
""")


class TurnRunning(Exception):
    """The conversation has a queued or running turn already (one at a time in each)."""


class QuotaExceeded(Exception):
    """Over a limit: the sentence the user (or the model) reads, and when to try again."""

    def __init__(self, limit: str, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.message = message
        self.retry_after = retry_after


def key(user_id: str, name: str) -> str:
    """Return the Redis key of one of a user's counts."""
    return f"lookout:quota:{user_id}:{name}"


def clock(moment: datetime) -> str:
    """Return the time of day a window ends at, as the sentences say it ("14:00 UTC")."""
    return moment.astimezone(UTC).strftime("%H:%M UTC")


def count(
    client: redis.Redis, user_id: str, name: str, allowed_units: int, amount: int, mode: str
) -> tuple[bool, int, datetime]:
    """Run one count of a window limit; return whether it passed, the count after, and when the
    window ends."""
    window = WINDOW_SECONDS[get_limit(name).window or ""]
    passed, used, left_ms = _COUNT(
        client, [key(user_id, name)], [allowed_units, amount, window, mode]
    )
    return bool(passed), int(used), datetime.now(UTC) + timedelta(milliseconds=int(left_ms))


def seconds_until(moment: datetime) -> int:
    """Return the whole seconds from now until ``moment``, at least 1."""
    return max(1, math.ceil((moment - datetime.now(UTC)).total_seconds()))


def plural(number: int, word: str) -> str:
    """Return "1 answer" or "3 answers"."""
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


def open_turn_count(user_id: str) -> int:
    """Return how many of the user's turns are queued or running."""
    return db.session.scalar(
        db.select(func.count(Turn.id))
        .join(Conversation, Conversation.id == Turn.conversation_id)
        .filter(Conversation.owner_id == user_id, Turn.status.in_(OPEN_STATUSES))
    )


@contextmanager
def held(user_id: str, name: str) -> Iterator[None]:
    """Hold one of the user's locks (``starting`` a turn, ``uploading`` a file) while a count is
    checked and what it counts is stored (committed inside), so that the count cannot change
    between the check and the store, whichever process serves the other request."""
    lock = get_redis().lock(
        key(user_id, name), timeout=START_HOLD_SECONDS, blocking_timeout=START_WAIT_SECONDS
    )
    if not lock.acquire():
        raise QuotaExceeded(
            name,
            "Your other requests are still being handled. Send this one again in a moment.",
            1,
        )
    try:
        yield
    finally:
        try:
            lock.release()
        except redis.exceptions.LockError:
            pass  # held past START_HOLD_SECONDS: it has expired, and may be someone else's now


def start_mcp_call(user_id: str, call_id: str, seconds: float) -> None:
    """Count an MCP tool call as running for at most ``seconds``; raise QuotaExceeded when the
    user's programs have as many running as they may (``mcpCalls``). ``end_mcp_call`` stops
    counting it; a call whose process died stops counting at its end."""
    allowed_units = allowed(user_id, "mcpCalls")
    now_ms = int(time.time() * 1000)
    end_ms = now_ms + int(seconds * 1000)
    client = get_redis()
    if not client.eval(
        _START_CALL, 1, key(user_id, "mcpCalls"), call_id, allowed_units, now_ms, end_ms
    ):
        raise QuotaExceeded(
            "mcpCalls",
            f"Your programs have {plural(allowed_units, 'tool call')} running through Lookout, "
            "the most one person may have at once. Wait for one to finish, then call again.",
            OPEN_TURN_RETRY_SECONDS,
        )


def end_mcp_call(user_id: str, call_id: str) -> None:
    """Stop counting an MCP tool call as running."""
    get_redis().zrem(key(user_id, "mcpCalls"), call_id)


def running_mcp_calls(user_id: str) -> int:
    """Return how many of the user's MCP tool calls are running now."""
    client = get_redis()
    name = key(user_id, "mcpCalls")
    return client.zcount(name, int(time.time() * 1000), "+inf")


def window_used(user_id: str, name: str) -> tuple[int, datetime]:
    """Return a window limit's count so far and when its window ends."""
    _, used, ends = count(get_redis(), user_id, name, 0, 0, "check")
    return used, ends


def stored_upload_room(user_id: str) -> int:
    """Return the room the user's stored attachments take: for each, the larger of its file's
    bytes and its text's characters (``core.models.uploads.room_taken``)."""
    taken = case((Upload.size > Upload.text_chars, Upload.size), else_=Upload.text_chars)
    return db.session.scalar(
        db.select(func.coalesce(func.sum(taken), 0)).filter(Upload.owner_id == user_id)
    )


def megabytes(size: int) -> str:
    """Return a size as the sentences say it: "3.2 MB", or "4 KB" under 0.1 MB (where one
    decimal of a megabyte would read "0.0 MB")."""
    if size < 100_000:
        return f"{size / 1000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB" if size < 10_000_000 else f"{size / 1_000_000:.0f} MB"


def check_upload(user_id: str, filename: str, size: int, text_chars: int = 0) -> None:
    """Raise QuotaExceeded when a file of ``size`` bytes whose text is ``text_chars``
    characters does not fit in the room the user's stored attachments leave. Call before
    parsing with the bytes alone, and inside ``held(user_id, "uploading")`` with the text."""
    room = allowed(user_id, "uploadBytes")
    stored = stored_upload_room(user_id)
    taken = room_taken(size, text_chars)
    if stored + taken <= room:
        return
    if text_chars > size:
        what = (
            f"the text of {filename} ({text_chars:,} characters, counted as "
            f"{megabytes(taken)}) does not fit"
        )
    else:
        what = f"{filename} ({megabytes(size)}) does not fit"
    raise QuotaExceeded(
        "uploadBytes",
        f"Your attachments take {megabytes(stored)} of your {megabytes(room)}, and {what}. "
        "Delete attachments you no longer need, or ask an administrator for more room.",
        UPLOAD_RETRY_SECONDS,
    )


def check_upload_rate(user_id: str) -> None:
    """Take one upload of the user's hour; raise QuotaExceeded when the hour's are used."""
    hourly = allowed(user_id, "uploadsPerHour")
    passed, _, ends = count(get_redis(), user_id, "uploadsPerHour", hourly, 1, "take")
    if not passed:
        raise QuotaExceeded(
            "uploadsPerHour",
            f"You have uploaded {plural(hourly, 'file')} this hour; you can upload again at "
            f"{clock(ends)}.",
            seconds_until(ends),
        )


def remaining(user_id: str) -> list[dict[str, Any]]:
    """Return each of the user's own limits as ``{limit, label, used, allowed, resetsAt}``:
    counts in the limit's unit (bytes for bytes), ``resetsAt`` (ISO 8601, UTC) for a window's
    end, None for a count of what is open or stored now."""
    shown = []
    for name in (
        "openTurns",
        "turnsPerHour",
        "searchesPerDay",
        "fetchBytesPerDay",
        "uploadsPerHour",
    ):
        limit = get_limit(name)
        resets = None
        if limit.window:
            used, ends = window_used(user_id, name)
            resets = ends.replace(microsecond=0).isoformat()
        else:
            used = open_turn_count(user_id)
        shown.append(show(name, used, allowed(user_id, name), resets))
    shown.append(show("eventStreams", open_stream_count(user_id), allowed(user_id, "eventStreams")))
    shown.append(show("mcpCalls", running_mcp_calls(user_id), allowed(user_id, "mcpCalls")))
    shown.append(show("uploadBytes", stored_upload_room(user_id), allowed(user_id, "uploadBytes")))
    return shown


def show(name: str, used: int, allowed_units: int, resets_at: str | None = None) -> dict[str, Any]:
    """Return one limit in ``remaining``'s shape."""
    return {
        "limit": name,
        "label": get_limit(name).label,
        "used": used,
        "allowed": allowed_units,
        "resetsAt": resets_at,
    }


class UserQuotas(Quotas):
    """One user's tool quotas for one tool call: the allowances read when the call's context
    is built, counted in Redis (the tool runs in a thread without the app)."""

    def __init__(self, client: redis.Redis, user_id: str) -> None:
        self.client = client
        self.user_id = user_id
        self.allowed = allowances(user_id, tuple(TOOL_QUOTA_WORDS))

    def take(self, name: str, amount: int = 1) -> None:
        """Count ``amount`` unless that passes the quota; QuotaUsed otherwise."""
        self._count(name, amount, "take")

    def check(self, name: str) -> None:
        """QuotaUsed when nothing is left of the quota."""
        self._count(name, 1, "check")

    def add(self, name: str, amount: int) -> None:
        """Count what was spent."""
        self._count(name, amount, "add")

    def _count(self, name: str, amount: int, mode: str) -> None:
        try:
            passed, _, ends = count(
                self.client, self.user_id, name, self.allowed[name], amount, mode
            )
        except redis.RedisError:
            raise QuotaUsed(
                "Lookout could not check your quota because Redis could not be reached. Try "
                "again in a minute."
            ) from None
        if not passed:
            raise QuotaUsed(TOOL_QUOTA_WORDS[name].format(reset=clock(ends)))


# What the model reads when a tool's quota is used up.
TOOL_QUOTA_WORDS = {
    "searchesPerDay": "Today's web search quota is used up; it resets at {reset}.",
    "fetchBytesPerDay": "Today's quota of pages to fetch is used up; it resets at {reset}.",
}
