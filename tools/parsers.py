"""Parser processes: untrusted bytes are parsed in small, killable processes under OS limits.

A page or a file from the web can make a parser run for hours or take gigabytes (a regex that
backtracks, a PDF whose pages share one huge stream). In a worker's thread such a job holds the
GIL after its call gave up on it, and every other turn in the process waits. Here each job runs
in a child process that the kernel limits (a CPU-time timer, ``ITIMER_PROF``, armed for each
job, with ``RLIMIT_CPU`` behind it; ``RLIMIT_AS`` for memory), that the caller waits for
without holding the GIL (a pipe ``poll``), and that is killed and replaced the moment the
caller's signal trips (a cancel or the deadline).

A child is also a sandbox (``tools.sandbox``): no network, no secrets, no new processes, no
writes outside its own directory, not root. It sends back JSON that the parent checks
(``tools.parser_replies``), never a pickle, so code a parser bug runs there stays there.

Children start through ``forkserver``, never as a plain fork of the caller: a worker runs many
threads, and a forked child would inherit locks those threads held. Errors ``run`` raises::

    ToolError (tools.api)
    ├── ParseTimeout      the job used more CPU seconds than the limit ("took longer than")
    ├── ParseTooLarge     the job needed more memory than the limit ("is too large to read")
    └── ParserStopped     the child died for another reason (a crash in a C library)
    Cancelled            the caller's signal tripped; the child was killed
    IngestError, ToolError, PluginConfigError the job raised, raised again here (any other
                         exception comes back as a RuntimeError naming its type)
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import multiprocessing.connection
import os
import queue
import re
import shutil
import signal as signals
import socket
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from tools.api import Cancelled, Signal, ToolError
from tools.parser_process import cut_output, serve
from tools.parser_replies import BadReply, Reply, read_reply, reply_limit

T = TypeVar("T")
log = logging.getLogger("lookout.parsers")

_POLL_SECONDS = 0.5
_WORKDIR_PREFIX = "lookout-parser-"
# A private directory names its machine as well as its pid: pids are only this machine's (or
# this container's), so a /tmp shared between them must not let one remove another's.
_MACHINE = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:63]


class ParseTimeout(ToolError):
    """A job ran past its CPU-seconds limit and was stopped."""


class ParseTooLarge(ToolError):
    """A job needed more memory than its limit allows."""


class ParserStopped(ToolError):
    """A parser process died before answering (not through a limit Lookout set)."""


@dataclass(frozen=True)
class ParserLimits:
    """What bounds parsing: processes kept, CPU seconds and memory per job, characters out."""

    processes: int = 2
    cpu_seconds: int = 10
    memory_bytes: int = 1024 * 1024 * 1024
    max_chars: int = 2_000_000


class InlineParsers:
    """Runs jobs in the calling thread: inside a parser process, where limits already hold."""

    def __init__(self, max_chars: int = ParserLimits.max_chars) -> None:
        self.max_chars = max_chars

    def run(self, job: Callable[..., T], *args: Any, signal: Signal, what: str) -> T:
        """Return ``job(*args)`` with its text cut to ``max_chars``."""
        signal.raise_if_cancelled()
        return cut_output(job(*args), self.max_chars)


class ParserPool:
    """A few parser processes, started on first use and replaced when killed.

    ``preload`` names modules the forkserver imports once, so that a new child starts in
    milliseconds with lxml, readability or pypdf already loaded.
    """

    def __init__(self, limits: ParserLimits, preload: Iterable[str] = ()) -> None:
        self.limits = limits
        self.preload = sorted(set(preload))
        self._context = multiprocessing.get_context("forkserver")
        self._idle: queue.LifoQueue[_Child | None] = queue.LifoQueue()
        for _ in range(limits.processes):
            self._idle.put(None)
        self._children: set[_Child] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.peak_rss_kb = 0  # the largest peak resident memory a parser process reported
        self.sandbox_missing: set[str] = set()  # what the parser sandbox could not enforce
        _open_pools.add(self)
        _remove_stale_workdirs()

    def run(self, job: Callable[..., T], *args: Any, signal: Signal, what: str) -> T:
        """Return ``job(*args)`` computed in a parser process; see the module docstring."""
        child = self._acquire(signal)
        try:
            reply = child.ask(job, args, signal)
            self._note_missing(child.missing)
            if reply is not None:
                self.peak_rss_kb = max(self.peak_rss_kb, reply.peak_kb)
                if reply.leaving:
                    child.retire()
        finally:
            self._release(child)
        return self._answer(reply, child, signal, what)

    def warm(self) -> threading.Thread:
        """Start the pool's processes now, in the background (the thread returned), so that a
        first job waits less."""
        thread = threading.Thread(target=self._warm, name="parsers-warm", daemon=True)
        thread.start()
        return thread

    def _warm(self) -> None:
        # This thread's exception would reach the worker's stderr as a traceback, which Celery
        # logs a write (a caret) per line: a stop right after start is no news, anything else
        # is one sentence, and the first job starts the processes anyway.
        started = []
        try:
            for _ in range(self.limits.processes):
                started.append(self._acquire(Signal.after(60)))
        except Exception as exc:  # noqa: BLE001 - see above
            if not self._closed:
                log.warning(
                    "parser processes could not be started ahead of use (%s: %s); the first "
                    "page read starts them",
                    type(exc).__name__,
                    exc,
                )
        for child in started:
            self._release(child)

    def _note_missing(self, missing: tuple[str, ...]) -> None:
        # Said once per pool and sentence: a sandbox that is weaker than documented is news.
        for sentence in missing:
            if sentence not in self.sandbox_missing:
                self.sandbox_missing.add(sentence)
                log.warning("parser sandbox: %s", sentence)

    def pids(self) -> list[int]:
        """Return the process ids of the live parser processes (for tests and health)."""
        with self._lock:
            return [c.pid for c in self._children if c.alive()]

    def close(self) -> None:
        """Kill every parser process; later jobs fail."""
        with self._lock:
            self._closed = True
            children, self._children = list(self._children), set()
        for child in children:
            child.kill()
            child.remove_workdir()

    def _acquire(self, signal: Signal) -> _Child:
        while True:
            signal.raise_if_cancelled()
            try:
                child = self._idle.get(timeout=min(0.05, max(0.001, signal.remaining())))
            except queue.Empty:
                continue
            if child is not None and child.alive():
                return child
            try:
                return self._start()
            except BaseException:
                self._idle.put(None)
                raise

    def _start(self) -> _Child:
        with self._lock:
            if self._closed:
                raise ToolError("Lookout is shutting down; try again in a moment.")
        # "__main__" first: the forkserver imports the main script once, where each child
        # would otherwise run it again on start.
        self._context.set_forkserver_preload(["__main__", __name__, *self.preload])
        child = _Child(self._context, self.limits)
        with self._lock:
            self._children.add(child)
        return child

    def _release(self, child: _Child) -> None:
        if child.alive():
            self._idle.put(child)
            return
        child.reap()
        with self._lock:
            self._children.discard(child)
        self._idle.put(None)

    def _answer(self, reply: Reply | None, child: _Child, signal: Signal, what: str) -> Any:
        if reply is not None:
            if reply.kind == "ok":
                return reply.value
            if reply.kind == "memory":
                raise ParseTooLarge(self._too_large(what))
            if reply.kind == "bad":
                log.warning("parser process for %s sent a bad reply: %s", what[:200], reply.value)
                raise ParserStopped(f"Reading {what} failed: Lookout's reader stopped on it.")
            raise reply.value
        if signal.cancelled:
            raise Cancelled(signal.reason or "cancelled")
        code = child.exitcode()
        if code in (-signals.SIGPROF, -signals.SIGXCPU):
            seconds = self.limits.cpu_seconds
            unit = "second" if seconds == 1 else "seconds"
            raise ParseTimeout(f"Reading {what} took longer than {seconds} {unit}.")
        if code in (-signals.SIGKILL, -signals.SIGSEGV, -signals.SIGABRT, -signals.SIGBUS):
            # Out of address space, C code aborts or crashes; the OOM killer sends SIGKILL.
            log.warning("parser process for %s ended with signal %d", what[:200], -code)
            raise ParseTooLarge(self._too_large(what))
        log.warning("parser process for %s ended with exit code %s", what[:200], code)
        raise ParserStopped(f"Reading {what} failed: Lookout's reader stopped on it.")

    def _too_large(self, what: str) -> str:
        megabytes = self.limits.memory_bytes / (1024 * 1024)
        return f"{what} is too large to read: it needs more than {megabytes:g} MB of memory."


class _Child:
    """One parser process and the parent's end of its pipe."""

    def __init__(self, context: Any, limits: ParserLimits) -> None:
        self.workdir = tempfile.mkdtemp(prefix=f"{_WORKDIR_PREFIX}{os.getpid()}-on-{_MACHINE}-")
        parent_end, child_end = context.Pipe(duplex=True)
        self.process = context.Process(
            target=serve, args=(child_end, limits, self.workdir), name="lookout-parser", daemon=True
        )
        self.process.start()
        child_end.close()
        self.conn: multiprocessing.connection.Connection = parent_end
        self.pid: int = self.process.pid
        self.limit = reply_limit(limits.max_chars)
        self.missing: tuple[str, ...] = ()  # what its sandbox could not enforce
        self._ready = False
        self._killed = False

    def ask(self, job: Callable[..., Any], args: tuple[Any, ...], signal: Signal) -> Reply | None:
        """Send a job and return the checked reply, or None when the process died (or was
        killed); a reply that is not valid is of kind "bad" (and the process is killed)."""
        undo = signal.on_cancel(self.kill)
        try:
            # The request is a pickle: the child trusts its parent, never the other way round.
            self.conn.send((job, args))
            if not self._ready:
                ready = self._receive(None)
                if ready is None or ready.kind != "ready":
                    return ready
                self.missing, self._ready = ready.missing, True
            return self._receive(job)
        finally:
            undo()

    def _receive(self, job: Callable[..., Any] | None) -> Reply | None:
        try:
            while not self.conn.poll(_POLL_SECONDS):  # waits in select(): the GIL is free
                if not self.process.is_alive():
                    break
            data = self.conn.recv_bytes(self.limit)
        except EOFError:
            return None
        except OSError:
            if not self.process.is_alive():
                return None
            self.kill()  # the pipe no longer reads: the reply was longer than the limit
            return Reply("bad", f"a reply longer than {self.limit:,} bytes")
        try:
            reply = read_reply(data, job)
        except BadReply as exc:
            self.kill()
            return Reply("bad", str(exc))
        if (reply.kind == "ready") == self._ready:
            self.kill()
            return Reply("bad", f"a {reply.kind!r} reply out of turn")
        return reply

    def alive(self) -> bool:
        return not self._killed and self.process.is_alive()

    def retire(self) -> None:
        """Take no more jobs: the process leaves by itself after its answer."""
        self._killed = True

    def kill(self) -> None:
        """Stop the process at once (SIGKILL), from any thread."""
        self._killed = True
        try:
            os.kill(self.pid, signals.SIGKILL)
        except ProcessLookupError:
            pass

    def exitcode(self) -> int | None:
        self.process.join(timeout=2)
        return self.process.exitcode

    def reap(self) -> None:
        self.kill()
        self.process.join(timeout=2)
        self.conn.close()
        self.remove_workdir()

    def remove_workdir(self) -> None:
        """Remove the process's private directory and what the parser left in it."""
        shutil.rmtree(self.workdir, ignore_errors=True)


