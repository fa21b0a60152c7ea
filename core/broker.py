"""What the web side and the workers agree on about Celery: task names, client settings, and
the error of a queue that cannot be reached.

The web side sends tasks by these names through webapp/queue.py without importing `workers`;
the workers register their tasks under the same names (tests/workers/test_health.py checks
that every name here is registered). Both sides' Celery apps start from `client_settings`,
which sends a `redis://` broker through `RedisTransport`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from kombu.transport import redis as kombu_redis


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


class RedisChannel(kombu_redis.Channel):
    """kombu's Redis channel, keeping one `redis.Redis` client over its connection pool for the
    commands it sends outside its poll (a publish's `LPUSH`, a queue's size) where kombu made a
    new one for each: 0.13 ms of CPU a publish. A client over a pool holds no connection of its
    own and is safe across threads; a new pool (after a reconnect) gets a new client."""

    _kept: tuple[Any, Any] | None = None

    @contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        """Yield ``client`` when given, else the channel's kept client."""
        if client:
            yield client
            return
        pool, kept = self.pool, self._kept
        if kept is None or kept[0] is not pool:
            kept = self._kept = (pool, self._create_client())
        yield kept[1]


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport with `RedisChannel`."""

    Channel = RedisChannel


TRANSPORT = f"{__name__}:RedisTransport"


def client_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the Celery settings both sides share (broker, results, queue, JSON) from config."""
    url = config["REDIS_URL"]
    # Only a plain `redis://` URL: kombu reads TLS (`rediss://`) and sockets from the scheme.
    transport = {"broker_transport": TRANSPORT} if urlsplit(url).scheme == "redis" else {}
    return {
        "broker_url": url,
        **transport,
        "result_backend": config["REDIS_URL"],
        "task_default_queue": config["CELERY_QUEUE"],
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
    }
