"""Three threads per worker process: one trips the signals of cancelled turns, one publishes
the text their models stream, one beats for the turns watched. Each waits while it has nothing
to do: none wakes per turn or per poll.

Every running step and tool call registers its Signal under its turn. Where a cancel flag goes
up its turn id is published on ``CANCEL_CHANNEL`` (``core.turn.state.raise_cancel``); the
cancel thread blocks on one subscriber connection to that channel and trips the signals of the
turn named, and a tool blocked in a read is woken by ``Signal.on_cancel``. A message is lost
while Redis restarts or the connection drops, so the flags stay the truth: every
``fallback_seconds`` while turns are watched, and after every (re)subscription, the thread
reads all their flags with one MGET. Polling the flags every 100 ms cost two wake-ups and a
round trip each, most of a text turn's worker CPU outside its step.

A model stream's text waits in its ``HeldText`` (``workers.streaming.DeltaBuffer``), registered
with ``holding``: every send publishes every stream's held text in one round trip, so a process
makes one round trip a batch however many turns stream (a round trip each batch each stream was
most of a streamed token's CPU), and sends at most once every ``text_seconds``
(``TEXT_BATCH_SECONDS``). A stream that holds text again (``text_held``) sends it all on its own
thread, awake already, when the process's last send is that long ago. Else the text thread,
woken only if it is idle, sends it two batches later unless a stream's next read did first, and
then every ``text_seconds`` while any stream still holds text. One stream (its reads come a
batch apart) thus sends each batch as it reads it: the text thread's three wake-ups a batch
(held, its pause, Redis's answer) were half a streamed token's CPU. A stream's thread does not
wait for Redis's answer either (a wake-up of its own): its send stays in flight, holding its
texts, until the next send, a flush (``answer_sent``) or ``close`` reads the answers, by then
long arrived.

Every ``beat_seconds`` the beat thread calls ``beat`` with the turns watched: work that is
registered is alive, however long its model or tool stays silent, and a dead process stops
beating. The beat writes to the database, which may wait (SQLite's lock, a slow PostgreSQL), so
it has a thread of its own: a waiting beat never delays a cancel or a stream's text.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Protocol

import redis
from redis.client import Pipeline
from redis.connection import Connection
from redis.exceptions import NoScriptError, ResponseError

from core.turn.state import CANCEL_CHANNEL, key, load_pipelined_scripts
from tools.api import Signal

# How late a cancel whose message was lost (Redis restarted, the connection dropped) reaches
# its turn at most, about: the cancel thread's read of every watched flag.
FALLBACK_SECONDS = 1.0
# How often a model's streamed text is shown: the poll's pause while a stream holds text. Also
# the least time between two reads of a model's stream (``workers.runtime.provider_client``):
# tokens that come sooner wait in the socket for the next read, which takes them all with one
# wake-up, not one each.
TEXT_BATCH_SECONDS = 0.05
log = logging.getLogger("lookout.workers")


class HeldText(Protocol):
    """Text a stream holds for the watcher's next poll to publish."""

    pending: list[str]  # what is held; empty when all was sent
    taken: int  # how much of ``pending`` a send took, until its answer settles it
    answered: Callable[[], None]  # called before a flush: set by ``holding``

    def queue(self) -> bytes | None:
        """Take the held text for one publish: return that publish packed in Redis's protocol,
        or None when there is none to send. After a command, ``settle`` is called once with
        its answer."""

    def settle(self, answer: Any) -> None:
        """Take the answer of the publish queued (an entry id, None, or the error)."""


