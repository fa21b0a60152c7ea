"""The web_fetch plugin: guarded, domain-limited reading of pages and documents.

Listing the plugin enables its one tool, ``web_fetch``; the options (``WebFetchOptions``) limit
domains, sizes and time. Files that are not pages go to the ingesters registered by any plugin
(such as ``tools.pdf``), kept from the plugin context at setup; HTML is extracted through the
context's ``parsers``, in a parser process under the host's limits.
"""

from __future__ import annotations

from tools.api import Plugin, PluginContext
from tools.parsers import InlineParsers
from tools.web_fetch.options import WebFetchOptions
from tools.web_fetch.tool import make_tool


def setup(ctx: PluginContext) -> None:
    """Register the web_fetch tool, configured by the plugin's validated options."""
    user_agent = f"{ctx.app_name} (+{ctx.public_url})"
    parsers = ctx.parsers or InlineParsers()
    ctx.tools.register(make_tool(ctx.options, ctx.ingesters, parsers, user_agent, ctx.logger))


plugin = Plugin(id="web_fetch", options_schema=WebFetchOptions, setup=setup)

__all__ = ["WebFetchOptions", "plugin", "setup"]
