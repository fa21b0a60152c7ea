"""A plugin with a required option, like web_search's engine."""

from marshmallow import Schema, fields

from tools.api import Plugin, Tool


class Options(Schema):
    apiKey = fields.String(required=True, metadata={"secret": True})
    engine = fields.String(required=True)


class Empty(Schema):
    pass


def setup(ctx):
    ctx.tools.register(Tool("keyed_search", "Search.", Empty, lambda i, c: ctx.options["engine"]))


plugin = Plugin(id="keyed", options_schema=Options, setup=setup)
