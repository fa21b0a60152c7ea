"""The chat page's set-up words in Chromium: the tools a message offers, the welcome, the models.

The shared chat app offers every user echo and page (on by default) and web_search (on by
default, switchable); each test makes its own user and, where it needs them, its own providers.
"""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from core.extensions import db
from core.models import Provider
from tests.support.chat_page import open_chat, send, sign_in, wait_status
from tests.support.fake_model import Reply

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def remove_provider(app, name: str) -> None:
    with app.app_context():
        db.session.execute(db.delete(Provider).filter_by(name=name))
        db.session.commit()


@pytest.fixture
def extra_model(chat_app, fake_model):
    """Return a factory adding a provider of one model (prefix, tools) -> model id; the shared
    app forgets these providers after the test."""
    names = []

    def make(prefix: str, tools: bool = True) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        with chat_app.app_context():
            db.session.add(
                Provider(
                    name=name, base_url=fake_model.base_url, models=[{"name": "x", "tools": tools}]
                )
            )
            db.session.commit()
        names.append(name)
        return f"{name}/x"

    yield make
    for name in names:
        remove_provider(chat_app, name)


def test_the_composer_says_which_tools_a_message_offers_and_links_to_settings(
    page, chat_server, user, model_id, extra_model
):
    """Regression: nothing on the chat page said which tools a message would offer."""
    person, chat = user
    plain = extra_model("plain", tools=False)
    open_chat(page, chat_server, person, model_id)
    line = page.locator("#composer-tools")
    assert line.inner_text() == "This message offers: echo, page, web_search. Change in Settings"
    assert line.get_by_role("link").get_attribute("href") == "/settings"
    assert line.locator("input, select, button").count() == 0  # read-only: Settings decides
    page.screenshot(path="/tmp/chat-composer-tools.png")

    page.get_by_label("Model", exact=True).select_option(plain)
    assert line.inner_text() == (
        "This model cannot use tools, so this message offers none. Tool settings"
    )

    switched = chat.call("PUT", "/api/plugins/web_search/tools/web_search", json={"enabled": False})
    assert switched.status_code == 200, switched.text
    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    page.get_by_label("Model", exact=True).select_option(model_id)
    assert line.inner_text() == "This message offers: echo, page. Change in Settings"


def test_the_welcome_promises_only_the_tools_that_are_on(page, chat_server, user, model_id):
    """Regression: the welcome promised web search to users for whom it was off."""
    person, chat = user
    open_chat(page, chat_server, person, model_id)
    welcome = page.locator("#chat-empty .welcome p")
    assert welcome.inner_text() == (
        "Ask a question below. Lookout can use echo, use page and search the web to answer, "
        "and lists the pages it used under each reply."
    )
    chat.call("PUT", "/api/plugins/web_search/tools/web_search", json={"enabled": False})
    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    assert "search the web" not in welcome.inner_text()
    assert welcome.inner_text().startswith(
        "Ask a question below. Lookout can use echo and use page"
    )


def test_a_fresh_browser_picks_a_model_that_can_use_tools(
    page, chat_server, user, model_id, extra_model
):
    """Regression: a browser with no stored choice picked the first model, without tools."""
    person, _chat = user
    plain = extra_model("0-plain", tools=False)  # sorts first in the model list
    sign_in(page, chat_server.url, person)
    picker = page.get_by_label("Model", exact=True)
    assert picker.locator("option").first.inner_text() == f"{plain} (no tools)"
    assert picker.input_value() != plain
    assert "(no tools)" not in picker.locator("option:checked").inner_text()


def test_opening_a_conversation_selects_the_model_it_used(
    page, chat_server, user, fake_model, model_id, extra_model
):
    """Regression: opening a conversation kept whatever model the picker showed."""
    person, _chat = user
    other = extra_model("other")
    fake_model.script(Reply.text("Answered by the test's model."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Which model?")
    wait_status(page, "completed")
    page.get_by_role("button", name="New chat").click()
    picker = page.get_by_label("Model", exact=True)
    picker.select_option(other)
    page.get_by_role("link", name="Which model?").click()
    expect(picker).to_have_value(model_id)
    assert page.locator("#model-notice").is_hidden()


def test_a_conversation_whose_model_is_gone_shows_it_not_installed_and_never_swaps_it(
    page, chat_app, chat_server, user, fake_model, model_id, extra_model
):
    """Regression: the page silently showed another model for a conversation whose model was
    removed, and a message sent from it went to that other model."""
    person, _chat = user
    other = extra_model("other")
    fake_model.script(Reply.text("First answer."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Before the removal")
    wait_status(page, "completed")
    conversation = page.url.split("#c=")[1]
    remove_provider(chat_app, model_id.split("/")[0])

    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    picker = page.get_by_label("Model", exact=True)
    expect(picker).to_have_value(model_id)
    assert picker.locator("option:checked").inner_text() == f"{model_id} (not installed)"
    notice = page.locator("#model-notice")
    sentence = (
        f"The model {model_id} is not installed any more, so it cannot answer. "
        "Pick another model to go on."
    )
    assert notice.inner_text() == sentence
    page.screenshot(path="/tmp/chat-model-not-installed.png")

    before = len(fake_model.chat_requests())
    send(page, "After the removal")
    expect(page.locator("#chat-error")).to_have_text(sentence)
    assert len(fake_model.chat_requests()) == before
    assert page.locator(".message-user").count() == 1

    picker.select_option(other)
    assert notice.is_hidden()
    assert picker.locator("option[data-missing]").count() == 0
    assert page.url.endswith(f"#c={conversation}")
    # The error was about this conversation: a new chat does not carry it (issue 25).
    page.get_by_role("button", name="New chat").click()
    expect(page.locator("#chat-error")).to_be_hidden()


def test_the_model_list_is_read_again_when_the_page_comes_back_into_view(
    page, chat_app, chat_server, user, model_id, extra_model
):
    """Regression: a removed provider's models stayed in the list until a reload."""
    person, _chat = user
    gone = extra_model("gone")
    open_chat(page, chat_server, person, model_id)
    picker = page.get_by_label("Model", exact=True)
    assert picker.locator(f"option[value='{gone}']").count() == 1
    remove_provider(chat_app, gone.split("/")[0])
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    expect(picker.locator(f"option[value='{gone}']")).to_have_count(0)
    expect(picker).to_have_value(model_id)  # the chosen model is kept

    remove_provider(chat_app, model_id.split("/")[0])
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(picker.locator("option:checked")).to_have_text(f"{model_id} (not installed)")


def test_with_no_model_left_the_chat_says_who_can_add_one_not_to_pick_another(
    page, chat_app, chat_server, user, fake_model, model_id
):
    """Issue 25: after the last provider was deleted the chat said "Pick another model" with
    nothing to pick."""
    person, _chat = user
    fake_model.script(Reply.text("First answer."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Before the removal")
    wait_status(page, "completed")
    with chat_app.app_context():
        db.session.execute(db.delete(Provider))
        db.session.commit()

    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    sentence = (
        f"The model {model_id} is not installed any more, and no other model is installed, so "
        "Lookout cannot answer until an administrator adds one."
    )
    expect(page.locator("#model-notice")).to_have_text(sentence)
    assert page.locator("#model-notice a").count() == 0  # not an admin: no link to a closed page
    page.get_by_role("button", name="New chat").click()
    expect(page.locator("#chat-empty")).to_contain_text("No model is set up yet")
