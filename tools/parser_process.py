"""A parser process's own side: enter the sandbox, then run each job under the limits and answer.

The parent's side, and the limits and errors, are in ``tools.parsers``.
"""

from __future__ import annotations

import ctypes
import dataclasses
import logging
import math
import multiprocessing.connection
import resource
import signal as signals
from typing import TYPE_CHECKING, TypeVar

from tools import sandbox
from tools.api import ToolError
from tools.parser_replies import write_error, write_memory, write_ok, write_ready

if TYPE_CHECKING:
    from tools.parsers import ParserLimits

T = TypeVar("T")

_PR_SET_NAME = 15
# A child whose peak memory passed this leaves after its job, so the next job starts small.
_RECYCLE_RSS_KB = 400 * 1024
_CUT_NOTE = "\n\n[Lookout stopped reading here: the text is longer than {n:,} characters.]"


def cut_output(result: T, max_chars: int) -> T:
    """Return ``result`` with a text longer than ``max_chars`` cut, saying so at the cut.

    A string is cut; so is each string field of a dataclass (``Extracted``, ``IngestResult``).
    """
    if isinstance(result, str):
        return _cut(result, max_chars)  # type: ignore[return-value]
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        changes = {
            f.name: _cut(value, max_chars)
            for f in dataclasses.fields(result)
            if isinstance(value := getattr(result, f.name), str) and len(value) > max_chars
        }
        return dataclasses.replace(result, **changes) if changes else result
    return result


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + _CUT_NOTE.format(n=max_chars)


def serve(conn: multiprocessing.connection.Connection, limits: ParserLimits, workdir: str) -> None:
    """A parser process's loop: enter the sandbox, say so; run each job received under the
    limits, answer, repeat."""
    _name_process(b"lookout-parser")
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signals.signal(signals.SIGINT, signals.SIG_IGN)  # Ctrl-C is for the parent, which kills us
    signals.signal(signals.SIGPROF, signals.SIG_DFL)  # the CPU timer's signal ends the process
    # A damaged file makes some parsers log a warning per lookup: here that is only lost time.
    logging.disable(logging.CRITICAL)
    conn.send_bytes(write_ready(sandbox.enter([conn.fileno()], workdir)))
    while True:
        try:
            job, args = conn.recv()
        except (EOFError, OSError):
            return
        _arm_cpu_limit(limits.cpu_seconds)
        try:
            kind, value = "ok", cut_output(job(*args), limits.max_chars)
        except MemoryError:
            kind, value = "memory", None
        except BaseException as exc:  # the parent raises it again  # noqa: BLE001
            kind, value = "error", exc
        signals.setitimer(signals.ITIMER_PROF, 0)
        # A fresh process for the next job gives the memory back; the parent is told first,
        # so that it never sends a job to a process on its way out.
        peak = _peak_rss_kb()
        leaving = kind == "memory" or peak > _RECYCLE_RSS_KB
        try:
            if kind == "ok":
                data = write_ok(value, leaving, peak)
            elif kind == "error":
                data = write_error(value, leaving, peak)
            else:
                data = write_memory(peak)
        except MemoryError:
            data, leaving = write_memory(peak), True
        except (TypeError, ValueError) as exc:
            error = ToolError(f"The parser's answer could not be sent back: {exc}")
            data = write_error(error, leaving, peak)
        try:
            conn.send_bytes(data)
        except MemoryError:
            conn.send_bytes(write_memory(peak))
            return
        if leaving:
            return


def _name_process(name: bytes) -> None:
    # So that ps and top show operators which processes are parsers (Linux; elsewhere a no-op).
    try:
        ctypes.CDLL(None).prctl(_PR_SET_NAME, name, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _arm_cpu_limit(seconds: int) -> None:
    # The job may use ``seconds`` of CPU time: ITIMER_PROF counts them exactly and sends
    # SIGPROF, whose default action ends the process. RLIMIT_CPU stands behind it, counted by
    # the kernel in whole seconds over the process's whole life: its soft limit goes ``seconds``
    # past the next whole second used so far, where the kernel sends SIGXCPU, which ends it too.
    signals.setitimer(signals.ITIMER_PROF, seconds)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime) + seconds
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _peak_rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
