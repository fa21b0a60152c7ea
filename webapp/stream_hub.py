"""One Redis reader per web process that fans each turn's events out to every stream following it.

A request thread checks the stream (sign-in, the turn's owner and ending, the user's stream
limit) and hands its connection to the process's ``Hub`` (``follow``), then lets go of it: the
hub's one thread reads every followed turn's events with one blocking XREAD, encodes each event
once, and writes it to each follower's socket (``webapp/stream_sockets.py``); nothing holds a
thread per stream. The wire is the thread-served stream's: the same ``id:``/``event:``/``data:``
lines, a keep-alive comment every ``KEEPALIVE_SECONDS``, resume after ``Last-Event-ID``, the
stored ending of a turn whose events expired, and ``stream.closed`` when the user's newest stream
takes this one's place.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from functools import cache

import redis
from flask import Flask, current_app
from sqlalchemy import Select, bindparam

from core import metrics
from core.extensions import REDIS_READ_TIMEOUT_SECONDS, db
from core.models import Turn
from core.streams import PROCESS_STREAMS, OpenStream
from core.turn import state
from core.turn.events import STREAM_CLOSED, TERMINAL_EVENTS, ending_event
from core.turn.lifecycle import OPEN_STATUSES
from webapp.stream_sockets import Client, SocketLoop, chunk, response_head
from webapp.stream_worker import CLAIM, HEAD, ConnectionClaimed

log = logging.getLogger(__name__)

KEEPALIVE_SECONDS = 15
SWEEP_SECONDS = 1.0  # how often keep-alives fall due: their timing is this coarse
COUNT = 500  # events read per turn per round
KEEPALIVE = chunk(b": keep-alive\n\n")
TERMINAL_NAMES = frozenset(name.encode() for name in TERMINAL_EVENTS)


@cache
def _endings() -> Select:
    """The query of the turns' (``ids``) status and error: built once, not on every sweep."""
    return db.select(Turn.id, Turn.status, Turn.error).where(
        Turn.id.in_(bindparam("ids", expanding=True))
    )


def parse_id(text: str) -> tuple[int, int] | None:
    """Return a Redis stream id ("ms-seq" or "ms") as a pair to compare; None if it is not one."""
    ms, _, seq = text.partition("-")
    if not ms.isdigit() or not (seq.isdigit() or seq == ""):
        return None
    return int(ms), int(seq or 0)


def event_frame(entry_id: str | None, name: str, data: str) -> str:
    """Return one event as Server-Sent Events text (``data`` is its JSON)."""
    if entry_id is None:
        return f"event: {name}\ndata: {data}\n\n"
    return f"id: {entry_id}\nevent: {name}\ndata: {data}\n\n"


def entry(raw_id: bytes, flat: list[bytes]) -> tuple[bytes, dict[bytes, bytes]]:
    """Return a stream entry as read from Redis (its fields a flat list) as (id, fields)."""
    return raw_id, dict(zip(flat[::2], flat[1::2], strict=True))


UNREAD = object()  # a follower's ending not known: a sweep reads it from the database


class Follower:
    """One stream the hub serves: its socket, its turn's key, the last event it was sent, and
    its turn's ending as the events view read it a moment ago (None: open), for its first
    round."""

    __slots__ = ("client", "key", "turn_id", "last", "stream", "due", "fresh", "gone", "ending")

    def __init__(
        self,
        turn_id: str,
        last: tuple[int, int],
        stream: OpenStream,
        ending: tuple[str, str | None] | None | object = UNREAD,
    ) -> None:
        self.client: Client | None = None
        self.turn_id = turn_id
        self.key = state.key(turn_id, "events")
        self.last = last
        self.stream = stream
        self.due = 0.0  # when its next keep-alive falls due (monotonic)
        self.fresh = True  # its first round, which ends at once when nothing is there
        self.gone = False
        self.ending = ending


