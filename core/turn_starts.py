"""A turn's start checks: the user's start lock and the hour's count in two Redis round trips,
the open turns and the user's own limits in one query.

The lock (``lookout:quota:<user>:starting``) is held while a turn is checked and stored, so two
POSTs, whichever processes serve them, never both pass a limit. Taking it reads the hour's
count (``turnsPerHour``) in the same script; letting it go adds the turn to the count in the
same script. Every change of that count happens under the lock, so the count read when it was
taken still holds when the check is made. It was three round trips: the lock, the hour's count
taken by a script of its own, the release. The release also marks the turn's first step queued
(``TurnStart.queueing``), which the publish signal did in a round trip of its own.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache

from sqlalchemy import Select, bindparam, case, func

from core.extensions import db, get_redis
from core.limits import allowance, own_value
from core.models import Conversation, Turn
from core.quotas import (
    OPEN_TURN_RETRY_SECONDS,
    START_HOLD_SECONDS,
    START_WAIT_SECONDS,
    WINDOW_SECONDS,
    QuotaExceeded,
    TurnRunning,
    clock,
    key,
    plural,
    seconds_until,
)
from core.turn import queued, statements
from core.turn.state import SAFETY_TTL_SECONDS, LuaScript, queue_keys, queue_lua
from core.turn.states import OPEN_STATUSES

HOURLY = "turnsPerHour"
START_POLL_SECONDS = 0.1  # how often a start waiting for the user's other starts asks again

# The milliseconds until the window of the count KEYS[2] ends: its expiry, or, for a count not
# yet started, the next boundary of a window of ARGV[3] seconds on Redis's clock.
_WINDOW_LEFT = """
local left = redis.call('PTTL', KEYS[2])
if left < 0 then
  local t = redis.call('TIME')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local window_ms = tonumber(ARGV[3]) * 1000
  left = (math.floor(now_ms / window_ms) + 1) * window_ms - now_ms
end
"""
# KEYS: the start lock, the hour's count. ARGV: this start's token, hold ms, window seconds.
# Answers {1, the count, ms until its window ends} once the lock is taken; {0} while another
# start holds it.
_TAKE = LuaScript(
    """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
"""
    + _WINDOW_LEFT
    + """
return {1, tonumber(redis.call('GET', KEYS[2]) or '0'), left}
"""
)
# KEYS: the start lock, the hour's count, then (when the start queued its turn's first step) the
# turn's queued set, task set and ended marker. ARGV: this start's token, the turns it started
# (0 or 1), window seconds, then the step's marker, its task's id and the safety TTL. Adds the
# turns to the count (whose expiry is its window's end), records the queued step as
# ``TurnState.queue`` does (the publish signal's own round trip, folded in), then lets the lock
# go unless it expired and another start holds it now.
_LET_GO = LuaScript(
    """
if tonumber(ARGV[2]) > 0 then
"""
    + _WINDOW_LEFT
    + """
  redis.call('INCRBY', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], left)
end
if #KEYS > 2 then
"""
    + queue_lua(3, 4)
    + """
end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""
)


@cache
def _open_turns() -> Select:
    """The query of the user's (``user``) open turns, how many of them are in
    ``conversation``, and the user's own values of both limits: built once, where building it
    cost a POST about as much as running it."""
    user = bindparam("user")
    open_here = func.count(case((Turn.conversation_id == bindparam("conversation"), Turn.id)))
    # The statuses written into the SQL, not bound: a planner that has not seen the values
    # (SQLite's; PostgreSQL's for a prepared statement) still reads the user's open turns by
    # the index of open turns (``ix_turns_open_conversation_id``), not every user's.
    statuses = bindparam("open", list(OPEN_STATUSES), expanding=True, literal_execute=True)
    # By the user's conversations, so that SQLite, which keeps no statistics, starts from
    # them rather than from every user's open turns.
    conversations = db.select(Conversation.id).filter(Conversation.owner_id == user)
    return db.select(
        func.count(Turn.id), open_here, own_value(user, "openTurns"), own_value(user, HOURLY)
    ).filter(Turn.conversation_id.in_(conversations), Turn.status.in_(statuses))


