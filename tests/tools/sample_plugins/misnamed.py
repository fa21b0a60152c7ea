"""A plugin whose id is not its module's name."""

from marshmallow import Schema

from tools.api import Plugin


class Empty(Schema):
    pass


plugin = Plugin(id="something_else", options_schema=Empty, setup=lambda ctx: None)
