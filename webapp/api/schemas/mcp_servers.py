"""MCP servers: the body admins send (headers write-only), how servers and their tools are shown."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates, validates_schema

from webapp.api.schemas.times import UtcTime

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
STATUSES = ["new", "ok", "down", "slow", "refused"]


class McpServerBody(Schema):
    """The body of adding or changing an MCP server: a URL or a command, not both."""

    name = fields.String(
        required=True,
        metadata={
            "title": "Name",
            "description": "Lower-case letters, digits and hyphens; its tools are called "
            "<name>_<tool>.",
        },
    )
    url = fields.Url(
        allow_none=True,
        load_default=None,
        schemes={"http", "https"},
        require_tld=False,
        metadata={"title": "URL", "description": "The server's streamable-HTTP endpoint."},
    )
    headers = fields.Dict(
        keys=fields.String(validate=validate.Length(min=1, max=200)),
        values=fields.String(validate=validate.Length(max=4000)),
        allow_none=True,
        load_default=None,
        metadata={
            "secret": True,
            "title": "Headers",
            "description": "Sent with every request (such as Authorization), stored encrypted "
            "and never shown again; omit them to keep the stored ones, {} removes them.",
        },
    )
    command = fields.List(
        fields.String(validate=validate.Length(min=1, max=1000)),
        load_default=list,
        validate=validate.Length(max=50),
        metadata={
            "title": "Command",
            "description": "A program and its arguments, run over stdio on the workers; only "
            "when MCP_STDIO_ALLOWED is on.",
        },
    )
    allowPrivate = fields.Boolean(
        load_default=False,
        metadata={
            "title": "Allow a private address",
            "description": "Connect even when the URL's host is a loopback or private address.",
        },
    )

    @validates("name")
    def plain_name(self, value: str, **_: Any) -> None:
        """A name becomes part of tool names: keep it plain and short."""
        if not NAME.match(value):
            raise ValidationError(
                "Use 1 to 40 lower-case letters, digits and hyphens, starting with a letter "
                "or digit."
            )

    @validates_schema
    def url_or_command(self, data: dict[str, Any], **_: Any) -> None:
        """Exactly one way to reach the server."""
        if bool(data.get("url")) == bool(data.get("command")):
            raise ValidationError(
                "Give either the server's URL or the command that runs it, not both.", "url"
            )


class McpToolSchema(Schema):
    """A tool a server listed, as the model calls it."""

    name = fields.String(metadata={"description": "The name the model calls it by."})
    tool = fields.String(metadata={"description": "Its name on the server."})
    description = fields.String()


class McpServerSchema(Schema):
    """An MCP server as admins see it: never its headers' values."""

    name = fields.String()
    source = fields.String(metadata={"description": "Its tool source's id: mcp:<name>."})
    url = fields.String(allow_none=True)
    command = fields.List(fields.String())
    headerNames = fields.List(fields.String())
    allowPrivate = fields.Boolean()
    status = fields.String(
        metadata={"description": "How its last listing went: " + ", ".join(STATUSES) + "."}
    )
    error = fields.String(allow_none=True)
    listedAt = UtcTime(allow_none=True)
    tools = fields.List(fields.Nested(McpToolSchema))


class McpServerListSchema(Schema):
    """The MCP servers, and whether servers run as a command are allowed."""

    servers = fields.List(fields.Nested(McpServerSchema))
    stdioAllowed = fields.Boolean()


class SourceToolSchema(Schema):
    """A tool a tool source offers when a message names it in ``generation.tools``."""

    name = fields.String()
    source = fields.String()
    description = fields.String()


class SourceToolListSchema(Schema):
    """The tool sources' tools a message may name."""

    tools = fields.List(fields.Nested(SourceToolSchema))
