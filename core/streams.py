"""The event streams a user has open, capped at ``QUOTA_EVENT_STREAMS``: a new one past the cap
closes the user's oldest.

One user's streams must not take a web process's capacity. A browser's EventSource cannot read
a 429, so a new stream is never refused: the oldest gets a last event (``stream.closed``) and
ends, and its page follows the turn again when it is focused.

Keys
    lookout:quota:<user>:streams       a sorted set of the user's open streams, by when opened
    lookout:stream:<id>:alive          set while the stream is served, refreshed at each
                                       keep-alive: a stream whose process died stops counting;
                                       its value is the stream's control key
    lookout:stream:<id>:control        the control key of a stream served by a thread of its own
    lookout:streams:hub:<id>           the control key of every stream one process's hub serves
                                       (``webapp/stream_hub.py``)
A control key is a Redis stream its reader also waits on; an entry there (``stream`` names the
stream) is the ``stream.closed`` event that stream sends.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

import redis

from core.extensions import get_redis
from core.turn.events import STREAM_CLOSED, stream_closed
from core.turn.state import LuaScript

# Three keep-alives (15 s apart): a stream not refreshed for this long is gone.
ALIVE_SECONDS = 45
PREFIX = "lookout:stream:"

# KEYS[1]: the user's set of streams. ARGV: the new stream's id, now (ms), allowed, the key
# prefix, alive seconds, the closing event's data, its name, the new stream's control key, and
# "1" to wake that key's reader. Drops streams that are no longer alive, adds the new one,
# wakes the reader (a hub's, whose wait for its streams' news it ends), and closes the oldest
# past ``allowed``; answers the ids it closed. Run by its SHA-1: it was sent whole on every
# stream.
_OPEN = LuaScript("""
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('EXISTS', ARGV[4] .. id .. ':alive') == 0 then redis.call('ZREM', KEYS[1], id) end
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], 86400)
redis.call('SET', ARGV[4] .. ARGV[1] .. ':alive', ARGV[8], 'EX', ARGV[5])
if ARGV[9] == '1' then
  redis.call('XADD', ARGV[8], 'MAXLEN', '~', 100, '*', 'event', 'wake')
end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if over <= 0 then return {} end
local closed = redis.call('ZRANGE', KEYS[1], 0, over - 1)
for _, id in ipairs(closed) do
  redis.call('ZREM', KEYS[1], id)
  local control = redis.call('GET', ARGV[4] .. id .. ':alive')
  redis.call('DEL', ARGV[4] .. id .. ':alive')
  if control and control ~= '1' then
    redis.call('XADD', control, 'MAXLEN', '~', 1000, '*', 'event', ARGV[7], 'data', ARGV[6],
      'stream', id)
    redis.call('EXPIRE', control, 3600)
  end
end
return closed
""")


def streams_key(user_id: str) -> str:
    """Return the key of the user's set of open streams (beside their quota counts)."""
    return f"lookout:quota:{user_id}:streams"


class OpenStream:
    """One served event stream of one user: ``control`` is the key its reader waits on too."""

    def __init__(
        self, client: redis.Redis, user_id: str, allowed: int, control: str | None = None
    ) -> None:
        """A stream of the user, not counted yet (``count``); its closing event goes to
        ``control`` (a hub's key), or to a key of its own."""
        self.client = client
        self.user_id = user_id
        self.allowed = allowed
        self.id = uuid.uuid4().hex
        self.control = control or f"{PREFIX}{self.id}:control"

    def count(self, wake: bool = False) -> None:
        """Count the stream as open, closing the user's oldest past its allowance; with
        ``wake``, end the wait of its control key's reader in the same round trip (a hub
        takes its new streams as its wait ends)."""
        _OPEN(
            self.client,
            [streams_key(self.user_id)],
            [
                self.id,
                int(time.time() * 1000),
                self.allowed,
                PREFIX,
                ALIVE_SECONDS,
                json.dumps(stream_closed(self.allowed)),
                STREAM_CLOSED,
                self.control,
                int(wake),
            ],
        )

    def beat(self, pipe: redis.client.Pipeline | None = None) -> None:
        """Say the stream is still served (at each keep-alive), now or as part of ``pipe``."""
        client = self.client if pipe is None else pipe
        client.set(f"{PREFIX}{self.id}:alive", self.control, ex=ALIVE_SECONDS, xx=True)

    def close(self) -> None:
        """Stop counting the stream (its client went away, or its turn ended)."""
        pipe = self.client.pipeline()
        self.forget(pipe)
        pipe.execute()

    def forget(self, pipe: redis.client.Pipeline) -> None:
        """Add to ``pipe`` the commands that stop counting the stream (a hub closes many)."""
        for command in self.forget_commands():
            pipe.execute_command(*command)

    def forget_commands(self) -> list[tuple[str, ...]]:
        """Return the commands that stop counting the stream, for a caller that sends them
        with others of its own (a hub, with its next read)."""
        commands = [
            ("ZREM", streams_key(self.user_id), self.id),
            ("DEL", f"{PREFIX}{self.id}:alive"),
        ]
        if self.control.endswith(":control"):  # its own key, not a hub's
            commands.append(("DEL", self.control))
        return commands


class ProcessStreams:
    """How many event streams this process serves (capped by ``EVENT_STREAMS_PER_PROCESS``)."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def full(self, cap: int) -> bool:
        """Whether ``cap`` streams are open already (a new one is refused)."""
        return self.count >= cap

    def take(self) -> None:
        """Count one more stream (once its body is being served: a body never read never
        counted)."""
        with self.lock:
            self.count += 1

    def release(self) -> None:
        """Count one stream fewer."""
        with self.lock:
            self.count -= 1


PROCESS_STREAMS = ProcessStreams()


def open_stream(user_id: str, allowed: int, control: str | None = None) -> OpenStream:
    """Return a new stream of the user, counted as open (closing their oldest past
    ``allowed``)."""
    stream = make_stream(user_id, allowed, control)
    stream.count()
    return stream


def make_stream(user_id: str, allowed: int, control: str | None = None) -> OpenStream:
    """Return a new stream of the user, not counted yet: a hub counts it as it takes it."""
    return OpenStream(get_redis(), user_id, allowed, control)


def open_stream_count(user_id: str) -> int:
    """Return how many of the user's streams are served now."""
    client = get_redis()
    ids = [i.decode() for i in client.zrange(streams_key(user_id), 0, -1)]
    pipe = client.pipeline()
    for stream_id in ids:
        pipe.exists(f"{PREFIX}{stream_id}:alive")
    return sum(pipe.execute()) if ids else 0
