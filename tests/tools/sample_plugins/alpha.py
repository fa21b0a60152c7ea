"""A plugin with one default-on tool and one switchable tool, and user settings."""

from marshmallow import Schema, fields

from tools.api import Plugin, Tool


class Empty(Schema):
    pass


class Settings(Schema):
    greeting = fields.String(load_default="hi")
    token = fields.String(metadata={"secret": True})


def setup(ctx):
    ctx.tools.register(Tool("shout", "Shout.", Empty, lambda i, c: "HI", default_enabled=True))
    ctx.tools.register(Tool("whisper", "Whisper.", Empty, lambda i, c: "hi", user_toggle=True))


plugin = Plugin(id="alpha", options_schema=Empty, setup=setup, user_settings_schema=Settings)
