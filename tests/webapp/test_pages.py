"""The server-rendered pages: each answers at its address under the endpoint templates name."""

from __future__ import annotations

import pytest
from flask import url_for

# The endpoints templates pass to url_for, and the addresses people and links use.
PAGES = {
    "home.index": "/",
    "admin.index": "/admin/",
    "settings.index": "/settings",
    "admin_plugins.index": "/admin/plugins",
    "admin_providers.index": "/admin/providers",
    "admin_mcp_servers.index": "/admin/mcp-servers",
    "tokens_page.index": "/settings/tokens",
}


@pytest.mark.parametrize(("endpoint", "path"), PAGES.items(), ids=PAGES)
def test_every_page_keeps_its_endpoint_and_address(app, signed_in_client, endpoint, path):
    with app.test_request_context():
        assert url_for(endpoint) == path
    response = signed_in_client("root", admin=True).get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"


def test_a_signed_out_visitor_is_sent_to_sign_in_from_every_page(client):
    for path in PAGES.values():
        response = client.get(path)
        assert response.status_code == 302, path
        assert "/sign-in" in response.headers["Location"], path


def test_the_admin_index_says_where_the_search_engine_is_chosen(signed_in_client):
    """Regression: it listed Plugins as "each plugin's status and options", and a newcomer
    looking for where to pick a search engine did not find it."""
    page = signed_in_client("root", admin=True).get("/admin/").get_data(as_text=True)
    assert "the web search engine and its key (web search is off until one is chosen)" in page
