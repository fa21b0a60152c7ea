"""The example plugin of docs/plugins.md, loaded the way the app loads plugins, and run."""

from __future__ import annotations

import pytest

from examples.word_count import plugin
from tests.support.sites import Site
from tools.api import PluginConfigError, ToolRefused
from tools.host import PluginHost
from tools.net import GuardedSession
from tools.testing import start_plugin, tool_context_for_test

PAGE = b"The cat sat. The cat ran. A dog barked at the cat."


@pytest.fixture
def page_site():
    """A site on 127.0.0.2, which the tests' address policy treats as public, with one page."""
    with Site("127.0.0.2") as site:
        site.serve("/page", "text/plain", PAGE)
        yield site


def test_the_example_plugin_loads_through_lookout_plugins():
    host = PluginHost(["examples.word_count"], "Lookout", "http://localhost:5000").load({})
    assert host.plugins["word_count"].status == "active"
    tool = host.find_tool("word_count")
    assert tool.user_toggle and tool.untrusted and not tool.default_enabled


def test_the_example_plugin_counts_words_caches_the_page_and_cites_it(page_site):
    page_url = page_site.url("/page")
    tool = start_plugin(plugin, {"top": 2})["word_count"]
    fetch = GuardedSession(address_allowed=lambda ip: ip == "127.0.0.2")
    ctx, citations = tool_context_for_test(fetch=fetch, settings={"ignore": ["The", "a"]})
    output = tool.execute(tool.validate_input({"url": page_url}), ctx)
    again = tool.execute(tool.validate_input({"url": page_url}), ctx)
    assert (
        output
        == again
        == {
            "words": 8,
            "top": [{"word": "cat", "count": 3}, {"word": "at", "count": 1}],
        }
    )
    assert page_site.paths() == ["/page"]  # the second call was served from the turn cache
    assert [c.url for c in citations] == [page_url]


def test_the_example_plugin_is_refused_a_private_address(page_site):
    page_url = page_site.url("/page")
    tool = start_plugin(plugin, {})["word_count"]
    ctx, _ = tool_context_for_test()  # the default guard: 127.0.0.2 is loopback, so refused
    with pytest.raises(ToolRefused, match="is not allowed"):
        tool.execute(tool.validate_input({"url": page_url}), ctx)
    assert page_site.paths() == []


def test_the_example_plugin_refuses_invalid_options():
    with pytest.raises(PluginConfigError) as caught:
        start_plugin(plugin, {"top": 0})
    assert "top" in caught.value.fields
