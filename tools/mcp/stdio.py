"""A stdio server's output held to the answer limits, its lines mended, without forking the SDK.

The SDK's ``stdio_client`` spawns the server and reads its stdout itself, joining chunks until
a newline: a line that never ends was held (and copied again with every chunk) until the
deadline, and a line with half a UTF-16 pair failed the call as a server that could not be
reached. It offers no hook for the stream, so the spawn it calls is wrapped once, and a
process spawned inside ``bounded_stdout(limit)`` hands the SDK a stdout that passes on whole
lines (``guard.BoundedLines``). Past a limit, the server is killed and that stdout ends: the
SDK then ends the session as a server that hung up, and the caller reads ``limit.exceeded``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from signal import SIGKILL, Signals
from typing import Any

import anyio
import mcp.client.stdio as sdk_stdio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

from tools.mcp.guard import BoundedLines
from tools.mcp.limits import AnswerLimit, AnswerTooLarge

_LIMIT: ContextVar[AnswerLimit | None] = ContextVar("mcp_stdio_limit", default=None)


class _BoundedStdout(ByteReceiveStream):
    """A server's stdout passed on a whole line at a time, held to ``limit``; past it, the
    server (``pid``, which leads its process group) is killed."""

    def __init__(self, stream: ByteReceiveStream, limit: AnswerLimit, pid: int) -> None:
        self.stream = stream
        self.lines = BoundedLines(limit, events=False)
        self.pid = pid
        self.ended = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        """Return the next complete lines; raise ``anyio.EndOfStream`` at the end, and once a
        limit was passed (a server blocked writing would hold the SDK's shutdown two seconds
        until its SIGTERM: it is killed at once, with its group)."""
        while not self.ended:
            try:
                if lines := self.lines.feed(await self.stream.receive()):
                    return lines
            except anyio.EndOfStream:
                self.ended = True
                if rest := self.lines.rest():
                    return rest
            except AnswerTooLarge:
                self.ended = True
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, SIGKILL)
        raise anyio.EndOfStream

    async def aclose(self) -> None:
        await self.stream.aclose()


class _BoundedProcess(Process):
    """The SDK's process, its stdout bounded; everything else is the process's own."""

    def __init__(self, process: Process, limit: AnswerLimit) -> None:
        self.process = process
        assert process.stdout is not None, "the SDK spawns its servers with pipes"
        self._stdout = _BoundedStdout(process.stdout, limit, process.pid)

    def __getattr__(self, name: str) -> Any:  # what the SDK reads of its own process
        return getattr(self.process, name)

    async def aclose(self) -> None:
        await self.process.aclose()

    async def wait(self) -> int:
        return await self.process.wait()

    def terminate(self) -> None:
        self.process.terminate()

    def kill(self) -> None:
        self.process.kill()

    def send_signal(self, signal: Signals) -> None:
        self.process.send_signal(signal)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        return self.process.stdin

    @property
    def stdout(self) -> ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self.process.stderr


_spawn = sdk_stdio._create_platform_compatible_process  # noqa: SLF001


async def _spawn_bounded(*args: Any, **kwargs: Any) -> Any:
    process = await _spawn(*args, **kwargs)
    limit = _LIMIT.get()
    return process if limit is None else _BoundedProcess(process, limit)


sdk_stdio._create_platform_compatible_process = _spawn_bounded  # noqa: SLF001


@contextmanager
def bounded_stdout(limit: AnswerLimit) -> Iterator[None]:
    """Hold the stdout of each server the SDK spawns in this context to ``limit``."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)
