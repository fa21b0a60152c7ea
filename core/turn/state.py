"""A turn's state in Redis: its event stream, its cancel flag and its tools' turn cache.

Keys, all under ``lookout:turn:<id>:``
    events   a Redis Stream of turn events; the entry id is the SSE ``id:``
    cancel   raised when the turn ends cancelled; every step and tool call watches it
    tasks    the ids of the turn's queued Celery tasks, revoked on cancel
    queued   the turn's work whose task waits in the queue (``core.turn.queued``)
    cited    the URLs the reply cites, so parallel tool calls add each source once; with the
             member '' once a step seeded it with every URL the reply cited (``seed_cited``),
             which spares a tool call the database's answer (``cite``'s ``known``)
    cache    a hash of JSON values, one field per ``<tool>\\0<key>``
    ended    set when the turn ends: later events, cache writes, tasks and markers are dropped
    database_gave_up  when a task of the turn gave up on the database (``workers.turn_task``)
    sent     the steps a tool call's end has sent (``workers.fanout.send_next_step``)
Only ``key`` makes a turn's key, and only of these names. The cache, the task ids, the cited
URLs, the queued markers, the steps sent and the database note are deleted when the turn
ends; the stream and the cancel flag expire a while later (the flag is never deleted: work
still running must see it). Other TTLs are only the safety net. Nothing outlives its turn:
work that finishes late (a tool call abandoned at its deadline) neither recreates the cache,
the task list, the markers or the steps sent nor extends the stream.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

import redis
from redis.client import Pipeline
from redis.exceptions import NoScriptError

from core.extensions import get_redis

SAFETY_TTL_SECONDS = 24 * 3600
# The ids of turns (and MCP calls) whose cancel flag just went up; see ``raise_cancel``.
CANCEL_CHANNEL = "lookout:cancels"


class LuaScript:
    """A Lua script run by its SHA-1, loaded into a server that does not know it yet.

    Made once per process: redis-py's ``register_script`` made a script object, and hashed its
    text, on every event a turn published.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()

    def __call__(self, client: redis.Redis, keys: list[str], args: list[Any]) -> Any:
        """Return what the script answers for ``keys`` and ``args``."""
        try:
            return client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:  # a new or restarted server
            client.script_load(self.text)
            return client.evalsha(self.sha, len(keys), *keys, *args)

    def queue(self, pipe: Pipeline, keys: list[str], args: list[Any]) -> None:
        """Queue the script's run in ``pipe``; its answer there is a NoScriptError until the
        server has the script (``load``)."""
        pipe.evalsha(self.sha, len(keys), *keys, *args)

    def load(self, client: redis.Redis) -> None:
        """Give the server the script, so that a pipeline may run it by its SHA."""
        client.script_load(self.text)

    def head(self, keys: list[str], args: list[str], count: int) -> bytes:
        """Return the start of a run of the script with ``count`` arguments, packed in Redis's
        protocol: its SHA, ``keys`` and the first arguments, ``args``; the caller appends the
        rest, each ``packed_arg``. A run whose keys and first arguments repeat packs them once."""
        parts = [b"EVALSHA", self.sha.encode(), b"%d" % len(keys)]
        parts += [part.encode() for part in (*keys, *args)]
        total = len(parts) + count - len(args)
        return b"*%d\r\n" % total + b"".join(packed_arg(part) for part in parts)


def packed_arg(value: bytes) -> bytes:
    """Return one argument of a command in Redis's protocol (as redis-py packs it)."""
    return b"$%d\r\n%s\r\n" % (len(value), value)


# KEYS: the stream, the ended marker; ARGV: event, data, safety TTL. The TTL is set only on a
# stream without one, so an event never pushes out the expiry the turn's end set.
_PUBLISH = LuaScript("""
if redis.call('exists', KEYS[2]) == 1 then return false end
local id = redis.call('xadd', KEYS[1], '*', 'event', ARGV[1], 'data', ARGV[2])
if redis.call('ttl', KEYS[1]) == -1 then redis.call('expire', KEYS[1], ARGV[3]) end
return id
""")
_TTL_ARG = packed_arg(b"%d" % SAFETY_TTL_SECONDS)  # _PUBLISH's last argument, packed
# KEYS: one of the turn's sets (tasks, queued), the ended marker; ARGV: member, safety
# TTL. Answers 1 when the member was added.
_ADD_UNLESS_ENDED = LuaScript("""
if redis.call('exists', KEYS[2]) == 1 then return 0 end
local added = redis.call('sadd', KEYS[1], ARGV[1])
if redis.call('ttl', KEYS[1]) == -1 then redis.call('expire', KEYS[1], ARGV[2]) end
return added
""")


