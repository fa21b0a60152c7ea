"""The task that lists an MCP server's tools and stores them (``broker.LIST_MCP_TOOLS``).

It runs on a worker, as a tool call does: a listing may start the server's command, and the
web side runs nothing of the outside's. The admin API awaits it when a server is saved.
"""

from __future__ import annotations

from typing import Any

from core import broker
from core.extensions import db
from core.mcp_servers import list_tools_now
from core.models import McpServer
from workers.celery_app import celery


@celery.task(name=broker.LIST_MCP_TOOLS)
def list_mcp_tools(name: str) -> dict[str, Any]:
    """List the stored server ``name``'s tools now; return its status and error."""
    server = db.session.get(McpServer, name)
    if server is None:
        return {"status": "gone", "error": "There is no such MCP server. Reload the page."}
    list_tools_now(server)
    return {"status": server.status, "error": server.error}
