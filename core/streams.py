"""The event streams a user has open, capped at ``QUOTA_EVENT_STREAMS``: a new one past the cap
closes the user's oldest.

Each open stream holds a web thread, so one user's streams must not take them all. A browser's
EventSource cannot read a 429, so a new stream is never refused: the oldest gets a last event
(``stream.closed``) and ends, and its page follows the turn again when it is focused.

Keys
    lookout:quota:<user>:streams       a sorted set of the user's open streams, by when opened
    lookout:stream:<id>:alive          set while the stream is served, refreshed at each
                                       keep-alive: a stream whose process died stops counting
    lookout:stream:<id>:control        a Redis stream the serving loop also waits on; an entry
                                       there is the ``stream.closed`` event it sends
"""

from __future__ import annotations

import json
import time
import uuid

import redis

from core.extensions import get_redis
from core.turn.events import STREAM_CLOSED, stream_closed

# Three keep-alives (15 s apart): a stream not refreshed for this long is gone.
ALIVE_SECONDS = 45
PREFIX = "lookout:stream:"

# KEYS[1]: the user's set of streams. ARGV: the new stream's id, now (ms), allowed, the key
# prefix, alive seconds, the closing event's data. Drops streams that are no longer alive, adds
# the new one, and closes the oldest past ``allowed``; answers the ids it closed.
_OPEN = """
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('EXISTS', ARGV[4] .. id .. ':alive') == 0 then redis.call('ZREM', KEYS[1], id) end
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], 86400)
redis.call('SET', ARGV[4] .. ARGV[1] .. ':alive', '1', 'EX', ARGV[5])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over <= 0 then return {} end
local closed = redis.call('ZRANGE', KEYS[1], 0, over - 1)
for _, id in ipairs(closed) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('DEL', ARGV[4] .. id .. ':alive')
  local control = ARGV[4] .. id .. ':control'
  redis.call('XADD', control, '*', 'event', ARGV[7], 'data', ARGV[6])
  redis.call('EXPIRE', control, 60)
end
return closed
"""


def streams_key(user_id: str) -> str:
    """Return the key of the user's set of open streams (beside their quota counts)."""
    return f"lookout:quota:{user_id}:streams"


class OpenStream:
    """One served event stream of one user: ``control`` is the key its loop waits on too."""

    def __init__(self, client: redis.Redis, user_id: str, allowed: int) -> None:
        """Count the stream as open, closing the user's oldest past ``allowed``."""
        self.client = client
        self.user_id = user_id
        self.id = uuid.uuid4().hex
        self.control = f"{PREFIX}{self.id}:control"
        client.eval(
            _OPEN,
            1,
            streams_key(user_id),
            self.id,
            int(time.time() * 1000),
            allowed,
            PREFIX,
            ALIVE_SECONDS,
            json.dumps(stream_closed(allowed)),
            STREAM_CLOSED,
        )

    def beat(self) -> None:
        """Say the stream is still served (at each keep-alive)."""
        self.client.set(f"{PREFIX}{self.id}:alive", "1", ex=ALIVE_SECONDS, xx=True)

    def close(self) -> None:
        """Stop counting the stream (its client went away, or its turn ended)."""
        pipe = self.client.pipeline()
        pipe.zrem(streams_key(self.user_id), self.id)
        pipe.delete(f"{PREFIX}{self.id}:alive", self.control)
        pipe.execute()


def open_stream(user_id: str, allowed: int) -> OpenStream:
    """Count a new stream of the user as open (closing their oldest past ``allowed``)."""
    return OpenStream(get_redis(), user_id, allowed)


def open_stream_count(user_id: str) -> int:
    """Return how many of the user's streams are served now."""
    client = get_redis()
    ids = [i.decode() for i in client.zrange(streams_key(user_id), 0, -1)]
    pipe = client.pipeline()
    for stream_id in ids:
        pipe.exists(f"{PREFIX}{stream_id}:alive")
    return sum(pipe.execute()) if ids else 0