def queue_lua(first_key: int, first_arg: int) -> str:
    """Return the Lua of ``TurnState.queue`` reading its keys (the queued set, the task set,
    the ended marker) from ``KEYS[first_key]`` on and its values (work, task id, safety TTL)
    from ``ARGV[first_arg]`` on, so another script can do the same in its own round trip (the
    start lock's release, ``core.turn_starts``)."""
    queued, tasks, ended = (f"KEYS[{first_key + n}]" for n in range(3))
    work, task, ttl = (f"ARGV[{first_arg + n}]" for n in range(3))
    return f"""
if redis.call('exists', {ended}) == 0 then
  redis.call('sadd', {queued}, {work})
  if redis.call('ttl', {queued}) == -1 then redis.call('expire', {queued}, {ttl}) end
  redis.call('sadd', {tasks}, {task})
  if redis.call('ttl', {tasks}) == -1 then redis.call('expire', {tasks}, {ttl}) end
end
"""


# KEYS: the cited set, the event stream, the ended marker; ARGV: the safety TTL, the event, the
# mode, the number of URLs to seed, those URLs, then each URL to claim and its event's data.
# The mode: 'claim' claims; 'seed' first adds the URLs and the member '' that marks the set
# whole (every URL the reply cites is in it); 'whole' claims only in a set so marked, else
# answers -1, claiming nothing (Redis lost the set since it was seeded, or nothing seeded it).
# Claims each URL and appends its event when the claim is new, in order; answers false once
# the turn has ended, else a 1 or 0 for each URL. One round trip where the turn's end check,
# each claim and each event were one each.
_CITE = LuaScript("""
if redis.call('exists', KEYS[3]) == 1 then return false end
local seeded = 4 + tonumber(ARGV[4])
if ARGV[3] == 'seed' then
  redis.call('sadd', KEYS[1], '')
  for i = 5, seeded do redis.call('sadd', KEYS[1], ARGV[i]) end
elseif ARGV[3] == 'whole' and redis.call('sismember', KEYS[1], '') == 0 then
  return -1
end
local claimed = {}
for i = seeded + 1, #ARGV, 2 do
  local added = redis.call('sadd', KEYS[1], ARGV[i])
  if added == 1 then
    redis.call('xadd', KEYS[2], '*', 'event', ARGV[2], 'data', ARGV[i + 1])
  end
  claimed[#claimed + 1] = added
end
for i = 1, 2 do
  if redis.call('ttl', KEYS[i]) == -1 then redis.call('expire', KEYS[i], ARGV[1]) end
end
return claimed
""")
# A published task's marker and id in one round trip (they were a script call each).
_QUEUE = LuaScript(queue_lua(1, 1) + "return 1\n")
# KEYS: the cache hash, the ended marker; ARGV: field, value, safety TTL.
_CACHE_SET = LuaScript("""
if redis.call('exists', KEYS[2]) == 1 then return 0 end
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
if redis.call('ttl', KEYS[1]) == -1 then redis.call('expire', KEYS[1], ARGV[3]) end
return 1
""")


def load_pipelined_scripts(client: redis.Redis) -> None:
    """Give the server the scripts a pipeline or a packed command runs (``TurnState.publish_in``,
    ``publish_command``, ``seed_cited_in``): they answer NoScriptError where a lone call loads
    the script and runs it again."""
    _PUBLISH.load(client)
    _CITE.load(client)


def raise_cancel(pipe: Pipeline, turn_id: str, ttl_seconds: int) -> None:
    """Queue in ``pipe`` the raising of ``turn_id``'s cancel flag and its publishing on
    ``CANCEL_CHANNEL``, which wakes the watchers (``workers.watch``). The flag stays the truth:
    a watcher that missed the message (Redis restarted, its connection dropped) reads it."""
    pipe.set(key(turn_id, "cancel"), "1", ex=ttl_seconds)
    pipe.publish(CANCEL_CHANNEL, turn_id)


def turn_state(turn_id: str) -> TurnState:
    """Return the Redis side of a turn, through the current app's client."""
    return TurnState(get_redis(), turn_id)


KEY_NAMES = (
    "events", "cancel", "tasks", "queued", "cited", "cache", "ended", "database_gave_up", "sent"
)  # fmt: skip


