"""What the web side and the workers agree on about Celery: task names, client settings, and
the error of a queue that cannot be reached.

The web side sends tasks by these names through webapp/queue.py without importing `workers`;
the workers register their tasks under the same names (tests/workers/test_health.py checks
that every name here is registered). Both sides' Celery apps start from `client_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class QueueError(RuntimeError):
    """Work could not be sent, or its answer did not come back in time."""


PING = "lookout.ping"
RUN_TURN_STEP = "lookout.run_turn_step"
RUN_TOOL_CALL = "lookout.run_tool_call"
PROBE_PROVIDER = "lookout.probe_provider"
LIST_MCP_TOOLS = "lookout.list_mcp_tools"
RUN_USER_TOOL = "lookout.run_user_tool"
PROBE_PROVIDER_SETTINGS = "lookout.probe_provider_settings"
TRY_PLUGIN_TOOL = "lookout.try_plugin_tool"

TASK_NAMES = (
    PING,
    RUN_TURN_STEP,
    RUN_TOOL_CALL,
    PROBE_PROVIDER,
    LIST_MCP_TOOLS,
    RUN_USER_TOOL,
    PROBE_PROVIDER_SETTINGS,
    TRY_PLUGIN_TOOL,
)


def client_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Celery settings both sides share (broker, results, queue, JSON) from config."""
    return {
        "broker_url": config["REDIS_URL"],
        "result_backend": config["REDIS_URL"],
        "task_default_queue": config["CELERY_QUEUE"],
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
    }
