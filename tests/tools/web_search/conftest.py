"""Fixtures for the web_search tests: recorded engine replies, a started tool, and a search."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import responses

from tools.api import Citation, Tool
from tools.testing import start_plugin, tool_context_for_test
from tools.web_search import plugin

RECORDINGS = Path(__file__).parent / "recordings"
API_KEY = "sk-live-7f3a9c2e5b1d4e6f8a0b"


@pytest.fixture
def api_key() -> str:
    """A key that must never show up in a message or a log line."""
    return API_KEY


@pytest.fixture
def recording() -> Callable[[str], str]:
    """Return ``load(name)``: the text of a recorded engine reply."""

    def load(name: str) -> str:
        return (RECORDINGS / name).read_text(encoding="utf-8")

    return load


@pytest.fixture
def engine_replies() -> Iterator[responses.RequestsMock]:
    """Recorded engine replies; a test fails when one it registered was never asked for."""
    with responses.RequestsMock(assert_all_requests_are_fired=True) as mock:
        yield mock


@pytest.fixture
def web_search() -> Callable[..., Tool]:
    """Return ``start(**options)``: the web_search tool of the default plugin."""

    def start(**options: Any) -> Tool:
        return start_plugin(plugin, options)["web_search"]

    return start


@pytest.fixture
def search() -> Callable[..., tuple[dict[str, Any], list[Citation]]]:
    """Return ``run(tool, query, **context)``: the tool's output and the citations it made."""

    def run(tool: Tool, query: str = "python requests", **context: Any) -> tuple[dict, list]:
        ctx, citations = tool_context_for_test(**context)
        return tool.execute(tool.validate_input({"query": query}), ctx), citations

    return run