def key(turn_id: str, name: str) -> str:
    """Return the Redis key of one part of a turn's state; raise ValueError for a name that
    is not one of ``KEY_NAMES`` (add it there, with what it holds, and to ``_END_KEYS``)."""
    if name not in KEY_NAMES:
        raise ValueError(f"{name!r} is not a turn key; name it in core/turn/state.py first.")
    return f"lookout:turn:{turn_id}:{name}"


def queue_keys(turn_id: str) -> list[str]:
    """Return the keys ``queue_lua`` reads, in its order."""
    return [key(turn_id, "queued"), key(turn_id, "tasks"), key(turn_id, "ended")]


# KEYS: the steps sent, the ended marker; ARGV: the step, safety TTL. Answers 1 when the step
# was not sent before, or the turn has ended (its set is gone and is not made again).
_SEND_ONCE = LuaScript("""
if redis.call('exists', KEYS[2]) == 1 then return 1 end
if redis.call('sadd', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('ttl', KEYS[1]) == -1 then redis.call('expire', KEYS[1], ARGV[2]) end
return 1
""")


# The keys ``TurnState.end`` reads: the event stream, the ended marker, the cancel flag, then
# every key deleted as the turn ends.
_END_KEYS = (
    "events", "ended", "cancel", "cache", "tasks", "cited", "queued", "database_gave_up", "sent"
)  # fmt: skip
# KEYS: ``_END_KEYS``; ARGV: the last event's name ('' for none) and data, the safety TTL, the
# stream's TTL, '1' to raise the cancel flag ('' not to), the cancel channel, the turn's id.
# One script, where a MULTI/EXEC pipeline of six commands cost the worker 2.6 times the Python
# calls and 1.6 times the CPU (its packing of each command and parsing of each answer); as
# atomic.
_END = LuaScript("""
if ARGV[1] ~= '' then
  redis.call('xadd', KEYS[1], '*', 'event', ARGV[1], 'data', ARGV[2])
end
redis.call('set', KEYS[2], '1', 'EX', ARGV[3])
if ARGV[5] == '1' then
  redis.call('set', KEYS[3], '1', 'EX', ARGV[4])
  redis.call('publish', ARGV[6], ARGV[7])
end
redis.call('del', KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9])
redis.call('expire', KEYS[1], ARGV[4])
return 1
""")


