"""The admins' MCP servers page in Chromium: adding a server with the form, its tools, and a
server that is down shown as down with the sentence saying why."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.chat import ChatClient
from tests.support.chat_page import token_for
from tests.support.mcp_server import MCPTestServer
from tests.support.pages import sign_in_page
from tests.support.processes import free_port

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def test_an_admin_adds_a_server_sees_its_tools_and_sees_a_down_one_as_down(
    page, chat_app, chat_server, tmp_path
):
    admin, token = token_for(chat_app, admin=True)
    api = ChatClient(chat_server.url, token)
    down_url = f"http://127.0.0.1:{free_port()}/mcp"
    assert api.call(
        "POST",
        "/api/admin/mcp-servers",
        json={"name": "gone", "url": down_url, "allowPrivate": True},
    ).ok
    try:
        with MCPTestServer(tmp_path) as server:
            sign_in_page(
                page, chat_server.url, admin, "/admin/mcp-servers", ready="#mcp-servers[data-ready]"
            )
            gone = page.locator("[data-server=gone]")
            expect(gone.locator(".mcp-status")).to_have_text("Down")
            expect(gone.locator(".mcp-error")).to_contain_text(
                f"The MCP server gone at {down_url} could not be reached"
            )

            page.get_by_label("Name *").fill("testing")
            page.get_by_label("URL").fill(server.url)
            page.get_by_label("Headers").fill("Authorization: Bearer s3cret")
            page.get_by_label("Allow a private address").check()
            page.get_by_role("button", name="Add server").click()
            added = page.locator("[data-server=testing]")
            expect(added.locator(".mcp-status")).to_have_text("Up", timeout=30_000)
            expect(added.locator(".mcp-tools code").first).to_have_text("testing_echo")
            assert "headers: Authorization" in added.inner_text()
            assert "s3cret" not in page.content()
            page.screenshot(path="/tmp/admin-mcp-servers.png", full_page=True)
    finally:
        for name in ("gone", "testing"):
            api.call("DELETE", f"/api/admin/mcp-servers/{name}")
