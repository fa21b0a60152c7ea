"""The user-tool task: run one of Lookout's own tools for a user outside a chat turn (an MCP
client's call), with the user's settings, switches, quotas and usage, under its deadline."""

from __future__ import annotations

import logging
import time
from typing import Any

from core import broker, metrics
from core.extensions import db, get_redis
from core.mcp_tools import NOT_OFFERED, find_offered
from core.models import User
from core.models.usage import add_usage
from core.plugin_host import get_host
from core.tool_names import tool_label
from core.turn.states import FAILED_OUTCOMES
from tools.api import Signal, ToolError
from workers.celery_app import celery
from workers.context import make_user_tool_context
from workers.runtime import get_watcher
from workers.toolcalls import Outcome, run_in_context

log = logging.getLogger("lookout.tools")


@celery.task(name=broker.RUN_USER_TOOL)
def run_user_tool(user_id: str, name: str, input: Any, call_id: str) -> dict[str, Any]:
    """Run the tool ``name`` for the user and return its result: outcome, output or error,
    whether the output is untrusted, and the sources it cited. The call is counted in the
    user's usage (a failed one as a tool error) and logged like a turn's."""
    started = time.monotonic()
    user = db.session.get(User, user_id)
    roles = list(user.roles or []) if user is not None and not user.disabled else []
    tool = find_offered(user_id, roles, name) if roles else None
    citations: list[dict[str, Any]] = []
    if tool is None:
        result = Outcome("error", error=NOT_OFFERED.format(name=name))
    else:
        result, citations = run_offered(tool, input, user_id, roles, call_id)
    failed = [("toolErrors", tool_label(name), 1)] if result.outcome in FAILED_OUTCOMES else []
    add_usage(user_id, [*result.spent, *failed])
    db.session.commit()
    seconds = time.monotonic() - started
    label = tool_label(name)
    metrics.tool_call(label, result.outcome, seconds, result.output)
    duration_ms = round(seconds * 1000)
    log.info(
        "tool_call mcp=%s tool=%s duration_ms=%d outcome=%s",
        call_id,
        label,
        duration_ms,
        result.outcome,
        extra={
            "mcp": call_id,
            "tool": label,
            "duration_ms": duration_ms,
            "outcome": result.outcome,
        },
    )
    return {
        "outcome": result.outcome,
        "output": result.output if result.outcome == "ok" else None,
        "error": result.error,
        "untrusted": True if tool is None else tool.untrusted,
        "citations": citations,
    }


def run_offered(
    tool, input: Any, user_id: str, roles: list[str], call_id: str
) -> tuple[Outcome, list[dict[str, Any]]]:
    """Validate the input and run the tool under its deadline, stopped when the MCP client
    goes away; return the outcome and the sources it cited."""
    try:
        valid = tool.validate_input(input)
    except ToolError as exc:
        return Outcome("error", error=exc.message), []
    signal = Signal.after(tool.timeout_seconds)
    with get_watcher().watching(call_id, signal):
        ctx, collected = make_user_tool_context(
            user_id, roles, get_host().owner(tool.name), signal, get_redis()
        )
        db.session.commit()  # no connection held while the tool runs
        result = run_in_context(tool, valid, ctx, signal)
    cited = [{"url": c.url, "title": c.title} for c in collected.citations]
    return result, cited if result.outcome == "ok" else []
