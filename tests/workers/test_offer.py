"""Tool selection: explicit lists, the user's enabled tools, capability, tool sources."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.tools.test_host import host
from tools.api import Audience
from tools.host import is_enabled
from workers.offer import TurnFailed, select_tools


def enabled(h, choices=None):
    choices = choices or {}
    return lambda: [t for t in h.tools() if is_enabled(t, choices.get(t.name))]


def names(offered):
    return [o.tool.name for o in offered]


def test_absent_tools_mean_the_users_enabled_tools():
    h = host("alpha")
    assert names(select_tools(h, {}, "m", True, enabled(h))) == ["shout"]
    assert names(select_tools(h, {}, "m", True, enabled(h, {"whisper": True}))) == [
        "shout",
        "whisper",
    ]


def test_enabled_tools_are_dropped_silently_for_a_model_without_tools():
    h = host("alpha")
    assert select_tools(h, {}, "m", False, enabled(h)) == []


def test_an_explicit_list_even_empty_is_used_exactly():
    h = host("alpha")
    assert select_tools(h, {"tools": []}, "m", True, enabled(h)) == []
    assert names(select_tools(h, {"tools": ["whisper"]}, "m", True, enabled(h))) == ["whisper"]


def test_an_unknown_name_or_a_model_without_tools_fails_the_turn():
    h = host("alpha")
    with pytest.raises(TurnFailed, match="The tool nope is not available"):
        select_tools(h, {"tools": ["nope"]}, "m", True, enabled(h))
    with pytest.raises(TurnFailed, match="The model m cannot use tools"):
        select_tools(h, {"tools": ["shout"]}, "m", False, enabled(h))


def test_tool_sources_are_used_only_when_named_and_always_untrusted():
    h = host("sourced")
    assert select_tools(h, {}, "m", True, enabled(h)) == []
    (offered,) = select_tools(h, {"tools": ["remote_lookup"]}, "m", True, enabled(h))
    assert offered.untrusted and offered.source == "remote" and offered.plugin is None


def test_a_tool_is_offered_only_to_users_its_audience_includes_unless_named():
    """Issue 24: web_search was offered to users who could only read that it is not for them."""
    h = host("alpha")
    for_admins = Audience(("admin",), "Only admins get shout.")

    def tools():
        return [replace(t, audience=for_admins) for t in enabled(h)()]

    assert names(select_tools(h, {}, "m", True, tools, roles=["user"])) == []
    assert names(select_tools(h, {}, "m", True, tools, roles=["user", "admin"])) == ["shout"]
    named = select_tools(h, {"tools": ["shout"]}, "m", True, tools, roles=["user"])
    assert names(named) == ["shout"]  # a message that names it gets it, as the spec says
