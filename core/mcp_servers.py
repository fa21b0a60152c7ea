"""The MCP servers an admin added: their tool sources for the plugin host, and their listings.

A server's tools are listed by a worker (``broker.LIST_MCP_TOOLS``: a listing may run a
command, and the web side runs nothing of the outside's), stored with the server and offered
from there: never fetched per turn. A listing older than ``MCP_REFRESH_SECONDS`` is listed
again when someone looks (the composer's tools menu, the admin page: the web side's
``webapp.api.mcp_servers.refresh_stale``), once per period. A
server that is down or slow keeps its last tools, and says so on the admin page.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import redis
from flask import current_app

from core import plugin_host
from core.extensions import db
from core.models import McpServer
from core.models.base import aware, utcnow
from tools.addresses import AddressPolicy, address_allowed
from tools.api import ToolError, ToolRefused
from tools.mcp import ListedTool, MCPToolSource, ServerSpec, list_server_tools

# The longest a listing may take before the server is shown as slow.
LIST_SECONDS = 15.0
log = logging.getLogger("lookout.mcp")


def find_servers() -> list[McpServer]:
    """Return every stored MCP server, by name."""
    return list(db.session.scalars(db.select(McpServer).order_by(McpServer.name)))


def stdio_allowed() -> bool:
    """Whether servers run as a command may be added and used (``MCP_STDIO_ALLOWED``)."""
    return bool(current_app.config["MCP_STDIO_ALLOWED"])


def address_policy() -> AddressPolicy:
    """Return the address policy MCP servers' connections follow: the network guard's, off
    when ``ALLOW_PRIVATE_NETWORKS`` is (a server may also be allowed private addresses)."""
    if current_app.config["ALLOW_PRIVATE_NETWORKS"]:
        return lambda _address: True
    return address_allowed


def server_spec(server: McpServer) -> ServerSpec:
    """Return how to reach a stored server."""
    return ServerSpec(
        name=server.name,
        url=server.url,
        headers=dict(server.headers or {}),
        command=tuple(server.command or ()),
        allow_private=server.allow_private,
    )


def make_sources() -> list[MCPToolSource]:
    """Return a tool source per stored server with its stored tools; servers run as a command
    are left out while ``MCP_STDIO_ALLOWED`` is off."""
    config = current_app.config
    sources = []
    for server in find_servers():
        if server.command and not stdio_allowed():
            continue
        listing = [
            ListedTool(t["name"], t.get("description", ""), t.get("inputSchema") or {})
            for t in server.tools or []
        ]
        sources.append(
            MCPToolSource(
                server_spec(server),
                listing,
                timeout_seconds=config["MCP_CALL_SECONDS"],
                policy=address_policy(),
            )
        )
    return sources


def list_tools_now(server: McpServer) -> None:
    """List the server's tools and store them with how it went ("ok", "refused", "slow",
    "down" and the sentence); tell every process to rebuild its plugin host. Runs on a worker."""
    try:
        listed = list_server_tools(server_spec(server), LIST_SECONDS, address_policy())
    except ToolRefused as error:
        server.status, server.error = "refused", error.message
    except ToolError as error:
        slow = "did not list its tools within" in error.message
        server.status, server.error = ("slow" if slow else "down"), error.message
    else:
        server.tools = [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in listed
        ]
        server.status, server.error = "ok", None
    server.listed_at = utcnow()
    db.session.commit()
    count = len(server.tools or [])
    log.info("mcp listing: server=%s status=%s tools=%d", server.name, server.status, count)
    try:
        plugin_host.tell_hosts()
    except redis.RedisError:
        pass  # each process rebuilds when Redis is back and the version moves


def is_stale(server: McpServer) -> bool:
    """Whether the server's listing is older than ``MCP_REFRESH_SECONDS`` (or missing)."""
    if server.listed_at is None:
        return True
    age = utcnow() - aware(server.listed_at)
    return age > timedelta(seconds=current_app.config["MCP_REFRESH_SECONDS"])
