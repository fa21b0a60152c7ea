"""MCP servers' tools called through their tool source: answers, errors, huge output, cancel."""

from __future__ import annotations

import json
import threading

import pytest

from tests.support.mcp_server import HUGE_CHARS
from tests.support.processes import wait_until
from tests.tools.mcp_sources.conftest import LOOPBACK_IS_PUBLIC, TIME_SERVER
from tools.api import Cancelled, Signal, ToolError
from tools.mcp import MCPToolSource, ServerSpec, list_server_tools
from tools.testing import tool_context_for_test


def public(address: str) -> bool:
    return LOOPBACK_IS_PUBLIC(address)


@pytest.fixture(scope="module")
def testing(test_server):
    spec = ServerSpec(name="testing", url=test_server.url)
    return MCPToolSource(spec, list_server_tools(spec, 30, policy=public), policy=public)


def tool(source: MCPToolSource, name: str):
    return next(t for t in source.list_tools() if t.name == name)


def test_mcp_server_time_answers_a_call_as_structured_untrusted_output():
    source = MCPToolSource(TIME_SERVER, list_server_tools(TIME_SERVER, 60))
    now = tool(source, "time_get_current_time")
    assert source.id == "mcp:time" and now.untrusted
    assert now.json_schema()["required"] == ["timezone"]
    ctx, _ = tool_context_for_test(signal=Signal.after(60))
    output = now.execute({"timezone": "Asia/Tokyo"}, ctx)
    assert output["structured"]["timezone"] == "Asia/Tokyo"
    assert json.loads(output["text"])["datetime"].endswith("+09:00")


def test_a_tool_that_fails_is_a_sentence_with_the_servers_words():
    source = MCPToolSource(TIME_SERVER, list_server_tools(TIME_SERVER, 60))
    ctx, _ = tool_context_for_test(signal=Signal.after(60))
    with pytest.raises(ToolError) as failed:
        tool(source, "time_convert_time").execute({"source_timezone": "UTC"}, ctx)
    assert failed.value.message.startswith(
        "The tool convert_time of the MCP server time failed: Error executing tool convert_time"
    )
    assert failed.value.message.endswith("Try other input, or answer without it.")


def test_a_crashing_tool_on_an_http_server_is_a_sentence(testing):
    ctx, _ = tool_context_for_test(signal=Signal.after(30))
    with pytest.raises(ToolError) as failed:
        tool(testing, "testing_broken").execute({}, ctx)
    assert "The tool broken of the MCP server testing failed" in failed.value.message


def test_huge_output_is_cut_and_says_how_much_was_left_out(testing):
    ctx, _ = tool_context_for_test(signal=Signal.after(30))
    output = tool(testing, "testing_huge").execute({}, ctx)
    assert len(output["text"]) == testing.output_chars
    assert output["cut"] == f"{HUGE_CHARS - testing.output_chars} more characters left out"


def test_a_cancel_cancels_the_request_on_the_server_and_closes_the_session(test_server, testing):
    signal = Signal.after(30)
    ctx, _ = tool_context_for_test(signal=signal)
    raised: list[BaseException] = []

    def call() -> None:
        try:
            tool(testing, "testing_wait_for_cancel").execute({}, ctx)
        except BaseException as exc:  # noqa: BLE001 — the test reads it
            raised.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    wait_until(lambda: "started" in test_server.events(), 30, "The tool never started.")
    signal.cancel()
    caller.join(30)
    assert not caller.is_alive()
    assert [type(exc) for exc in raised] == [Cancelled]
    wait_until(lambda: "cancelled" in test_server.events(), 30, "The server saw no cancel.")


def test_the_deadline_stops_a_slow_tool(test_server, testing):
    ctx, _ = tool_context_for_test(signal=Signal.after(1))
    with pytest.raises(Cancelled):
        tool(testing, "testing_wait_for_cancel").execute({}, ctx)
    assert ctx.signal.timed_out
