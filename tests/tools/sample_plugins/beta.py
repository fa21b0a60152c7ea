"""A plugin that tries to take a tool name alpha already registered."""

from marshmallow import Schema

from tools.api import Plugin, Tool


class Empty(Schema):
    pass


def setup(ctx):
    ctx.tools.register(Tool("shout", "Shout too.", Empty, lambda i, c: "HEY"))


plugin = Plugin(id="beta", options_schema=Empty, setup=setup)
