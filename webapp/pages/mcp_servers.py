"""The admins' MCP servers page: a server-rendered shell over /api/admin/mcp-servers.

Its script (static/admin_mcp_servers.js) lists the servers with their status and tools, adds
one, lists one's tools again and removes one; headers are write-only, so the page never holds one.
"""

from __future__ import annotations

from flask import Blueprint, current_app, render_template, url_for

from webapp.auth.guards import admin_required

bp = Blueprint("admin_mcp_servers", __name__, url_prefix="/admin/mcp-servers")


@bp.get("", endpoint="index")
@admin_required
def show_mcp_servers():
    """Show every MCP server with its status and tools (admins only)."""
    return render_template(
        "admin/mcp_servers.html",
        api_url=url_for("api_mcp_servers.list_servers"),
        stdio_allowed=current_app.config["MCP_STDIO_ALLOWED"],
    )