class TurnWatcher:
    """Watches the turns this worker holds: trips registered signals when their turn's cancel
    flag goes up, and beats for them (``beat``) so the reaper sees them alive."""

    def __init__(
        self,
        client: redis.Redis,
        beat: Callable[[list[str]], None] | None = None,
        beat_seconds: float = 5.0,
        text_seconds: float = TEXT_BATCH_SECONDS,
        fallback_seconds: float = FALLBACK_SECONDS,
    ) -> None:
        self.client = client
        self.beat = beat
        self.beat_seconds = beat_seconds
        self.text_seconds = text_seconds
        self.fallback_seconds = fallback_seconds
        self._signals: dict[str, set[Signal]] = {}
        self._tripped: set[str] = set()  # watched turns seen cancelled
        self._held: dict[HeldText, None] = {}  # in the order registered: a turn's reasoning first
        self._lock = threading.Lock()
        self._wake = threading.Event()  # set by text_held only while the text thread is idle
        self._idle = False
        self._last_send = -math.inf  # when the last send of held text began, on any thread
        # The connection every send of held text goes by, kept (made at the first send): the
        # pool's round and redis-py's pipeline were most of a send's CPU. The texts of a send
        # whose answers are not read yet, and the lock of every send and of the connection:
        # each send reads the answers of the one before it first.
        self._connection: Connection | None = None
        self._in_flight: list[HeldText] = []
        self._sending = threading.Lock()
        self._loaded = False  # the text thread gave Redis the scripts: streams may send
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._sender: threading.Thread | None = None
        self._beater: threading.Thread | None = None

    @contextmanager
    def watching(self, turn_id: str, signal: Signal, read: bool = True) -> Iterator[Signal]:
        """Trip ``signal`` if the turn is cancelled while the block runs (at once if it was).

        A turn watched already (a step's stream inside the step, a tool call's deadline inside
        its call, two calls of a turn side by side) is not read again: since its first signal
        came, its flag was read and every cancel message or fallback read trips all its
        signals, the new one too; a cancel seen meanwhile trips it as it comes. A turn's first
        signal reads every watched flag (``check_once``), as a cancel may have come before;
        with ``read`` False it does not, and the caller calls ``check_once`` itself before
        anything relies on a signal of the turn (a step, with its first event: one round
        trip for both)."""
        with self._lock:
            watched = turn_id in self._signals
            self._signals.setdefault(turn_id, set()).add(signal)
            tripped = turn_id in self._tripped
            self._thread = started(self._thread, self._listen, "cancel-watch")
            if self.beat is not None:
                self._beater = started(self._beater, self._beat_forever, "turn-beat")
        if tripped:
            signal.cancel()
        elif not watched and read:
            self.check_once()
        try:
            yield signal
        finally:
            with self._lock:
                signals = self._signals.get(turn_id)
                if signals is not None:
                    signals.discard(signal)
                    if not signals:
                        del self._signals[turn_id]
                        self._tripped.discard(turn_id)

    @contextmanager
    def holding(self, held: HeldText) -> Iterator[None]:
        """Publish ``held``'s text every ``text_seconds`` it holds some while the block runs;
        its flush reads the answers of a send in flight first (``answer_sent``)."""
        held.answered = self.answer_sent
        with self._lock:
            self._held[held] = None
            self._sender = started(self._sender, self._send_forever, "text-publish")
        if held.pending:
            self._wake.set()
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(held, None)

    def text_held(self) -> None:
        """Say that a stream holds text: send every stream's held text now, on this
        thread, when the last send is ``text_seconds`` ago, else wake the text thread if it is
        idle (it sends two batches later unless a stream did first). Never raises: a send that fails
        leaves its text held for the text thread."""
        if self._loaded and self._claim_send():
            try:
                self._send(answered=False)
            except Exception:  # the answer goes on; its text waits for the text thread
                log.warning("the text could not be published; retrying", exc_info=True)
            if not self._text_pending():
                return
        if self._idle:
            self._wake.set()

    def _claim_send(self) -> bool:
        """Take the next send when the last began ``text_seconds`` ago (on any thread)."""
        now = time.monotonic()
        with self._lock:
            if now - self._last_send < self.text_seconds:
                return False
            self._last_send = now
            return True

    def _text_pending(self) -> bool:
        with self._lock:
            held = list(self._held)
        return any(len(text.pending) > text.taken for text in held)

    def check_once(self, also: Callable[[Pipeline], None] | None = None) -> list[Any]:
        """Read every watched turn's flag once and trip the signals of cancelled turns.

        ``also`` queues commands of the caller's in the same pipeline, sent in the same round
        trip after the read; their answers are returned, an error among them as the
        exception it is (the caller's to raise or mend). A read that fails raises."""
        with self._lock:
            turn_ids = list(self._signals)
        flags = [key(t, "cancel") for t in turn_ids]
        if also is None:
            if turn_ids:
                self._trip(turn_ids, self.client.mget(flags))
            return []
        with self.client.pipeline(transaction=False) as pipe:
            if turn_ids:
                pipe.mget(flags)
            also(pipe)
            answers = pipe.execute(raise_on_error=False)
        if turn_ids:
            read = answers.pop(0)
            if isinstance(read, Exception):
                raise read
            self._trip(turn_ids, read)
        return answers

    def send_once(self) -> None:
        """Publish every stream's held text in one round trip. A publish that fails (its turn
        ended, Redis refused it) holds that stream's text and leaves the others' alone."""
        self._send(answered=True)

    def answer_sent(self) -> None:
        """Read the answers of the send in flight, if any, and settle its texts (which frees
        their buffers for a flush)."""
        with self._sending:
            self._read_answers()

    def _send(self, answered: bool) -> None:
        """Send every stream's held text in one round trip, after reading the answers of the
        send before; with ``answered``, read this one's too, else leave it in flight."""
        with self._sending:
            self._read_answers()
            with self._lock:
                held = list(self._held)
            queued, commands = [], []
            for text in held:
                command = text.queue()
                if command is not None:
                    queued.append(text)
                    commands.append(command)
            if not queued:
                return
            try:
                connection = self._ready_connection()
                connection.send_packed_command([b"".join(commands)])
            except Exception as exc:  # Redis is down: the texts stay held, unlocked
                self._settle(queued, [exc] * len(queued))
                raise
            self._in_flight = queued
            if answered:
                self._read_answers()

    def _ready_connection(self) -> Connection:
        """Return the kept connection, connected and with nothing to read, as the pool hands
        out its own: one the server closed (a restart) or left data on is made anew. Raises
        what connecting raises."""
        connection = self._connection
        if connection is None:
            pool = self.client.connection_pool
            connection = self._connection = pool.connection_class(**pool.connection_kwargs)
        connection.connect()
        try:
            if connection.can_read():
                raise redis.ConnectionError("the connection has data")
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            connection.disconnect()
            connection.connect()
        return connection

    def _read_answers(self) -> None:
        """Settle the texts of the send in flight with its answers (the lock ``_sending``
        held). A refused publish's answer is its error; a lost connection's, for every text."""
        queued = self._in_flight
        if not queued:
            return
        self._in_flight = []
        connection = self._connection
        answers: list[Any] = []
        try:
            for _text in queued:
                try:
                    answers.append(connection.read_response())
                except ResponseError as exc:
                    answers.append(exc)
        except Exception as exc:  # a RedisError: the connection was lost
            connection.disconnect()
            answers += [exc] * (len(queued) - len(answers))
        finally:
            self._settle(queued, answers)
        if any(isinstance(answer, NoScriptError) for answer in answers):
            load_pipelined_scripts(self.client)  # a restarted server: the next send sends it

    def _settle(self, queued: list[HeldText], answers: list[Any]) -> None:
        """Settle each text with its answer; wake the idle text thread to retry text held again."""
        for text, answer in zip(queued, answers, strict=True):
            text.settle(answer)
        if self._idle and any(isinstance(answer, Exception) for answer in answers):
            self._wake.set()

    def _trip(self, turn_ids: list[str], flags: list[bytes | None]) -> None:
        for turn_id, flag in zip(turn_ids, flags, strict=True):
            if flag is not None:
                self._trip_turn(turn_id)

    def _trip_turn(self, turn_id: str) -> None:
        """Trip the signals watching ``turn_id``, if any (a cancel published for a turn this
        process does not run names none)."""
        with self._lock:
            signals = list(self._signals.get(turn_id, ()))
            if signals:
                self._tripped.add(turn_id)  # a signal added later is tripped as it comes
        for signal in signals:
            signal.cancel()

    def beat_once(self) -> None:
        """Call ``beat`` with the turns watched now, if any."""
        with self._lock:
            turn_ids = list(self._signals)
        if turn_ids and self.beat is not None:
            self.beat(turn_ids)

    def close(self) -> None:
        """Stop the threads once their current round is done (a worker's never are); the cancel
        thread's is at most ``fallback_seconds``."""
        self._closed.set()
        self._wake.set()
        with suppress(Exception):
            self.answer_sent()
        with self._sending:
            if self._connection is not None:
                self._connection.disconnect()

    def _listen(self) -> None:
        """Trip the turns named on ``CANCEL_CHANNEL``, blocked on the subscriber's socket;
        read every watched flag after each (re)subscription and each ``fallback_seconds``."""
        pubsub = None
        next_read = 0.0
        while not self._closed.is_set():
            try:
                if pubsub is None:
                    pubsub = self.client.pubsub()
                    pubsub.subscribe(CANCEL_CHANNEL)
                timeout = max(0.0, next_read - time.monotonic())
                message = pubsub.get_message(timeout=timeout)
                if message is not None and message["type"] == "message":
                    self._trip_turn(message["data"].decode())
                elif message is not None and message["type"] == "subscribe":
                    next_read = 0.0  # (re)subscribed: what was published before is read now
                if time.monotonic() >= next_read:
                    next_read = time.monotonic() + self.fallback_seconds
                    self.check_once()
            except Exception:  # a RedisError, or the pool's connection closed under the socket
                if self._closed.is_set():
                    break  # closed: its client may be too
                log.warning("the cancel watcher could not read Redis; retrying", exc_info=True)
                if pubsub is not None:
                    with suppress(Exception):
                        pubsub.close()
                pubsub = None
                self._closed.wait(min(self.fallback_seconds, 1.0))
        if pubsub is not None:
            with suppress(Exception):
                pubsub.close()

    def _send_forever(self) -> None:
        """Publish the held text ``text_seconds`` after the last send while any is held; sleep
        while none is, until ``text_held`` wakes the thread."""
        try:
            load_pipelined_scripts(self.client)
        except redis.RedisError:
            pass  # the first send's NoScriptError loads it
        self._loaded = True
        due = time.monotonic() + self.text_seconds  # a batch's time for the first text
        while not self._closed.is_set():
            self._idle = True  # before the check: text held after it wakes the thread
            if not self._text_pending():
                self._wake.wait()  # text_held, or close
                self._wake.clear()
                # The stream that held it is likely to send it with its next read, a batch
                # from now: waking sooner raced that read, and won it, for every batch after.
                due = time.monotonic() + 2 * self.text_seconds
                continue
            self._idle = False
            pause = max(self._last_send + self.text_seconds, due) - time.monotonic()
            if pause > 0:
                self._closed.wait(pause)  # text held meanwhile does not wake it
                continue  # sent meanwhile by a stream's thread, maybe
            if not self._claim_send():
                continue
            try:
                self.send_once()
            except redis.RedisError:
                log.warning("the text could not be published; retrying", exc_info=True)

    def _beat_forever(self) -> None:
        last_beat = time.monotonic()
        # Counted from the last beat's start: a beat that waited shortens the next pause.
        while not self._closed.wait(max(0.0, last_beat + self.beat_seconds - time.monotonic())):
            last_beat = time.monotonic()
            try:
                self.beat_once()
            except Exception:  # the beats must outlive a database hiccup
                log.warning("the heartbeat could not be written; retrying", exc_info=True)


def started(
    thread: threading.Thread | None, run: Callable[[], None], name: str
) -> threading.Thread:
    """Return ``thread`` if it is alive, else a new daemon thread running ``run``, started (a
    daemon: a dead process stops beating and publishing)."""
    if thread is not None and thread.is_alive():
        return thread
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread
