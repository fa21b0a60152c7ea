"""A search plugin of a third party's engine, loaded through LOOKOUT_PLUGINS by the metrics
tests: its engine is always rate-limited, and it reports each failed search through the plugin
API, as any search plugin does."""

from __future__ import annotations

from marshmallow import Schema, fields

from tools.api import Plugin, PluginContext, Tool, ToolContext, ToolError, report_search_failure

ENGINE = "acme"


class Empty(Schema):
    pass


class Input(Schema):
    query = fields.String(required=True)


def setup(ctx: PluginContext) -> None:
    def acme_search(input: dict, tool: ToolContext) -> dict:
        report_search_failure(ENGINE, "rate-limited")
        raise ToolError("Acme's rate limit was reached. Try again in a minute.")

    ctx.tools.register(
        Tool("acme_search", "Search the web with Acme.", Input, acme_search, default_enabled=True)
    )


plugin = Plugin(id="third_party_search", options_schema=Empty, setup=setup)
