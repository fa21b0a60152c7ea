"""Tools for the turn benchmarks: one that does nothing, and one that downloads until stopped.

Loaded with ``LOOKOUT_PLUGINS=bench.bench_plugins`` (and ``ALLOW_PRIVATE_NETWORKS=1``, so that
``download`` may read from a loopback server).
"""

from __future__ import annotations

from typing import Any

import requests
from marshmallow import Schema, fields

from tools.api import Plugin, PluginContext, Tool, ToolContext, ToolError
from tools.net import interrupt

READ_TIMEOUT_SECONDS = 30.0


class NoInput(Schema):
    """The input of ``noop``: nothing."""


class UrlInput(Schema):
    """The input of ``download``: the address to read."""

    url = fields.String(required=True)


def noop(input: dict[str, Any], tool: ToolContext) -> str:
    """Return at once: the cheapest tool call there is."""
    return "ok"


def download(input: dict[str, Any], tool: ToolContext) -> dict[str, int]:
    """Read ``url`` to its end, or until the turn is cancelled; return the bytes read."""
    signal = tool.signal
    timeout = min(READ_TIMEOUT_SECONDS, max(0.1, signal.remaining()))
    try:
        response = tool.fetch.get(input["url"], stream=True, timeout=timeout)
    except requests.RequestException as exc:
        signal.raise_if_cancelled()
        raise ToolError(f"The download failed: {exc}") from None
    undo = signal.on_cancel(lambda: abort(response))
    size = 0
    try:
        for chunk in response.iter_content(64 * 1024):
            signal.raise_if_cancelled()
            size += len(chunk)
    except (requests.RequestException, OSError, ValueError, AttributeError):
        signal.raise_if_cancelled()  # a read broken by the cancel reports the cancel
        raise ToolError("The download stopped halfway.") from None
    finally:
        undo()
        response.close()
    signal.raise_if_cancelled()
    return {"bytes": size}


def abort(response: requests.Response) -> None:
    """Wake the download's blocked read, then close the response."""
    interrupt(response)
    response.close()


def setup(ctx: PluginContext) -> None:
    """Register the two tools."""
    ctx.tools.register(Tool("noop", "Do nothing.", NoInput, noop, default_enabled=True))
    ctx.tools.register(Tool("download", "Download a URL.", UrlInput, download, timeout_seconds=60))


plugin = Plugin(id="bench_plugins", options_schema=NoInput, setup=setup)
