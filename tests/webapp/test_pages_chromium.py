"""The settings and admin plugin pages in a real Chromium against a live server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.extensions import db
from core.models import User, UserPluginSettings
from tests.support.pages import key_fields, sign_in_page
from webapp.auth import accounts

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

PLUGINS = ",".join(
    ["tests.tools.sample_plugins.alpha", "tools.web_search", "tools.web_fetch", "tools.pdf"]
)


@pytest.fixture
def app(make_app):
    """An app listing a sample plugin and the three built-in ones."""
    return make_app(LOOKOUT_PLUGINS=PLUGINS)


@pytest.fixture
def api(app, bearer):
    """Return a factory of (method, path, json) -> response, as the given user over the API."""

    def make(user):
        headers = bearer(user)
        client = app.test_client()
        return lambda method, path, json=None: client.open(
            path, method=method, json=json, headers=headers
        )

    return make


@pytest.fixture
def search_configured(api, make_user):
    """web_search set up by an admin with DuckDuckGo, so users may pick their own engine."""
    call = api(make_user("root", admin=True))
    response = call("PUT", "/api/admin/plugins/web_search/options", {"engine": "duckduckgo"})
    assert response.status_code == 200, response.get_json()


def sign_in(page, live_server, user, path: str):
    """Sign in and open `path`, waiting for the plugin forms to be drawn."""
    sign_in_page(page, live_server.url, user, path, ready="#plugins[data-ready]")


def test_the_settings_page_has_a_checkbox_per_switchable_tool_and_saves_changes(
    page, live_server, make_user, api
):
    user = make_user("alice")
    sign_in(page, live_server, user, "/settings")
    alpha = page.locator("#plugin-alpha")
    assert alpha.get_by_role("checkbox", name="whisper").is_checked() is False
    assert alpha.get_by_role("checkbox", name="shout").count() == 0  # not switchable
    assert page.locator("#plugin-web_fetch").get_by_role("checkbox", name="web_fetch").is_checked()
    # Cards are headed by the plugin's title, as the tools' labels name it, not by its id.
    assert page.locator("#plugin-web_fetch h2").inner_text() == "Web fetch"

    alpha.get_by_role("checkbox", name="whisper").check()
    page.wait_for_selector("#tool-alpha-whisper-status.ok")
    page.locator("#plugin-web_fetch").get_by_role("checkbox", name="web_fetch").uncheck()
    page.wait_for_selector("#tool-web_fetch-web_fetch-status.ok")

    listed = api(user)("GET", "/api/plugins/settings").get_json()["plugins"]
    enabled = {t["name"]: t["enabled"] for p in listed for t in p["tools"]}
    assert enabled == {"shout": True, "whisper": True, "web_fetch": False}
    page.reload()
    page.wait_for_selector("#plugins[data-ready]")
    assert page.get_by_role("checkbox", name="whisper").is_checked()
    assert not page.get_by_role("checkbox", name="web_fetch").is_checked()


def test_a_switch_flipped_after_the_session_ended_says_to_sign_in_again(
    page, app, live_server, make_user
):
    """It said "Sign in, or send an API token as 'Authorization: Bearer <token>'.", the
    sentence for programs."""
    user = make_user("alice")
    sign_in(page, live_server, user, "/settings")
    with app.app_context():
        accounts.end_sessions(db.session.get(User, user.id))  # signed out from elsewhere
    # A click, not uncheck(): the page puts a refused switch back, which uncheck() can see
    # before it has looked, and fail as though the click did nothing.
    box = page.locator("#plugin-web_fetch").get_by_role("checkbox", name="web_fetch")
    box.click()
    expect(page.locator("#tool-web_fetch-web_fetch-status")).to_have_text(
        "You are signed out, so this was not done. Reload the page to sign in again."
    )
    expect(box).to_be_checked()  # nothing was saved, and the switch says so


def test_the_engine_form_shows_the_key_only_for_keyed_engines(
    page, live_server, make_user, search_configured
):
    sign_in(page, live_server, make_user("alice"), "/settings")
    block = page.locator("#plugin-web_search")
    engine = block.get_by_label("Search engine")
    key, base_url = block.get_by_label("API key"), block.get_by_label("Base URL")
    assert engine.input_value() == "default"
    assert not key.is_visible() and not base_url.is_visible()
    engine.select_option("brave")
    assert key.is_visible() and not base_url.is_visible()
    engine.select_option("searxng")
    assert base_url.is_visible() and not key.is_visible()
    engine.select_option("duckduckgo")
    assert not key.is_visible() and not base_url.is_visible()


def test_a_saved_key_is_never_shown_and_a_blank_keeps_it(
    app, page, live_server, make_user, search_configured
):
    user = make_user("alice")
    sign_in(page, live_server, user, "/settings")
    block = page.locator("#plugin-web_search")
    block.get_by_label("Search engine").select_option("brave")
    block.get_by_label("API key").fill("brave-secret")
    block.get_by_role("button", name="Save settings").click()
    page.wait_for_selector("#plugin-web_search .status.ok")
    page.reload()
    page.wait_for_selector("#plugins[data-ready]")
    block = page.locator("#plugin-web_search")
    assert block.get_by_label("API key").input_value() == ""
    assert "Set — leave blank to keep." in block.locator("[data-field=apiKey]").inner_text()
    assert "brave-secret" not in page.content()
    block.get_by_role("button", name="Save settings").click()
    page.wait_for_selector("#plugin-web_search .status.ok")
    with app.app_context():
        row = db.session.get(UserPluginSettings, (user.id, "web_search"))
        assert row.settings["apiKey"] == "brave-secret"


@pytest.mark.parametrize(
    ("admin", "path", "ids"),
    [
        (False, "/settings", ["setting-web_search-apiKey"]),
        (True, "/admin/plugins", ["option-web_search-apiKey", "option-web_search-fallbackApiKey"]),
    ],
)
def test_no_browser_offers_to_save_a_search_key_as_a_password(
    page, live_server, make_user, search_configured, admin, path, ids
):
    """Regression: key fields were password inputs with autocomplete="new-password", so the
    browser offered to save an engine's key as the user's password for Lookout."""
    sign_in(page, live_server, make_user("alice", admin=admin), path)
    fields = key_fields(page)
    assert [f["id"] for f in fields] == ids
    for field in fields:
        assert field["autocomplete"] == "off" and field["type"] == "text", field


def test_an_engine_no_longer_installed_stays_selected_and_named(
    app, page, live_server, make_user, search_configured
):
    user = make_user("alice")
    with app.app_context():
        db.session.add(
            UserPluginSettings(user_id=user.id, plugin_id="web_search", settings={"engine": "gone"})
        )
        db.session.commit()
    sign_in(page, live_server, user, "/settings")
    engine = page.locator("#plugin-web_search").get_by_label("Search engine")
    assert engine.input_value() == "gone"
    assert engine.locator("option:checked").inner_text() == "gone (not installed)"


def test_settings_errors_show_beside_their_fields_and_reset_keeps_switches(
    page, live_server, make_user, search_configured, api
):
    user = make_user("alice")
    sign_in(page, live_server, user, "/settings")
    block = page.locator("#plugin-web_search")
    block.get_by_label("Search engine").select_option("searxng")
    block.get_by_label("Base URL").fill("not a url")
    block.get_by_role("button", name="Save settings").click()
    error = page.locator("#setting-web_search-baseURL-error")
    error.wait_for()
    assert error.inner_text() == (
        "Base URL must be a web address starting with http:// or https://."
    )
    assert block.get_by_label("Base URL").get_attribute("aria-invalid") == "true"

    page.get_by_role("checkbox", name="whisper").check()
    page.wait_for_selector("#tool-alpha-whisper-status.ok")
    alpha = page.locator("#plugin-alpha")
    alpha.get_by_label("greeting").fill("hello")
    alpha.get_by_role("button", name="Save settings").click()
    page.wait_for_selector("#plugin-alpha .actions .status.ok")
    alpha.get_by_role("button", name="Reset to defaults").click()
    expect(page.locator("#plugin-alpha .actions .status")).to_have_text("Reset to defaults.")
    assert alpha.get_by_label("greeting").input_value() == "hi"
    listed = {p["id"]: p for p in api(user)("GET", "/api/plugins/settings").get_json()["plugins"]}
    assert listed["alpha"]["settings"] == {}
    assert listed["alpha"]["tools"][1]["enabled"] is True


def test_the_admin_page_saves_options_and_shows_per_field_errors(page, live_server, make_user, api):
    admin = make_user("root", admin=True)
    sign_in(page, live_server, admin, "/admin/plugins")
    block = page.locator("#plugin-web_search")
    assert block.locator(".badge").inner_text() == "Needs configuration"
    assert page.locator("#plugin-web_fetch .badge").inner_text() == "Active"
    block.get_by_label("Search engine").select_option("brave")
    block.get_by_role("button", name="Save options").click()
    error = page.locator("#option-web_search-apiKey-error")
    error.wait_for()
    assert error.inner_text() == "Brave needs an API key."
    assert block.locator(".badge").inner_text() == "Needs configuration"

    block.get_by_label("API key").fill("brave-admin-key")
    block.get_by_label("Results per search").fill("7")
    block.get_by_role("button", name="Save options").click()
    page.wait_for_selector("#plugin-web_search .badge-active")
    assert block.get_by_label("API key").input_value() == ""
    listed = api(admin)("GET", "/api/admin/plugins").get_json()["plugins"]
    search = next(p for p in listed if p["id"] == "web_search")
    assert search["status"] == "active"
    assert search["options"]["maxResults"] == 7
    assert search["secretsSet"] == {"apiKey": True, "fallbackApiKey": False}


def test_the_admin_page_saves_rates_a_daily_cap_and_a_fallback_and_shows_them_again(
    page, live_server, make_user, api
):
    admin = make_user("root", admin=True)
    sign_in(page, live_server, admin, "/admin/plugins")
    block = page.locator("#plugin-web_search")
    block.get_by_label("Search engine").select_option("brave")
    block.get_by_label("API key").fill("brave-admin-key")
    block.get_by_label("Searches a second").fill("20")
    block.get_by_label("Searches a day").fill("500")
    assert not block.get_by_label("Fallback's rate").is_visible()
    block.get_by_label("Fallback engine").select_option("tavily")
    expect(block.get_by_label("Fallback key")).to_be_visible()
    block.get_by_label("Fallback's rate").fill("0.5")
    block.get_by_role("button", name="Save options").click()
    error = page.locator("#option-web_search-fallbackApiKey-error")
    expect(error).to_have_text("Tavily needs an API key.")

    block.get_by_label("Fallback key").fill("tavily-fallback-key")
    block.get_by_role("button", name="Save options").click()
    page.wait_for_selector("#plugin-web_search .badge-active")
    listed = api(admin)("GET", "/api/admin/plugins").get_json()["plugins"]
    search = next(p for p in listed if p["id"] == "web_search")
    assert {k: search["options"][k] for k in ("rate", "dailyCap", "fallbackEngine")} == {
        "rate": 20,
        "dailyCap": 500,
        "fallbackEngine": "tavily",
    }
    assert search["options"]["fallbackRate"] == 0.5
    assert search["secretsSet"] == {"apiKey": True, "fallbackApiKey": True}

    page.reload()
    block = page.locator("#plugin-web_search")
    expect(block.get_by_label("Searches a second")).to_have_value("20")
    expect(block.get_by_label("Searches a day")).to_have_value("500")
    expect(block.get_by_label("Fallback engine")).to_have_value("tavily")
    expect(block.get_by_label("Fallback's rate")).to_have_value("0.5")
    assert "Set — leave blank to keep." in block.locator("[data-field=fallbackApiKey]").inner_text()
    page.screenshot(path="/tmp/admin-engine-rates.png", full_page=True)


def test_the_admin_page_lists_each_engine_with_its_needs_and_operators(
    page, live_server, make_user
):
    sign_in(page, live_server, make_user("root", admin=True), "/admin/plugins")
    catalog = page.locator("#plugin-web_search details.catalog")
    catalog.locator("summary").click()
    rows = catalog.locator("tbody tr")
    expect(rows).to_have_count(5)
    cells = {
        rows.nth(i).locator("td").first.inner_text(): rows.nth(i).locator("td").all_inner_texts()
        for i in range(5)
    }
    assert cells["Brave"][1] == "an API key"
    assert cells["Brave"][2] == "1 a second"
    assert cells["DuckDuckGo"][2] == "1 every 2 seconds"
    assert "site:example.com" in cells["Brave"][3]
    assert cells["SearXNG"][1] == "a base URL"
    assert cells["DuckDuckGo"][1] == "nothing"
    assert page.locator("#plugin-web_fetch details.catalog").count() == 0


def test_a_non_admin_gets_403_on_the_admin_plugins_page(page, live_server, make_user):
    sign_in(page, live_server, make_user("alice"), "/settings")
    response = page.goto(f"{live_server.url}/admin/plugins")
    assert response.status == 403
    assert "Only administrators may open this page." in page.content()


def test_a_tool_switch_is_labelled_with_its_name_and_plugin_not_the_model_s_description(
    page, live_server, make_user, search_configured
):
    """Regression: Settings showed each tool's description, which is written for the model."""
    sign_in(page, live_server, make_user("alice"), "/settings")
    search = page.locator("#plugin-web_search .tool")
    assert search.locator("label").inner_text() == "web_search (Web search)"
    assert page.get_by_role("checkbox", name="web_search (Web search)").count() == 1
    assert "Returns a title, URL, and snippet" not in page.locator("#plugins").inner_text()
    assert "Fetch a web page" not in page.locator("#plugins").inner_text()
    fixed = page.locator("#plugin-alpha .fixed-tools li")
    assert fixed.inner_text() == "shout (Alpha) — always on, set by your administrator."
    page.screenshot(path="/tmp/settings-switches.png", full_page=True)


