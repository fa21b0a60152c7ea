"""A plugin that registers an ingester, and a tool that uses whatever ingester is installed."""

from marshmallow import Schema

from tools.api import Ingester, IngestInput, IngestResult, Plugin, Tool


class Empty(Schema):
    pass


def setup(ctx):
    ingesters = ctx.ingesters
    ctx.ingesters.register(
        Ingester("csv", 5, lambda mime: mime == "text/csv", lambda f: IngestResult(f.data.decode()))
    )

    def read(input, tool):
        result = ingesters.ingest(IngestInput(b"%PDF-", "application/pdf"))
        return None if result is None else result.text

    ctx.tools.register(Tool("read_pdf", "Read.", Empty, read))


plugin = Plugin(id="reader", options_schema=Empty, setup=setup)
