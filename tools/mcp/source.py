"""An MCP server as a tool source (``mcp:<server>``): its listed tools, offered when named.

The source holds the listing it was given (stored, refreshed by the host's owner, never
fetched per turn) and calls the server only when the model calls one of its tools. A tool's
name is the server's name and the tool's, joined by an underscore (``time_get_current_time``),
so two servers' tools never collide with each other or with a plugin's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import marshmallow

from tools.addresses import AddressPolicy, address_allowed
from tools.api import Tool, ToolContext, ToolError
from tools.mcp.servers import ListedTool, ServerSpec, call_server_tool

# What the model may call a tool (OpenAI's function names).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_OUTPUT_CHARS = 100_000


class AnyInput(marshmallow.Schema):
    """The input of an MCP tool: any JSON object; its server checks it against its schema."""

    class Meta:
        unknown = marshmallow.INCLUDE


class MCPTool(Tool):
    """A tool an MCP server listed: offered with the server's JSON Schema, always untrusted."""

    server_schema: dict[str, Any]

    def json_schema(self) -> dict[str, Any]:
        """Return the input JSON Schema the server listed."""
        return self.server_schema


def tool_name(server: str, tool: str) -> str:
    """Return the name the model calls a server's tool by."""
    return f"{server}_{tool}"


class MCPToolSource:
    """The tool source of one MCP server: ``id`` is ``mcp:<server>``."""

    def __init__(
        self,
        spec: ServerSpec,
        listing: Sequence[ListedTool],
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        output_chars: int = DEFAULT_OUTPUT_CHARS,
        policy: AddressPolicy = address_allowed,
    ) -> None:
        self.id = f"mcp:{spec.name}"
        self.spec = spec
        self.timeout_seconds = timeout_seconds
        self.output_chars = output_chars
        self.policy = policy
        self._tools = [self._make_tool(listed) for listed in listing]

    def list_tools(self) -> list[Tool]:
        """Return the tools of the stored listing whose names a model can call."""
        return [tool for tool in self._tools if TOOL_NAME.match(tool.name)]

    def _make_tool(self, listed: ListedTool) -> MCPTool:
        def execute(input: dict[str, Any], ctx: ToolContext) -> Any:
            return self.call(listed.name, input, ctx)

        tool = MCPTool(
            name=tool_name(self.spec.name, listed.name),
            description=listed.description or f"The tool {listed.name} of {self.spec.name}.",
            input_schema=AnyInput,
            execute=execute,
            untrusted=True,
            timeout_seconds=self.timeout_seconds,
        )
        schema = listed.input_schema or {"type": "object", "properties": {}}
        tool.server_schema = schema
        return tool

    def call(self, name: str, input: dict[str, Any], ctx: ToolContext) -> Any:
        """Return what the server's tool ``name`` answered, cut to ``output_chars``; raise
        ``ToolError`` with its words when it reports an error, ``Cancelled`` when stopped."""
        result = call_server_tool(self.spec, name, dict(input), ctx.signal, self.policy)
        text = "\n\n".join(describe_block(block) for block in result.content)
        if result.is_error:
            said = text.strip()[:500] or "no reason given"
            raise ToolError(
                f"The tool {name} of the MCP server {self.spec.name} failed: {said}. "
                "Try other input, or answer without it."
            )
        if result.structured_content is not None and len(text) <= self.output_chars:
            return {"text": text, "structured": result.structured_content}
        if len(text) > self.output_chars:
            cut = len(text) - self.output_chars
            return {"text": text[: self.output_chars], "cut": f"{cut} more characters left out"}
        return {"text": text}


def describe_block(block: Any) -> str:
    """Return a content block as text: its text, or a line naming what it is."""
    kind = getattr(block, "type", "content")
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        resource = block.resource
        return str(getattr(resource, "text", None) or f"[a resource at {resource.uri}]")
    if kind == "resource_link":
        return f"[a link to {block.uri}]"
    mime = getattr(block, "mime_type", None) or getattr(block, "mimeType", None) or ""
    return f"[{kind} content{', ' + mime if mime else ''}, not shown]"