def test_the_admin_page_says_nobody_gets_web_search_until_it_is_on_by_default(
    page, live_server, make_user
):
    """Regression: after an engine was saved, nothing said that "On by default" was unticked,
    so web search was offered to nobody without a word."""
    sign_in(page, live_server, make_user("root", admin=True), "/admin/plugins")
    block = page.locator("#plugin-web_search")
    block.get_by_label("Search engine").select_option("duckduckgo")
    block.get_by_role("button", name="Save options").click()
    page.wait_for_selector("#plugin-web_search .badge-active")
    notice = block.locator(".plugin-notice").first
    assert notice.inner_text() == (
        "Nobody gets web_search yet: it is off by default, so only users who switch it on in "
        "their Settings get it. To offer it to everyone, tick “On by default” below and save."
    )
    assert not block.get_by_label("On by default").is_checked()
    page.screenshot(path="/tmp/admin-plugins-off-by-default.png", full_page=True)

    block.get_by_label("On by default").check()
    block.get_by_role("button", name="Save options").click()
    # What stays is who searches (issue 24: the page says which roles get search).
    who = (
        "Users holding the role user search with DuckDuckGo, the engine set below; other users "
        "need an engine of their own in their web search settings."
    )
    expect(block.locator(".plugin-notice")).to_have_text([who])
    page.reload()
    page.wait_for_selector("#plugins[data-ready]")
    expect(page.locator("#plugin-web_search .plugin-notice")).to_have_text([who])


def test_saving_a_first_engine_offers_web_search_to_everyone_in_one_more_click(
    page, live_server, make_user, api
):
    """Issue 25: after the README's steps (engine chosen and saved) nobody was offered web
    search until the admin found "On by default", ticked it and saved again."""
    sign_in(page, live_server, make_user("root", admin=True), "/admin/plugins")
    block = page.locator("#plugin-web_search")
    assert block.locator("h2").inner_text() == "Web search"  # its title, as Settings says it
    block.get_by_label("Search engine").select_option("duckduckgo")
    block.get_by_role("button", name="Save options").click()
    page.wait_for_selector("#plugin-web_search .badge-active")
    offer = block.get_by_role("button", name="Offer web search to everyone now")
    offer.click()
    expect(offer).to_have_count(0)
    expect(block.get_by_label("On by default")).to_be_checked()
    listed = api(make_user("newcomer"))("GET", "/api/plugins/settings").get_json()["plugins"]
    enabled = {t["name"]: t["enabled"] for p in listed for t in p["tools"]}
    assert enabled["web_search"] is True
