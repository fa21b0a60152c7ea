"""Listing an MCP server's tools with the SDK: over stdio, over HTTP, refused, down and slow."""

from __future__ import annotations

import pytest

from tests.support.processes import free_port
from tests.tools.mcp_sources.conftest import LOOPBACK_IS_PUBLIC, TIME_SERVER
from tools.api import ToolError, ToolRefused
from tools.mcp import ServerSpec, list_server_tools


def public(address: str) -> bool:
    return LOOPBACK_IS_PUBLIC(address)


def test_mcp_server_time_lists_its_tools_over_stdio():
    listed = {tool.name: tool for tool in list_server_tools(TIME_SERVER, timeout_seconds=60)}
    assert set(listed) == {"get_current_time", "convert_time"}
    assert listed["get_current_time"].input_schema["required"] == ["timezone"]
    assert "time" in listed["convert_time"].description.lower()


def test_a_streamable_http_server_lists_its_tools_through_the_address_policy(test_server):
    spec = ServerSpec(name="testing", url=test_server.url)
    names = [tool.name for tool in list_server_tools(spec, 30, policy=public)]
    assert names == ["echo", "broken", "huge", "wait_for_cancel"]


def test_a_private_server_address_is_refused_unless_the_admin_allowed_it(test_server):
    spec = ServerSpec(name="testing", url=test_server.url)
    with pytest.raises(ToolRefused) as refused:
        list_server_tools(spec, 30)  # the default policy: loopback is private
    assert "127.0.0.1, a private or reserved address" in refused.value.message
    assert "allow private addresses for this server" in refused.value.message
    allowed = ServerSpec(name="testing", url=test_server.url, allow_private=True)
    assert len(list_server_tools(allowed, 30)) == 4


def test_a_server_that_is_down_is_a_sentence_naming_it():
    spec = ServerSpec(name="gone", url=f"http://127.0.0.1:{free_port()}/mcp")
    with pytest.raises(ToolError) as down:
        list_server_tools(spec, 30, policy=public)
    assert down.value.message.startswith("The MCP server gone at http://127.0.0.1:")
    assert "could not be reached" in down.value.message
    assert down.value.message.endswith("Try again later, or ask an admin to check the server.")


def test_a_server_that_does_not_list_in_time_is_reported_as_slow():
    # A command that never answers the handshake: the listing gives up at its timeout.
    spec = ServerSpec(name="mute", command=("sleep", "600"))
    with pytest.raises(ToolError) as slow:
        list_server_tools(spec, 1)
    assert slow.value.message == (
        "The MCP server mute did not list its tools within 1 seconds. It may be slow or down; "
        "try again later."
    )
