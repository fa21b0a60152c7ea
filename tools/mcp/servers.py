"""Talking to one MCP server with the official SDK: list its tools, call one under a signal.

Each listing and each call opens its own session and closes it when done, so a server that
died since is noticed at once and nothing stays open between turns. The SDK is asynchronous;
these functions run it on an event loop of the calling thread (a tool call's own thread).
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tools.addresses import AddressPolicy, address_allowed
from tools.api import Cancelled, Signal, ToolError, ToolRefused
from tools.mcp.guard import GuardedBackend, make_http_client
from tools.mcp.limits import ANSWER_BYTES, LISTED_TOOLS, AnswerLimit
from tools.mcp.stdio import bounded_stdout

# How often a call looks at its signal: a cancel reaches the server within this.
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class ServerSpec:
    """How to reach an MCP server: a streamable-HTTP ``url`` with ``headers``, or a ``command``
    run over stdio. ``allow_private``: the admin allowed a private address for this server."""

    name: str
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    allow_private: bool = False

    def describe(self) -> str:
        """Return where the server is, for sentences (never its headers)."""
        return self.url or " ".join(self.command)


@dataclass(frozen=True)
class ListedTool:
    """A tool as its server lists it: name, description and input JSON Schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


def _policy(spec: ServerSpec, policy: AddressPolicy) -> AddressPolicy:
    return (lambda _address: True) if spec.allow_private else policy


@asynccontextmanager
async def _connect(
    spec: ServerSpec, backend: GuardedBackend, limit: AnswerLimit, read_seconds: float
) -> AsyncIterator[Client]:
    if spec.command:
        params = StdioServerParameters(command=spec.command[0], args=list(spec.command[1:]))
        with bounded_stdout(limit):
            async with Client(stdio_client(params), read_timeout_seconds=read_seconds) as client:
                yield client
        return
    if not spec.url:
        raise ToolError(f"The MCP server {spec.name} has neither a URL nor a command.")
    async with make_http_client(dict(spec.headers), backend, read_seconds, limit) as http:
        # The guard's transport bounds each event first, in the words of ``_failure``.
        transport = streamable_http_client(
            spec.url, http_client=http, max_sse_event_size=ANSWER_BYTES
        )
        async with Client(transport, read_timeout_seconds=read_seconds) as client:
            yield client


def _failure(
    spec: ServerSpec, exc: BaseException, backend: GuardedBackend, limit: AnswerLimit
) -> ToolError:
    """Return the sentence for a session that failed with ``exc``."""
    if limit.exceeded:
        return ToolError(
            f"The MCP server {spec.name} sent {limit.exceeded}, more than Lookout reads from "
            "a server, so Lookout stopped reading it. Ask it for less (other input), or answer "
            "without it; if this keeps happening, ask an admin to check the server."
        )
    if backend.refusal:
        return ToolRefused(
            f"Lookout did not connect to the MCP server {spec.name}: {backend.refusal}. An admin "
            "can allow private addresses for this server on the MCP servers page."
        )
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    return ToolError(
        f"The MCP server {spec.name} at {spec.describe()} could not be reached ({detail}). "
        "Try again later, or ask an admin to check the server."
    )


async def _run(spec: ServerSpec, policy: AddressPolicy, signal: Signal, work: Any) -> Any:
    """Run ``work(client)`` in a session, stopped when ``signal`` trips; raise ``Cancelled``
    then, and ``ToolError`` with a sentence when the server fails."""
    box: dict[str, Any] = {}
    backend = GuardedBackend(_policy(spec, policy))
    limit = AnswerLimit()
    remaining = signal.remaining()
    read_seconds = 300.0 if math.isinf(remaining) else max(0.1, remaining)

    async def session(scope: anyio.CancelScope) -> None:
        try:
            async with _connect(spec, backend, limit, read_seconds) as client:
                box["result"] = await work(client)
        except anyio.get_cancelled_exc_class():
            raise
        except ToolError as exc:
            box["error"] = exc
        except Exception as exc:  # noqa: BLE001 — any SDK or network failure becomes a sentence
            box["error"] = _failure(spec, exc, backend, limit)
        scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(session, group.cancel_scope)
        while not signal.cancelled:
            await anyio.sleep(POLL_SECONDS)
        group.cancel_scope.cancel()  # closes the session: the SDK cancels the request in flight
    if "error" in box:
        raise box["error"]
    if "result" not in box:
        raise Cancelled(signal.reason or "cancelled")
    return box["result"]


def list_server_tools(
    spec: ServerSpec, timeout_seconds: float, policy: AddressPolicy = address_allowed
) -> list[ListedTool]:
    """Return the tools the server lists now, the first ``LISTED_TOOLS`` of them (a server
    that lists more is asked for no further page); raise ``ToolError`` (a sentence) when it
    cannot be reached or does not answer within ``timeout_seconds``."""

    async def work(client: Client) -> list[ListedTool]:
        listed: list[ListedTool] = []
        cursor = None
        for _page in range(20):
            page = await client.list_tools(cursor=cursor)
            listed += [
                ListedTool(t.name, t.description or "", dict(t.input_schema or {}))
                for t in page.tools[: LISTED_TOOLS - len(listed)]
            ]
            cursor = page.next_cursor
            if cursor is None or len(listed) == LISTED_TOOLS:
                break
        return listed

    try:
        return _run_to_end(_run, spec, policy, Signal.after(timeout_seconds), work)
    except Cancelled as exc:
        raise ToolError(
            f"The MCP server {spec.name} did not list its tools within {timeout_seconds:g} "
            "seconds. It may be slow or down; try again later."
        ) from exc


def call_server_tool(
    spec: ServerSpec,
    name: str,
    arguments: dict[str, Any],
    signal: Signal,
    policy: AddressPolicy = address_allowed,
) -> Any:
    """Return the SDK's ``CallToolResult`` of one call; raise ``Cancelled`` when ``signal``
    trips (the request is cancelled and the session closed) and ``ToolError`` when the server
    cannot be reached."""

    async def work(client: Client) -> Any:
        return await client.call_tool(name, arguments)

    return _run_to_end(_run, spec, policy, signal, work)


def _run_to_end(func: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Return ``anyio.run(func, *args)``, in a thread of its own when the calling thread already
    runs an event loop (a caller with an asyncio loop of its own, where anyio.run refuses to
    start); a worker's tool thread runs none and calls it directly."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(func, *args)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = anyio.run(func, *args)
        except BaseException as exc:  # raised again in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="mcp-session")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
