"""A plugin whose setup has a bug."""

from marshmallow import Schema

from tools.api import Plugin


class Empty(Schema):
    pass


def setup(ctx):
    raise RuntimeError("boom")


plugin = Plugin(id="crashing", options_schema=Empty, setup=setup)
