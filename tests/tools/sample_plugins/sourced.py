"""A plugin that registers a tool source, the seam for MCP servers."""

from marshmallow import Schema

from tools.api import Plugin, Tool


class Empty(Schema):
    pass


class Source:
    id = "remote"

    def list_tools(self):
        return [Tool("remote_lookup", "Look up remotely.", Empty, lambda i, c: "remote text")]


def setup(ctx):
    ctx.tool_sources.register(Source())


plugin = Plugin(id="sourced", options_schema=Empty, setup=setup)