class Hub:
    """The event streams of one web process, read from Redis by one thread."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client = redis.Redis.from_url(
            app.config["REDIS_URL"],
            socket_connect_timeout=2,
            socket_timeout=REDIS_READ_TIMEOUT_SECONDS,
            health_check_interval=30,
        )
        # The round's XREAD goes straight to a connection of the hub's own, with redis-py's
        # retries: through the client, its pool, wrappers and reply conversion cost more than
        # the read (a round for each batch of text a worker publishes).
        pool = self.client.connection_pool
        self.reader = pool.connection_class(**pool.connection_kwargs)
        self.control = f"lookout:streams:hub:{uuid.uuid4().hex}"
        self.control_last = "0-0"
        self.sockets = SocketLoop()
        self.lock = threading.Lock()
        self.joining: list[Follower] = []
        self.leaving: list[Follower] = []
        self.by_key: dict[str, set[Follower]] = {}
        self.cursor: dict[str, tuple[int, int]] = {}
        self.by_stream: dict[str, Follower] = {}
        self.forgotten: list[OpenStream] = []
        self.fresh: list[Follower] = []
        self.next_sweep = 0.0
        threading.Thread(target=self.run, name="event-stream-hub", daemon=True).start()

    def hand_off(self, environ: dict, follower: Follower) -> Iterator[bytes]:
        """Return the body of a stream the hub serves: it takes the request's connection and
        raises ``ConnectionClaimed``, so that the server lets go of it."""
        PROCESS_STREAMS.take()
        try:
            status, headers = environ[HEAD]
            self.follow(environ["gunicorn.socket"], response_head(status, headers), follower)
        except Exception:
            PROCESS_STREAMS.release()
            follower.stream.close()
            raise
        raise ConnectionClaimed()
        yield b""  # a generator, so that the server runs the above when it reads the body

    def follow(self, sock, head: bytes, follower: Follower) -> None:
        """Serve ``follower`` on ``sock`` from now on, after the response's ``head``, its
        stream counted open here (``OpenStream.count``)."""
        follower.client = Client(sock, self.sockets, lambda: self.leave(follower))
        metrics.EVENT_STREAMS_OPEN.inc()
        follower.client.send(head)
        self.sockets.ask("watch", follower.client)
        with self.lock:
            self.joining.append(follower)
        # Counted open once it is among the joiners, and the reader's wait ended in the same
        # round trip (a wake-up of its own was one more), so that its first read is at once.
        try:
            follower.stream.count(wake=True)
        except redis.RedisError:
            follower.client.finish()  # as a stream Redis could not count: the page reconnects

    def leave(self, follower: Follower) -> None:
        """Note that the follower's client hung up or was dropped (from the socket thread)."""
        with self.lock:
            self.leaving.append(follower)

    def run(self) -> None:
        """Serve rounds until the process exits; a failing Redis ends every stream."""
        while True:
            try:
                self.serve_round()
            except Exception as exc:
                if not isinstance(exc, redis.RedisError):
                    log.exception("the event stream hub failed; its streams end and reconnect")
                self.end_all()
                time.sleep(0.5)

    def serve_round(self) -> None:
        """Take joiners and leavers, read every followed turn once, send what came."""
        self.take_changes()
        now = time.monotonic()
        fresh, self.fresh = self.fresh, []
        wait = max(1, int((self.next_sweep - now) * 1000))
        keys = [self.control, *self.cursor]
        ids = [self.control_last, *(f"{ms}-{seq}" for ms, seq in self.cursor.values())]
        by_name = self.read(keys, ids, None if fresh else wait)
        now = time.monotonic()
        control = by_name.pop(self.control, None)
        if control:
            self.control_last = control[-1][0].decode()
            self.take_control(control)
        for key, entries in by_name.items():
            self.deliver(key, entries, now)
        for follower in fresh:
            if follower.fresh and not follower.gone:  # nothing yet: its ending or a keep-alive
                follower.fresh = False
                follower.due = 0.0
        if fresh or now >= self.next_sweep:
            self.sweep(now)

    def read(self, keys: list[str], ids: list[str], block: int | None) -> dict[str, list]:
        """Return the new entries of each stream of ``keys`` after its id in ``ids`` (waiting
        up to ``block`` ms for one), as ``{name: [(id, fields), ...]}``; the streams that ended
        since the last read stop counting first, in the same round trip (they were one of
        their own through a pipeline)."""
        command = ["XREAD", "COUNT", COUNT]
        if block is not None:
            command += ["BLOCK", block]
        command += ["STREAMS", *keys, *ids]
        forgotten, self.forgotten = self.forgotten, []
        ending = [c for stream in forgotten for c in stream.forget_commands()]
        reader = self.reader
        packed = reader.pack_commands([*ending, command])

        def send_and_read():
            reader.send_packed_command(packed)
            for _ in ending:  # sent again on a retry: removing twice is removing once
                reader.read_response()
            return reader.read_response()

        try:
            answer = reader.retry.call_with_retry(send_and_read, lambda _error: reader.disconnect())
        except Exception:
            self.forgotten[:0] = forgotten  # ``end_all`` tries them once more
            raise
        if not answer:
            return {}
        # RESP3 answers a map, RESP2 a list of pairs; each entry's fields come as a flat list.
        pairs = answer.items() if isinstance(answer, dict) else answer
        return {name.decode(): [entry(*flat) for flat in entries] for name, entries in pairs}

    def take_changes(self) -> None:
        with self.lock:
            joining, self.joining = self.joining, []
            leaving, self.leaving = self.leaving, []
        for follower in joining:
            if follower.gone or follower.client.closed:
                self.unregister(follower)
                continue
            self.by_key.setdefault(follower.key, set()).add(follower)
            self.by_stream[follower.stream.id] = follower
            self.fresh.append(follower)
            cursor = self.cursor.get(follower.key, follower.last)
            self.cursor[follower.key] = min(cursor, follower.last)
        for follower in leaving:
            self.unregister(follower)

    def take_control(self, entries) -> None:
        """Close the streams whose user opened one past their limit."""
        for _entry_id, fields in entries:
            if fields.get(b"event") != STREAM_CLOSED.encode():
                continue  # a wake-up
            follower = self.by_stream.get(fields.get(b"stream", b"").decode())
            if follower is not None:
                data = json.dumps(json.loads(fields[b"data"]))
                follower.client.finish(chunk(event_frame(None, STREAM_CLOSED, data).encode()))
                self.unregister(follower)

    def deliver(self, key: str, entries, now: float) -> None:
        """Send a turn's new events to each follower that has not had them, in one write each
        (a round that carries many events costs one system call per follower, not many)."""
        frames = []
        for raw_id, fields in entries:
            name = fields[b"event"]
            # The stored data is the event's JSON already (escaped, so on one line): it goes
            # out as it was written, never decoded and encoded again.
            framed = chunk(b"id: %s\nevent: %s\ndata: %s\n\n" % (raw_id, name, fields[b"data"]))
            ms, _, seq = raw_id.partition(b"-")
            ending = name in TERMINAL_NAMES
            frames.append(((int(ms), int(seq)), ending, framed))
            if ending:
                break  # nothing follows a turn's end
        whole = b"".join(frame for _, _, frame in frames)
        for follower in list(self.by_key.get(key, ())):
            body = whole
            if follower.last >= frames[0][0]:  # a resumed stream that had some already
                body = b"".join(frame for at, _, frame in frames if at > follower.last)
                if not body:
                    continue
            follower.last = frames[-1][0]
            follower.fresh = False
            follower.ending = UNREAD  # its keep-alives read the ending from the database
            follower.due = now + KEEPALIVE_SECONDS
            if frames[-1][1]:
                follower.client.finish(body)
                self.unregister(follower)
            elif not follower.client.send(body):
                self.unregister(follower)
        if key in self.by_key:
            self.cursor[key] = frames[-1][0]

    def sweep(self, now: float) -> None:
        """Send keep-alives that fell due, or the stored ending of a turn whose events expired.

        A stream in its first round with nothing to send takes its turn's ending from the
        events view's query of a moment ago (a turn seen open then cannot have lost its events
        since), and needs no beat (its stream was counted open just now): neither a query nor a
        round trip of its own. Every later keep-alive reads the ending from the database."""
        self.next_sweep = now + SWEEP_SECONDS
        due = [f for fs in self.by_key.values() for f in fs if f.due <= now]
        if not due:
            return
        endings = self.read_endings({f.turn_id for f in due if f.ending is UNREAD})
        pipe = self.client.pipeline(transaction=False)
        for follower in due:
            first, ending = follower.ending is not UNREAD, follower.ending
            follower.ending = UNREAD  # known for the first round only
            if not first:
                ending = endings.get(follower.turn_id)
            if ending is not None:  # ended, and its stream expired (or lost its end)
                status, error = ending
                data = json.dumps({"error": error} if error else {})
                frame = event_frame(None, ending_event(status), data)
                follower.client.finish(chunk(frame.encode()))
                self.unregister(follower)
            elif follower.client.send(KEEPALIVE):
                follower.due = now + KEEPALIVE_SECONDS
                if not first:
                    follower.stream.beat(pipe)
            else:
                self.unregister(follower)
        pipe.execute()  # no round trip when nothing was added

    def read_endings(self, ids: set[str]) -> dict[str, tuple[str, str | None]]:
        """Return the ending (status, error) of each turn of ``ids`` that has ended."""
        if not ids:
            return {}
        with self.app.app_context():
            rows = db.session.execute(_endings(), {"ids": list(ids)})
            endings = {r.id: (r.status, r.error) for r in rows if r.status not in OPEN_STATUSES}
            db.session.remove()
        return endings

    def unregister(self, follower: Follower) -> None:
        """Stop serving a follower, once; its stream stops counting with the next read."""
        if follower.gone:
            return
        follower.gone = True
        followers = self.by_key.get(follower.key)
        if followers is not None:
            followers.discard(follower)
            if not followers:
                del self.by_key[follower.key]
                self.cursor.pop(follower.key, None)
        self.by_stream.pop(follower.stream.id, None)
        self.forgotten.append(follower.stream)
        metrics.EVENT_STREAMS_OPEN.dec()
        PROCESS_STREAMS.release()

    def forget(self) -> None:
        """Stop counting the streams that ended, in one round trip (``end_all``: a round
        sends them with its read)."""
        if not self.forgotten:
            return
        pipe = self.client.pipeline(transaction=False)
        for stream in self.forgotten:
            stream.forget(pipe)
        self.forgotten = []
        pipe.execute()

    def end_all(self) -> None:
        """End every stream (Redis failed: each page reconnects and resumes after its last)."""
        with self.lock:
            joining, self.joining = self.joining, []
        for follower in [*joining, *self.by_stream.values()]:
            if follower.client is not None:
                follower.client.finish()
            self.unregister(follower)
        self.by_key.clear()
        self.cursor.clear()
        try:
            self.forget()
        except redis.RedisError:
            self.forgotten = []  # they stop counting when their alive keys expire


_CREATING = threading.Lock()


def get_hub(app: Flask) -> Hub:
    """Return this process's hub for ``app``, starting it on first use."""
    hub = app.extensions.get("lookout_stream_hub")
    if hub is None:
        with _CREATING:
            hub = app.extensions.get("lookout_stream_hub")
            if hub is None:
                hub = app.extensions["lookout_stream_hub"] = Hub(app)
    return hub


def find_hub(environ: dict) -> Hub | None:
    """Return this process's hub when the server lets it claim the request's connection (the
    Lookout gunicorn worker, HTTP/1.1, no TLS); None when the stream must hold its thread."""
    if not environ.get(CLAIM) or environ.get("SERVER_PROTOCOL") != "HTTP/1.1":
        return None
    if type(environ.get("gunicorn.socket")) is not socket.socket:
        return None
    return get_hub(current_app._get_current_object())