class TurnState:
    """The Redis side of one turn."""

    def __init__(self, client: redis.Redis, turn_id: str) -> None:
        self.client = client
        self.turn_id = turn_id
        self._heads: dict[str, bytes] = {}  # ``publish_command``'s, by event

    def publish(self, event: str, data: dict[str, Any] | None = None) -> str | None:
        """Append an event to the turn's stream and return its id; None once the turn ended."""
        entry_id = _PUBLISH(self.client, *self._publishing(event, data))
        return entry_id.decode() if isinstance(entry_id, bytes) else entry_id

    def publish_in(self, pipe: Pipeline, event: str, data: dict[str, Any]) -> None:
        """Queue ``publish`` of the event in ``pipe``, a pipeline of this turn's client; its
        answer there is the entry id, None once the turn ended, or the error (a NoScriptError
        until ``load_pipelined_scripts``)."""
        _PUBLISH.queue(pipe, *self._publishing(event, data))

    def publish_command(self, event: str, data: dict[str, Any]) -> bytes:
        """Return ``publish`` of the event packed in Redis's protocol, for a connection of this
        turn's server to send (``workers.watch``'s kept one); its answer there is as
        ``publish_in``'s. The script's SHA, the keys and the event's name are packed once a
        turn and event: only the data is packed each call."""
        head = self._heads.get(event)
        if head is None:
            keys = [key(self.turn_id, "events"), key(self.turn_id, "ended")]
            head = self._heads[event] = _PUBLISH.head(keys, [event], 3)
        return head + packed_arg(json.dumps(data, ensure_ascii=False).encode()) + _TTL_ARG

    def _publishing(self, event: str, data: dict[str, Any] | None) -> tuple[list[str], list[Any]]:
        keys = [key(self.turn_id, "events"), key(self.turn_id, "ended")]
        return keys, [event, json.dumps(data or {}, ensure_ascii=False), SAFETY_TTL_SECONDS]

    def read(
        self,
        after: str = "0",
        block_ms: int | None = None,
        count: int = 500,
        control: str | None = None,
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Return the events after ``after`` as (id, event, data), waiting up to ``block_ms``.

        With ``control`` (a Redis stream of one reader's own, ``core/streams.py``), the wait
        also ends when an entry is added there; its entries come first, as (id, event, data)
        from their ``event`` and ``data`` fields, with nothing of the turn's after them.
        """
        streams = {key(self.turn_id, "events"): after}
        if control is not None:
            streams[control] = "0"
        answer = self.client.xread(streams, count=count, block=block_ms)
        if control is not None:
            for stream, entries in answer or []:
                if stream.decode() == control and entries:
                    answer = [(stream, entries[:1])]
        events = []
        for _stream, entries in answer or []:
            for entry_id, fields in entries:
                name = fields[b"event"].decode()
                events.append((entry_id.decode(), name, json.loads(fields[b"data"])))
        return events

    def events_since(
        self, names: tuple[str, ...], page: int = 500
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Return the events after the last one named in ``names`` (all of them when none is),
        oldest first, as (id, event, data); read from the end, so a long stream costs its tail."""
        stream = key(self.turn_id, "events")
        found: list[tuple[str, str, dict[str, Any]]] = []
        upper = "+"
        while True:
            entries = self.client.xrevrange(stream, max=upper, min="-", count=page)
            for entry_id, fields in entries:
                name = fields[b"event"].decode()
                if name in names:
                    return found[::-1]
                found.append((entry_id.decode(), name, json.loads(fields[b"data"])))
            if len(entries) < page:
                return found[::-1]
            upper = "(" + entries[-1][0].decode()

    def cite(
        self,
        event: str,
        sources: list[tuple[str, dict[str, Any]]],
        known: Callable[[], Iterable[str]] | None = None,
    ) -> list[bool] | None:
        """Record that the reply cites each URL of ``sources`` (a URL and its event's data)
        and publish ``event`` for each one no parallel call cited first, in one round trip;
        return whether each was new, or None once the turn has ended (nothing recorded).

        ``known``, for a caller that does not know what the reply cites (a tool call): its
        claims count only in a set a step seeded (``seed_cited``); in one Redis lost since
        (a restart), ``known()`` (the database's answer) seeds it again in a second round
        trip, with the claims, so a URL the reply cited before is never published again."""
        claims: list[Any] = []
        for url, data in sources:
            claims += [url, json.dumps(data, ensure_ascii=False)]
        mode = "claim" if known is None else "whole"
        claimed = _CITE(self.client, self._citing(), [*self._cite_args(event, mode, ()), *claims])
        if claimed == -1:
            seed = self._cite_args(event, "seed", known())
            claimed = _CITE(self.client, self._citing(), [*seed, *claims])
        return None if claimed is None else [bool(new) for new in claimed]

    def seed_cited_in(self, pipe: Pipeline, cited: Iterable[str]) -> None:
        """Queue ``seed_cited`` in ``pipe``, a pipeline of this turn's client; its answer
        there is a list, None once the turn ended, or the error (a NoScriptError until
        ``load_pipelined_scripts``)."""
        _CITE.queue(pipe, self._citing(), self._cite_args("", "seed", cited))

    def seed_cited(self, cited: Iterable[str]) -> None:
        """Add ``cited``, every URL the reply cites, to the turn's cited set and mark it whole,
        so a tool call's claim needs no other answer (``cite``'s ``known``); nothing once the
        turn has ended."""
        _CITE(self.client, self._citing(), self._cite_args("", "seed", cited))

    def _citing(self) -> list[str]:
        return [key(self.turn_id, "cited"), key(self.turn_id, "events"), key(self.turn_id, "ended")]

    def _cite_args(self, event: str, mode: str, seed: Iterable[str]) -> list[Any]:
        seed = list(seed)
        return [SAFETY_TTL_SECONDS, event, mode, len(seed), *seed]

    def remember_task(self, task_id: str) -> None:
        """Record a queued task of the turn, so a cancel can revoke it; nothing once the turn
        has ended (a Stop's revoke of it is done by then)."""
        self.add_unless_ended("tasks", task_id)

    def add_unless_ended(self, name: str, member: str) -> bool:
        """Add ``member`` to the turn's set ``name``; False when it was there or the turn has
        ended, so that a late publish never brings back a set the end deleted."""
        keys = [key(self.turn_id, name), key(self.turn_id, "ended")]
        return bool(_ADD_UNLESS_ENDED(self.client, keys, [member, SAFETY_TTL_SECONDS]))

    def queue(self, work: str, task_id: str) -> None:
        """Record that the task ``task_id`` for ``work`` waits in the queue: its marker
        (``core.turn.queued``) and its id, which a cancel revokes; nothing once the turn has
        ended, as ``add_unless_ended`` does for each."""
        _QUEUE(self.client, queue_keys(self.turn_id), [work, task_id, SAFETY_TTL_SECONDS])

    def task_ids(self) -> list[str]:
        """Return the ids of the turn's recorded tasks."""
        return [t.decode() for t in self.client.smembers(key(self.turn_id, "tasks"))]

    def cancel_requested(self) -> bool:
        """Whether the cancel flag is up."""
        return bool(self.client.exists(key(self.turn_id, "cancel")))

    def cache(self, tool: str) -> RedisTurnCache:
        """Return the turn cache private to ``tool``."""
        return RedisTurnCache(self.client, self.turn_id, tool)

    def end(
        self,
        stream_ttl_seconds: int,
        cancelled: bool = False,
        event: tuple[str, dict[str, Any]] | None = None,
    ) -> None:
        """Mark the turn ended, raising its cancel flag when it ended ``cancelled``; delete the
        turn cache; let the event stream and the flag expire after ``stream_ttl_seconds``.
        ``event`` (a name and its data), the stream's last, is appended first.

        Only ``core.turn.lifecycle.finish_turn`` calls this. The flag goes up in the same
        round trip as the end and is never lowered, so no later ending (a step that noticed the
        cancel, a late callback) can hide the cancel from work of the turn still running. The
        last event needs no check of the ended marker, as ``publish`` makes: the database lets
        one ending through, and this is the round trip that sets the marker.
        """
        name, data = event if event is not None else ("", None)
        keys = [key(self.turn_id, k) for k in _END_KEYS]
        _END(
            self.client,
            keys,
            [
                name,
                json.dumps(data, ensure_ascii=False) if event is not None else "",
                SAFETY_TTL_SECONDS,
                stream_ttl_seconds,
                "1" if cancelled else "",
                CANCEL_CHANNEL,
                self.turn_id,
            ],
        )

    def first_to_send(self, step: int) -> bool:
        """Return True once for ``step``, to the first of its senders, while the turn runs: of
        two tool calls that end at once and both find every call done, one sends the step.
        Once the turn ended, always True: the step closes a cancelled turn with its calls'
        results (``core.turn.lifecycle.close_cancelled``, which runs once by its own claim)."""
        keys = [key(self.turn_id, "sent"), key(self.turn_id, "ended")]
        return bool(_SEND_ONCE(self.client, keys, [step, SAFETY_TTL_SECONDS]))

    def unsend(self, step: int) -> None:
        """Forget that ``step`` was sent (its sending failed: a later sender may send it)."""
        self.client.srem(key(self.turn_id, "sent"), step)

    def exists(self, name: str) -> bool:
        """Whether the key ``name`` (events, cancel, cache) exists; for checks and tests."""
        return bool(self.client.exists(key(self.turn_id, name)))


class RedisTurnCache(MutableMapping[str, Any]):
    """``ToolContext.turn_cache``: a mapping of JSON values private to one tool in one turn."""

    def __init__(self, client: redis.Redis, turn_id: str, tool: str) -> None:
        self._client = client
        self._key = key(turn_id, "cache")
        self._ended = key(turn_id, "ended")
        self._prefix = f"{tool}\0"

    def __getitem__(self, name: str) -> Any:
        raw = self._client.hget(self._key, self._prefix + name)
        if raw is None:
            raise KeyError(name)
        return json.loads(raw)

    def __setitem__(self, name: str, value: Any) -> None:
        encoded = json.dumps(value, ensure_ascii=False)  # raises TypeError for non-JSON values
        # Dropped once the turn ended: a late write must not recreate the deleted cache.
        _CACHE_SET(
            self._client,
            [self._key, self._ended],
            [self._prefix + name, encoded, SAFETY_TTL_SECONDS],
        )

    def __delitem__(self, name: str) -> None:
        if not self._client.hdel(self._key, self._prefix + name):
            raise KeyError(name)

    def _names(self) -> list[str]:
        fields = self._client.hkeys(self._key)
        prefix = self._prefix.encode()
        return [f[len(prefix) :].decode() for f in fields if f.startswith(prefix)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())
