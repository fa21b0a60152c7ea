"""An MCP client's tool call, sent to the workers and awaited under a deadline; a client
that goes away cancels it. A user's programs have at most ``QUOTA_MCP_CALLS`` calls running
at once: each holds a web thread and a worker's, so one program cannot take the server's.

The call's id is watched by the worker like a turn's (``workers.watch``): raising its cancel
flag stops the tool, as cancelling a turn stops its tool calls.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from core import broker
from core.extensions import get_redis
from core.quotas import QuotaExceeded, end_mcp_call, start_mcp_call
from core.turn.state import raise_cancel
from tools.api import Tool
from webapp import queue

# Beyond the tool's own deadline: a worker to take the call, and the tool's grace to stop.
QUEUE_SLACK_SECONDS = 15
POLL_SECONDS = 0.2
CANCEL_TTL_SECONDS = 600


def make_call_id() -> str:
    """Return a new call id, which names no turn."""
    return f"mcp-{uuid.uuid4().hex}"


def request_cancel(call_id: str) -> None:
    """Raise the call's cancel flag and publish it: the worker watching the call stops it."""
    pipe = get_redis().pipeline(transaction=False)
    raise_cancel(pipe, call_id, CANCEL_TTL_SECONDS)
    pipe.execute()


def timed_out(tool: Tool, seconds: float) -> dict[str, Any]:
    """Return the result of a call no worker answered in time."""
    return {
        "outcome": "timeout",
        "error": (
            f"No worker answered {tool.name} within {seconds:g} seconds, so the call was "
            "stopped. Try again; if it keeps happening, an administrator should check that "
            "Lookout's workers run."
        ),
        "untrusted": tool.untrusted,
    }


def run_tool(user_id: str, tool: Tool, arguments: Any) -> Iterator[dict[str, Any] | None]:
    """Send the call to the workers and yield None while it runs, then its result once.

    Stopping the iteration early (the client went away) cancels the call.
    """
    call_id = make_call_id()
    seconds = tool.timeout_seconds + QUEUE_SLACK_SECONDS
    try:
        start_mcp_call(user_id, call_id, seconds)
    except QuotaExceeded as exceeded:
        yield {"outcome": "error", "error": exceeded.message, "untrusted": False}
        return
    finished = False
    try:
        task_id = queue.enqueue(
            broker.RUN_USER_TOOL, user_id, tool.name, arguments, call_id, expires=seconds
        )
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ended, result = queue.find_result(task_id)
            if ended:
                finished = True
                yield result
                return
            yield None
            time.sleep(POLL_SECONDS)
        finished = True
        request_cancel(call_id)
        yield timed_out(tool, seconds)
    finally:
        if not finished:
            request_cancel(call_id)
        end_mcp_call(user_id, call_id)
