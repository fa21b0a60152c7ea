"""A plugin that registers a PDF ingester after reader has started."""

from marshmallow import Schema

from tools.api import Ingester, IngestResult, Plugin


class Empty(Schema):
    pass


def setup(ctx):
    ctx.ingesters.register(
        Ingester("pdfish", 10, lambda m: m == "application/pdf", lambda f: IngestResult("pdf text"))
    )


plugin = Plugin(id="pdfish", options_schema=Empty, setup=setup)
