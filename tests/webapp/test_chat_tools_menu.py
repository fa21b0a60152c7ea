"""The composer's Tools menu in Chromium: it lists the user's enabled tools and the MCP servers'
tools, and a message sends the ticked ones as generation.tools, the only way an MCP tool is
offered; the fake model then calls one against a real MCP server and reads its output wrapped."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.chat import ChatClient
from tests.support.chat_page import open_chat, send, token_for, wait_status
from tests.support.fake_model import Reply
from tests.support.mcp_server import MCPTestServer

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


@pytest.fixture
def mcp_server(chat_app, chat_server, tmp_path):
    """The SDK-written test server, added by an admin as "testing"; removed after the test."""
    admin = ChatClient(chat_server.url, token_for(chat_app, admin=True)[1])
    with MCPTestServer(tmp_path) as server:
        added = admin.call(
            "POST",
            "/api/admin/mcp-servers",
            json={"name": "testing", "url": server.url, "allowPrivate": True},
        )
        assert added.status_code == 201 and added.json()["status"] == "ok", added.text
        yield server
        admin.call("DELETE", "/api/admin/mcp-servers/testing")


def test_the_tools_menu_offers_a_ticked_mcp_tool_and_the_model_reads_its_output_wrapped(
    page, chat_server, user, model_id, fake_model, mcp_server
):
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    line = page.locator("#composer-tools")
    assert line.inner_text() == "This message offers: echo, page, web_search. Change in Settings"

    page.get_by_text("Tools", exact=True).click()
    menu = page.get_by_role("group", name="Tools this message offers")
    expect(menu.get_by_role("checkbox", name="web_search")).to_be_checked()
    mcp_echo = menu.get_by_role("checkbox", name="testing_echo")
    expect(mcp_echo).not_to_be_checked()  # a source's tool is offered only when ticked
    assert menu.locator("fieldset legend").all_inner_texts() == ["Your tools", "From MCP servers"]
    page.screenshot(path="/tmp/chat-tools-menu.png")

    menu.get_by_role("checkbox", name="web_search").uncheck()
    mcp_echo.check()
    assert line.inner_text() == (
        "This message offers: echo, page, testing_echo. Change in Settings"
    )

    fake_model.script(
        Reply.tool_calls([("testing_echo", {"text": "from the menu"})]), Reply.text("Echoed.")
    )
    send(page, "Echo it")
    wait_status(page, "completed")
    first, second = fake_model.chat_requests()[-2:]
    assert [t["function"]["name"] for t in first.json["tools"]] == ["echo", "page", "testing_echo"]
    (result,) = [m["content"] for m in second.json["messages"] if m["role"] == "tool"]
    assert result.startswith("<untrusted_tool_output id=")
    assert '"text": "Echo: from the menu"' in result
    assert mcp_server.events() == ["echo"]


def test_an_untouched_menu_sends_no_tool_names_and_offers_no_mcp_tool(
    page, chat_server, user, model_id, fake_model, mcp_server
):
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    fake_model.script(Reply.text("Hello."))
    send(page, "Hi")
    wait_status(page, "completed")
    offered = [t["function"]["name"] for t in fake_model.chat_requests()[-1].json["tools"]]
    assert offered == ["echo", "page", "web_search"]
