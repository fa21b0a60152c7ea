"""Rate limits a tool shares with every process that calls the same provider: ``ToolContext.rates``.

A provider's limit holds for all of Lookout at once (every worker process, every machine), so
the count lives in Redis: ``RedisRates`` books each call a time slot with one Lua script, a
token bucket kept as the time its next token is due (GCRA), with an optional cap a day (UTC).
Booking a slot ahead, rather than polling for a free one, keeps callers in the order they came
and costs one round trip whatever the wait. ``UnlimitedRates`` is what a ToolContext built
outside a host gets: nothing is shared there, so nothing is limited.

Errors::

    Exception
    ├── RateLimited     no slot within the time the call has (``daily``: the day's cap is used),
    │                   or Redis could not be asked (a slot that cannot be booked is not free)
    └── Cancelled       the call's signal tripped while it waited for its slot
"""

from __future__ import annotations

import email.utils
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import redis

from tools.cancellation import Cancelled, Signal

log = logging.getLogger("lookout.tools.rates")
KEY_PREFIX = "lookout:rate:"
# How soon to try again when Redis could not be asked.
UNREACHABLE_RETRY_SECONDS = 1.0
# A call whose deadline is infinite still waits no longer than this for its slot.
LONGEST_WAIT_SECONDS = 3600.0

# KEYS[1]: when the next token is due (microseconds since the epoch, Redis's clock);
# KEYS[2]: the prefix of the day counters. ARGV: interval and longest wait in microseconds,
# the cap a day (0 for none). Answers {1, delay µs} for a booked slot, {0, delay µs} when the
# slot would come too late, {-1, seconds until 00:00 UTC} when the day's cap is used.
_BOOK = """
local t = redis.call('TIME')
local seconds = tonumber(t[1])
local now = seconds * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local longest = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local day = math.floor(seconds / 86400)
local day_key = KEYS[2] .. day
if cap > 0 and tonumber(redis.call('GET', day_key) or '0') >= cap then
  return {-1, (day + 1) * 86400 - seconds}
end
local due = tonumber(redis.call('GET', KEYS[1]) or '0')
if due < now then due = now end
local delay = due - now
if delay > longest then
  return {0, string.format('%.0f', delay)}
end
local ttl_ms = math.ceil((due + interval - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', due + interval), 'PX', ttl_ms)
if cap > 0 then
  redis.call('INCR', day_key)
  redis.call('EXPIREAT', day_key, (day + 2) * 86400)
end
return {1, string.format('%.0f', delay)}
"""


# KEYS[1]: when the next token is due; ARGV: the hold in microseconds. Moves the due time to
# no sooner than now + the hold (a later one stays).
_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local due = tonumber(redis.call('GET', KEYS[1]) or '0')
local held = now + tonumber(ARGV[1])
if held > due then
  local ttl_ms = math.ceil((held - now) / 1000) + 1000
  redis.call('SET', KEYS[1], string.format('%.0f', held), 'PX', ttl_ms)
end
return 1
"""


@dataclass(frozen=True)
class RateLimit:
    """How often a provider may be called: ``per_second`` (> 0) and at most ``per_day`` a day."""

    per_second: float
    per_day: int | None = None


class RateLimited(Exception):
    """No slot in time: ``retry_after`` seconds until one is free; ``daily`` when the cap is used.

    With ``daily``, ``retry_after`` runs to 00:00 UTC, when the count starts again.
    """

    def __init__(self, retry_after: float, daily: bool = False) -> None:
        super().__init__(
            f"rate limited for {retry_after:.1f} s" + (" (daily cap)" if daily else "")
        )
        self.retry_after = retry_after
        self.daily = daily


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Return the seconds a provider's answer asks to wait, from ``retry-after-ms`` or
    ``Retry-After`` (seconds or an HTTP date); None when neither is there and valid."""
    try:
        if "retry-after-ms" in headers:
            seconds = float(headers["retry-after-ms"]) / 1000
        else:
            value = (headers.get("retry-after") or "").strip()
            if not value:
                return None
            if value.replace(".", "", 1).isdigit():
                seconds = float(value)
            else:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (ValueError, TypeError, OverflowError):
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


