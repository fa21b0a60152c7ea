"""The admin plugins page's "Test search" in a real Chromium: one real search on a worker with
the options in the form, saved or not, against a loopback SearXNG (the admin's engine may be
on any address); what comes back is the count and the engine, or the engine's sentence."""

from __future__ import annotations

import json

import pytest

from core.extensions import db
from core.models import PluginOptions
from tests.support.pages import sign_in_page
from tests.support.processes import free_port
from tests.support.sites import Site

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

RESULTS = {
    "results": [
        {"title": "Lighthouse A", "url": "https://a.example/light", "content": "A"},
        {"title": "Lighthouse B", "url": "https://b.example/house", "content": "B"},
    ]
}


@pytest.fixture
def searxng():
    """A loopback SearXNG answering every search with two results."""
    with Site() as site:
        site.serve("/search", "application/json", json.dumps(RESULTS).encode())
        yield site


def stored_options(app) -> list:
    """Every plugin's stored options."""
    with app.app_context():
        return db.session.scalars(db.select(PluginOptions)).all()


def test_test_search_runs_one_real_search_with_the_unsaved_options(
    app, page, live_server, make_user, celery_worker, searxng
):
    """Issue 25: there was no way to try an engine beside its options."""
    sign_in_page(
        page,
        live_server.url,
        make_user("root", admin=True),
        "/admin/plugins",
        ready="#plugins[data-ready]",
    )
    block = page.locator("#plugin-web_search")
    block.get_by_label("Search engine").select_option("searxng")
    block.get_by_label("Base URL").fill(searxng.url("/"))
    block.get_by_label("Test query").fill("lighthouses")
    block.get_by_role("button", name="Test search").click()
    status = block.locator(".trial-status.ok")
    status.wait_for(timeout=40_000)
    assert status.inner_text() == "SearXNG answered with 2 results."
    page.screenshot(path="/tmp/plugins-test-search.png", full_page=True)
    assert any("q=lighthouses" in path for path in searxng.paths())
    assert stored_options(app) == []  # a test saves nothing

    block.get_by_label("Base URL").fill(f"http://127.0.0.1:{free_port()}/")
    block.get_by_role("button", name="Test search").click()
    failed = block.locator(".trial-status.error")
    failed.wait_for(timeout=40_000)
    assert failed.inner_text().startswith("SearXNG"), failed.inner_text()
    assert "Try again" in failed.inner_text() or "Check" in failed.inner_text()


def test_test_search_never_sends_back_a_secret_of_the_options(app, signed_in_client, celery_worker):
    """The answer holds the count, the engine or its sentence, never the credentials the
    engine's address carries."""
    with Site() as site:
        site.route("/search", lambda request: request.reply(500, "text/plain", b"broken"))
        address = site.url("/").replace("http://", "http://admin:s3cret-pass-77@")
        admin = signed_in_client("root", admin=True)
        response = admin.post(
            "/api/admin/plugins/web_search/try/web_search",
            json={"options": {"engine": "searxng", "baseURL": address}, "input": {"query": "x"}},
        )
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["ok"] is False and body["error"].startswith("SearXNG"), body
    assert "s3cret-pass-77" not in response.get_data(as_text=True)
    assert "s3cret-pass-77" not in celery_worker.log.read_text()


def test_test_search_with_options_a_save_would_refuse_says_so_beside_the_field(
    signed_in_client,
):
    admin = signed_in_client("root", admin=True)
    response = admin.post(
        "/api/admin/plugins/web_search/try/web_search",
        json={"options": {"engine": "searxng"}, "input": {"query": "x"}},
    )
    assert response.status_code == 400
    assert "baseURL" in response.get_json()["error"]["fields"]


def test_a_trial_input_the_tool_would_refuse_is_a_400_that_names_the_field(signed_in_client):
    admin = signed_in_client("root", admin=True)
    response = admin.post(
        "/api/admin/plugins/web_search/try/web_search",
        json={"options": {"engine": "searxng", "baseURL": "http://127.0.0.1:9/"}, "input": {}},
    )
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["message"].startswith("The input is not what the tool web_search takes: query:")
