"""An example plugin: counts the words of a web page, showing the whole plugin API in small."""

from __future__ import annotations

import re
from typing import Any

import requests
from marshmallow import Schema, fields, validate

from tools.api import Plugin, PluginContext, Tool, ToolContext, ToolError, ToolRefused
from tools.net import AddressNotAllowed


class Options(Schema):
    """What an admin sets: how many of the most common words to list."""

    top = fields.Integer(
        load_default=5,
        validate=validate.Range(min=1, max=50),
        metadata={"title": "Top words", "description": "How many frequent words to list."},
    )


class Settings(Schema):
    """What each user sets: words to leave out of the counts."""

    ignore = fields.List(fields.String(), load_default=list, metadata={"title": "Words to ignore"})


class Input(Schema):
    """What the model sends."""

    url = fields.Url(
        required=True, schemes={"http", "https"}, metadata={"description": "The page to count."}
    )


def setup(ctx: PluginContext) -> None:
    """Register the word_count tool with the admin's options."""
    top = ctx.options["top"]

    def count_words(input: dict[str, Any], tool: ToolContext) -> dict[str, Any]:
        url = input["url"]
        cached = tool.turn_cache.get(url)
        if cached is None:
            try:
                response = tool.fetch.get(
                    url, timeout=tool.signal.timeout(10), allow_redirects=False
                )
            except AddressNotAllowed as exc:
                raise ToolRefused(f"Fetching {url} is not allowed.") from exc
            except requests.RequestException as exc:
                raise ToolError(f"Fetching {url} failed. Check the address and try again.") from exc
            if response.status_code >= 400:
                raise ToolError(f"Fetching {url} failed (HTTP {response.status_code}).")
            cached = tool.turn_cache[url] = response.text
        ignore = {w.lower() for w in tool.settings.get("ignore", [])}
        words = [w for w in re.findall(r"\w+", cached.lower()) if w not in ignore]
        counts: dict[str, int] = {}
        for word in words:
            counts[word] = counts.get(word, 0) + 1
        tool.cite(url)
        common = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
        return {"words": len(words), "top": [{"word": w, "count": n} for w, n in common]}

    ctx.tools.register(
        Tool(
            name="word_count",
            description="Count the words of a web page and list the most frequent ones.",
            input_schema=Input,
            execute=count_words,
            default_enabled=False,
            user_toggle=True,
            untrusted=True,
            timeout_seconds=15,
        )
    )


plugin = Plugin(id="word_count", options_schema=Options, setup=setup, user_settings_schema=Settings)