class Rates:
    """Hands out slots of named buckets; ``take`` waits for one by the call's signal."""

    def take(self, bucket: str, limit: RateLimit, signal: Signal, reserve: float = 0.0) -> None:
        """Return once this call may go; its slot is booked whatever happens after.

        The wait may use the signal's remaining time less ``reserve`` (what the call itself
        needs). ``bucket`` names the provider and credentials; it is a Redis key name, so it
        must never hold a secret (hash one). Raises ``RateLimited`` when no slot comes within
        that time or the day's cap is used, and ``Cancelled`` when the signal trips meanwhile.
        """
        longest = min(signal.remaining() - reserve, LONGEST_WAIT_SECONDS)
        delay = self.book(bucket, limit, max(0.0, longest))
        if delay > 0 and signal.wait(delay):
            raise Cancelled(signal.reason or "cancelled")

    def book(self, bucket: str, limit: RateLimit, longest_wait: float) -> float:
        """Book the next slot of ``bucket``; return the seconds until it, or raise RateLimited."""
        raise NotImplementedError

    def hold(self, bucket: str, seconds: float) -> None:
        """No slot of ``bucket`` comes sooner than ``seconds`` from now (at most
        ``LONGEST_WAIT_SECONDS``): the provider said it is limited that long (a 429's
        Retry-After), so calls wait it out or go elsewhere at once, rather than ask again."""


class UnlimitedRates(Rates):
    """Every slot is free at once: for a ToolContext that shares no limits with anyone."""

    def book(self, bucket: str, limit: RateLimit, longest_wait: float) -> float:
        """Return 0: no wait."""
        return 0.0

    def hold(self, bucket: str, seconds: float) -> None:
        """Hold nothing: nothing is shared."""


class RedisRates(Rates):
    """Slots booked in Redis, so that every process using the same Redis shares each bucket."""

    def __init__(self, client: redis.Redis) -> None:
        self._client = client
        self._script = client.register_script(_BOOK)
        self._hold = client.register_script(_HOLD)

    def book(self, bucket: str, limit: RateLimit, longest_wait: float) -> float:
        """Book the next slot of ``bucket`` in Redis; see ``Rates.book``."""
        if not limit.per_second > 0 or not math.isfinite(limit.per_second):
            raise ValueError("A rate must be a positive number of calls a second.")
        interval = max(1, round(1_000_000 / limit.per_second))
        cap = int(limit.per_day or 0)
        key = KEY_PREFIX + bucket
        try:
            status, value = self._script(
                keys=[key, f"{key}:day:"], args=[interval, round(longest_wait * 1_000_000), cap]
            )
        except redis.RedisError as exc:
            # Fail closed: a provider's limit holds whether or not Lookout can count.
            log.warning("rate bucket %s could not be booked: %s", bucket, exc)
            raise RateLimited(UNREACHABLE_RETRY_SECONDS) from exc
        if int(status) < 0:
            raise RateLimited(float(value), daily=True)
        delay = int(value) / 1_000_000
        if int(status) == 0:
            raise RateLimited(delay)
        return delay

    def hold(self, bucket: str, seconds: float) -> None:
        """Move ``bucket``'s next slot to ``seconds`` from now in Redis; see ``Rates.hold``."""
        if not seconds > 0:
            return
        held = round(min(seconds, LONGEST_WAIT_SECONDS) * 1_000_000)
        try:
            self._hold(keys=[KEY_PREFIX + bucket], args=[held])
        except redis.RedisError as exc:  # the provider answers for itself next time
            log.warning("rate bucket %s could not be held: %s", bucket, exc)