_open_pools: weakref.WeakSet[ParserPool] = weakref.WeakSet()


@atexit.register
def _close_open_pools() -> None:
    # A worker that exits takes its parser processes and their directories with it.
    for pool in list(_open_pools):
        pool.close()


def _remove_stale_workdirs() -> None:
    # The private directories of a process that was killed (no atexit) name its pid: once no
    # process has that pid on this machine, nothing will use them again.
    root = tempfile.gettempdir()
    for name in os.listdir(root):
        if not name.startswith(_WORKDIR_PREFIX):
            continue
        pid, _, rest = name.removeprefix(_WORKDIR_PREFIX).partition("-")
        if rest.startswith("on-") and not rest.startswith(f"on-{_MACHINE}-"):
            continue  # another machine's
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_shared: dict[tuple[int, ParserLimits, tuple[str, ...]], ParserPool] = {}
_shared_lock = threading.Lock()


def shared_pool(limits: ParserLimits, preload: Iterable[str] = ()) -> ParserPool:
    """Return this process's pool for ``limits`` (one per process and set of limits)."""
    key = (os.getpid(), limits, tuple(sorted(set(preload))))
    with _shared_lock:
        pool = _shared.get(key)
        if pool is None:
            pool = _shared[key] = ParserPool(limits, preload)
        return pool