@dataclass
class TurnStart:
    """The user's start lock, held: the hour's count as read when it was taken, when that hour
    ends, and the turns this start counts when it lets the lock go."""

    user_id: str
    token: str
    hourly_used: int
    hour_ends: datetime
    started: int = 0
    marks: list[tuple[str, str, str]] = field(default_factory=list)

    @contextmanager
    def queueing(self) -> Iterator[None]:
        """Within, a step or tool-call task published by this thread is marked queued (with
        its task's id) as the lock is let go, in the same round trip, rather than in one of
        its own (``core.turn.queued``). The POST is answered after that."""
        with queued.marks_deferred(self.marks):
            yield


@contextmanager
def starting(user_id: str) -> Iterator[TurnStart]:
    """Hold the user's start lock while a turn is checked (``check_turn``) and stored, waiting
    up to ``START_WAIT_SECONDS`` for the user's other starts (QuotaExceeded after that); the
    turn ``check_turn`` took is counted in the hour as the lock is let go. Raises
    ``redis.RedisError`` when Redis cannot be reached."""
    client = get_redis()
    keys = [key(user_id, "starting"), key(user_id, HOURLY)]
    token = secrets.token_hex(16)
    window = WINDOW_SECONDS["hour"]
    give_up = time.monotonic() + START_WAIT_SECONDS
    while True:
        taken = _TAKE(client, keys, [token, START_HOLD_SECONDS * 1000, window])
        if taken[0]:
            break
        if time.monotonic() >= give_up:
            raise QuotaExceeded(
                "starting",
                "Your other requests are still being handled. Send this one again in a moment.",
                1,
            )
        time.sleep(START_POLL_SECONDS)
    ends = datetime.now(UTC) + timedelta(milliseconds=int(taken[2]))
    start = TurnStart(user_id, token, int(taken[1]), ends)
    try:
        yield start
    finally:
        args = [token, start.started, window]
        for turn_id, work, task_id in start.marks[:1]:
            keys += queue_keys(turn_id)
            args += [work, task_id, SAFETY_TTL_SECONDS]
        _LET_GO(client, keys, args)
        for turn_id, work, task_id in start.marks[1:]:  # none from a turn's start
            queued.mark_queued(turn_id, work, task_id)


def check_turn(start: TurnStart, conversation_id: str | None = None) -> None:
    """Take one turn of the user's hour (counted as ``start`` lets the lock go), after checking
    their open turns; raise TurnRunning when ``conversation_id`` has an open turn,
    QuotaExceeded over either limit.

    One query reads the open turns (the user's, and the conversation's among them) with the
    user's own values of both limits.
    """
    values = {"user": start.user_id, "conversation": conversation_id}
    # On the session's connection: it reads columns, no ORM object, and the session's own
    # execute cost as much again as the query (``statements.run``).
    counted = statements.run(_open_turns(), values).one()
    open_count, open_in_conversation, own_open, own_hourly = counted
    if open_in_conversation:
        raise TurnRunning()
    open_allowed = allowance("openTurns", own_open)
    if open_count >= open_allowed:
        raise QuotaExceeded(
            "openTurns",
            f"You have {plural(open_allowed, 'answer')} running. Wait for one to finish, or stop "
            "one, then send again.",
            OPEN_TURN_RETRY_SECONDS,
        )
    hourly = allowance(HOURLY, own_hourly)
    if start.hourly_used + 1 > hourly:
        raise QuotaExceeded(
            HOURLY,
            f"You have sent {plural(hourly, 'message')} this hour; you can send again at "
            f"{clock(start.hour_ends)}.",
            seconds_until(start.hour_ends),
        )
    start.started = 1
