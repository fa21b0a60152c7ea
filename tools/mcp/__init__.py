"""MCP servers as tool sources: Lookout lists their tools and calls them like any tool.

``servers`` talks to one server with the official ``mcp`` SDK (streamable HTTP through
``guard``'s address policy, or a command over stdio); ``source`` turns a server's listing into
the tool source ``mcp:<server>``. What a server returns is always untrusted, and bounded in
size by ``limits`` (counted in ``guard``'s transport and, for stdio, ``stdio``'s stdout).

Errors (from ``tools.api``)::

    ToolError            the server could not be reached, timed out listing, sent more than
                         ``limits`` allows (an answer, a session), or its tool failed
    └── ToolRefused      the server's address is private and the admin did not allow it
    Cancelled            the call's turn was cancelled or its deadline passed
"""

from tools.mcp.servers import ListedTool, ServerSpec, call_server_tool, list_server_tools
from tools.mcp.source import MCPTool, MCPToolSource, tool_name

__all__ = [
    "ListedTool",
    "MCPTool",
    "MCPToolSource",
    "ServerSpec",
    "call_server_tool",
    "list_server_tools",
    "tool_name",
]
