"""Which of Lookout's own tools ``/mcp`` offers a user, and what its clients read of a call.

The web side lists them; a worker finds the one a call names again with the same function
(``find_offered``), so a switch a user turned off since the listing is honoured at call time.
"""

from __future__ import annotations

from typing import Any

from core.plugin_host import enabled_tools, get_host
from tools.api import Tool
from tools.untrusted import serialise, wrap

# Lookout's own guarded web tools, the only ones an MCP client may call.
EXPOSED = ("web_search", "web_fetch")
NOT_OFFERED = (
    "The tool {name} is not offered to you. Ask for tools/list to see the tools you can "
    "use; an admin installs web_search and web_fetch, and you switch them on under Settings."
)


def offered_tools(user_id: str, roles: list[str]) -> list[Tool]:
    """Return the exposed tools enabled for the user (their switches) that their roles give."""
    host = get_host()
    return [
        tool
        for tool in enabled_tools(host, user_id)
        if tool.name in EXPOSED and (tool.audience is None or tool.audience.includes(roles))
    ]


def find_offered(user_id: str, roles: list[str], name: str) -> Tool | None:
    """Return the offered tool called ``name``, or None when the user is not offered it."""
    return next((t for t in offered_tools(user_id, roles) if t.name == name), None)


def describe_tool(tool: Tool) -> dict[str, Any]:
    """Return a tool as MCP's tools/list names it: name, description and input schema."""
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.json_schema()}


def result_text(result: dict[str, Any]) -> str:
    """Return what a call's result says, as the model reads it in a turn: its output or its
    error, inside the untrusted envelope when the tool's output is untrusted."""
    if result.get("error") is not None:
        text = f"Error: {result['error']}"
    else:
        text = serialise(result.get("output"))
    return wrap(text) if result.get("untrusted", True) else text
