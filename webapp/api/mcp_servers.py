"""MCP servers over the API: admins add, change, list again and remove them (headers
write-only); users list the tools they may name in ``generation.tools``."""

from __future__ import annotations

import logging
from typing import Any

import redis
from flask import Blueprint, current_app, jsonify

from core import broker, mcp_servers, plugin_host
from core.extensions import db, get_redis
from core.models import McpServer
from webapp import queue
from webapp.api.bodies import load_json
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.mcp_servers import (
    McpServerBody,
    McpServerListSchema,
    McpServerSchema,
    SourceToolListSchema,
)
from webapp.auth.guards import admin_required, api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_mcp_servers", __name__, url_prefix="/api")

# How long saving waits for a worker's listing (the listing gives up sooner).
LIST_WAIT_SECONDS = mcp_servers.LIST_SECONDS + 5
# Set while a stale listing is being refreshed; per queue, as apps sharing a Redis have their own.
REFRESHING_KEY = "lookout:mcp:refreshing:{queue}:{name}"
log = logging.getLogger("lookout.mcp")


def show(server: McpServer) -> dict[str, Any]:
    """Return a server as admins see it."""
    return {
        "name": server.name,
        "source": f"mcp:{server.name}",
        "url": server.url,
        "command": list(server.command or []),
        "headerNames": sorted(server.headers or {}),
        "allowPrivate": server.allow_private,
        "status": server.status,
        "error": server.error,
        "listedAt": server.listed_at,
        "tools": [
            {
                "name": f"{server.name}_{tool['name']}",
                "tool": tool["name"],
                "description": tool.get("description", ""),
            }
            for tool in server.tools or []
        ],
    }


def get_server(name: str) -> McpServer:
    """Return the stored server; 404 when there is none."""
    server = db.session.get(McpServer, name)
    if server is None:
        raise ApiError("There is no such MCP server. Reload the page.", 404)
    return server


def apply(server: McpServer, body: dict[str, Any]) -> None:
    """Copy the checked body onto the server; a command only while stdio servers are allowed."""
    if body["command"] and not mcp_servers.stdio_allowed():
        raise ApiError(
            "MCP servers run as a command are off. Give the server's URL, or set "
            "MCP_STDIO_ALLOWED=1 to let admins run commands on the workers.",
            400,
            {"command": ["Commands are off (MCP_STDIO_ALLOWED)."]},
        )
    server.url = body["url"] or None
    server.command = list(body["command"])
    server.allow_private = body["allowPrivate"]
    if body["headers"] is not None:
        server.headers = dict(body["headers"])


def list_and_show(server: McpServer) -> dict[str, Any]:
    """Have a worker list the server's tools, then return the server as it is stored; when no
    worker answers in time, the server is shown with the sentence saying so."""
    name = server.name
    try:
        queue.call(broker.LIST_MCP_TOOLS, name, timeout=LIST_WAIT_SECONDS)
    except queue.QueueError as error:
        db.session.rollback()
        server = get_server(name)
        shown = show(server)
        shown["error"] = f"{error} Its tools are listed once a worker runs."
        return shown
    db.session.rollback()  # read what the worker stored
    return show(get_server(name))


@bp.get("/admin/mcp-servers")
@admin_required
@operation(answers={200: McpServerListSchema})
def list_servers():
    """List the MCP servers with their status and tools; stale listings are listed again."""
    refresh_stale()
    servers = [show(server) for server in mcp_servers.find_servers()]
    answer = {"servers": servers, "stdioAllowed": mcp_servers.stdio_allowed()}
    return jsonify(McpServerListSchema().dump(answer))


@bp.post("/admin/mcp-servers")
@admin_required
@operation(body=McpServerBody, answers={201: McpServerSchema})
def add_server():
    """Add an MCP server and list its tools: 201 with its status (a server that is down is
    added, and says so)."""
    body = load_json(McpServerBody, "MCP server")
    if db.session.get(McpServer, body["name"]) is not None:
        raise ApiError("Another MCP server has that name.", 400, {"name": ["Already taken."]})
    server = McpServer(name=body["name"], headers={}, tools=[], status="new")
    apply(server, body)
    db.session.add(server)
    db.session.commit()
    return jsonify(McpServerSchema().dump(list_and_show(server))), 201


@bp.put("/admin/mcp-servers/<server_name>")
@admin_required
@operation(body=McpServerBody, answers={200: McpServerSchema})
def change_server(server_name: str):
    """Change how to reach an MCP server (its name stays) and list its tools again."""
    server = get_server(server_name)
    body = load_json(McpServerBody, "MCP server")
    if body["name"] != server_name:
        raise ApiError("An MCP server cannot be renamed; add it anew.", 400, {"name": ["Fixed."]})
    apply(server, body)
    db.session.commit()
    return jsonify(McpServerSchema().dump(list_and_show(server)))


@bp.post("/admin/mcp-servers/<server_name>/refresh")
@admin_required
@operation(answers={200: McpServerSchema})
def refresh_server(server_name: str):
    """List an MCP server's tools again now."""
    return jsonify(McpServerSchema().dump(list_and_show(get_server(server_name))))


@bp.delete("/admin/mcp-servers/<server_name>")
@admin_required
@operation(answers={204: NO_CONTENT})
def remove_server(server_name: str):
    """Remove an MCP server: its tools are no longer offered."""
    db.session.delete(get_server(server_name))
    db.session.commit()
    plugin_host.tell_hosts()
    return "", 204


@bp.get("/tool-sources")
@api_login_required
@operation(answers={200: SourceToolListSchema})
def list_source_tools():
    """List the tools of tool sources (MCP servers among them) that a message may name in
    ``generation.tools``: never offered otherwise."""
    refresh_stale()
    host = plugin_host.get_host()
    tools = [
        {"name": name, "source": source.id, "description": tool.description}
        for name, (source, tool) in sorted(host.source_tools().items())
    ]
    return jsonify(SourceToolListSchema().dump({"tools": tools}))


def refresh_stale() -> None:
    """Have a worker list again each server whose listing is stale, once per period."""
    period = current_app.config["MCP_REFRESH_SECONDS"]
    queue_name = current_app.config["CELERY_QUEUE"]
    for server in mcp_servers.find_servers():
        if not mcp_servers.is_stale(server):
            continue
        key = REFRESHING_KEY.format(queue=queue_name, name=server.name)
        try:
            if get_redis().set(key, 1, nx=True, ex=period):
                queue.enqueue(broker.LIST_MCP_TOOLS, server.name)
        except (redis.RedisError, queue.QueueError):
            log.warning("mcp listing of %s not sent: the queue is away", server.name)
