"""The chat page in a real Chromium, against a live server, a real worker and a scripted model.

The module shares one app, one worker and one server (tests/webapp/conftest.py); each test gets
its own fake model (as its own provider) and its own user.
"""

from __future__ import annotations

import json
import re
import threading

import pytest
from playwright.sync_api import expect

from core.extensions import db
from core.models import Conversation, Message, Provider, User
from tests.support.chat_page import (
    WAIT_MS,
    last_reply,
    open_chat,
    send,
    sign_in,
    wait_status,
)
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, wait_until
from webapp.auth import accounts

pytestmark = [pytest.mark.chromium, pytest.mark.integration]


def test_a_sent_message_streams_its_reply_and_it_stays_after_reload(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(
        Reply.text("Hello **there**, streamed in many small parts.", chunks=12, delay=0.15)
    )
    open_chat(page, chat_server, person, model_id)
    assert "Welcome" in page.locator("#chat-empty").inner_text()
    box = page.get_by_label("Message", exact=True)
    box.fill("Say")
    box.press("Shift+Enter")  # a new line, not a send
    box.press_sequentially("hello")
    assert box.input_value() == "Say\nhello" and page.locator(".message").count() == 0
    box.press("Enter")
    page.wait_for_selector(".message-assistant .reply[aria-busy=true] .markdown", timeout=WAIT_MS)
    assert page.get_by_role("button", name="Stop", exact=True).is_visible()
    wait_status(page, "completed")
    assert last_reply(page).locator(".markdown").inner_text() == (
        "Hello there, streamed in many small parts."
    )
    assert last_reply(page).locator("strong").inner_text() == "there"
    assert page.get_by_label("Message", exact=True).input_value() == ""
    assert page.locator(".conversation-link").inner_text() == "Say hello"
    assert re.search(r"#c=\w+", page.url)
    page.screenshot(path="/tmp/chat-reply.png")

    page.reload()
    wait_status(page, "completed")
    assert page.locator(".message-user .user-text").inner_text() == "Say\nhello"
    assert "Hello there" in last_reply(page).inner_text()
    assert page.locator(".conversation-link[aria-current=page]").inner_text() == "Say hello"


def test_tool_calls_show_compact_cards_and_sources_become_links(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": "lighthouse"}), ("echo", {"text": "ping"})]),
        Reply.tool_calls([("failing", {})]),
        Reply.text("Both found it."),
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Find lighthouses")
    wait_status(page, "completed")
    reply = last_reply(page)
    search = reply.locator(".tool-card[data-tool=web_search]")
    assert search.locator(".tool-summary").inner_text() == "“lighthouse”"
    assert search.locator(".tool-outcome").inner_text() == "2 results from SearXNG"  # issue 14
    assert "{" not in search.inner_text() and search.locator("details").count() == 0

    echo = reply.locator(".tool-card[data-tool=echo]")
    assert echo.locator(".tool-name").inner_text() == "echo"
    assert echo.locator(".tool-summary").inner_text() == "ping"
    assert echo.locator(".tool-outcome").inner_text() == "Done"
    assert not echo.locator(".tool-output").is_visible()
    echo.get_by_text("Show the output").click()
    assert '"echo": "ping"' in echo.locator(".tool-output").inner_text()

    failing = reply.locator(".tool-card[data-tool=failing]")
    assert failing.locator(".tool-outcome").inner_text() == "Failed"
    failing.get_by_text("Show the error").click()
    # Not among the default tools, so the worker refused it; the card shows that as text.
    assert failing.locator(".tool-output").inner_text() == (
        "The tool failing was not offered in this turn."
    )

    sources = reply.locator(".sources")
    assert sources.locator(".sources-label").inner_text() == "Sources (2)"
    links = sources.get_by_role("link")
    assert links.all_inner_texts() == ["Lighthouse A", "b.example"]
    assert links.nth(0).get_attribute("href") == "https://a.example/light"
    assert page.locator(".sources").count() == 1
    page.screenshot(path="/tmp/chat-tools.png", full_page=True)


def test_a_source_that_is_not_http_is_never_a_link(page, chat_app, chat_server, user):
    person, chat = user
    with chat_app.app_context():
        conversation = Conversation(owner_id=person.id, title="Stored sources")
        db.session.add(conversation)
        db.session.flush()
        question = Message(
            conversation_id=conversation.id,
            role="user",
            parts=[{"type": "text", "text": "Where?"}],
        )
        db.session.add(question)
        db.session.flush()
        sources = [
            ("javascript:alert(document.cookie)", "Click me"),
            ("data:text/html,<script>alert(1)</script>", "Data"),
            ("https://example.com/a", "Example A"),
            ("https://example.com/a", "Example A again"),
            ("https://example.org/b", None),
        ]
        db.session.add(
            Message(
                conversation_id=conversation.id,
                parent_id=question.id,
                role="assistant",
                parts=[{"type": "text", "text": "Here."}]
                + [{"type": "source", "url": u, "title": t} for u, t in sources],
            )
        )
        db.session.commit()
        conversation_id = conversation.id
    sign_in(page, chat_server.url, person, f"/#c={conversation_id}")
    row = page.locator(".sources")
    row.wait_for()
    assert row.locator(".sources-label").inner_text() == "Sources (2)"
    assert row.get_by_role("link").all_inner_texts() == ["Example A", "example.org"]
    assert "Click me" not in row.inner_text() and "Data" not in row.inner_text()
    assert page.locator("a[href^=javascript], a[href^=data]").count() == 0


def test_html_in_assistant_text_stays_text_and_images_load_only_when_clicked(
    page, chat_server, user, fake_model, model_id, site
):
    person, chat = user
    image = site.url("/cat.png?chat=secret")
    text = (
        'Look: <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script>\n\n'
        f"![a cat]({image}) and [a link](javascript:alert(1))"
    )
    fake_model.script(Reply.text(text))
    open_chat(page, chat_server, person, model_id)
    send(page, "Show me")
    wait_status(page, "completed")
    markdown = last_reply(page).locator(".markdown")
    assert markdown.locator("img, script").count() == 0
    assert '<img src=x onerror="window.pwned=1">' in markdown.inner_text()
    assert "<script>window.pwned=2</script>" in markdown.inner_text()
    assert page.evaluate("window.pwned") is None
    assert markdown.get_by_role("link").count() == 0
    placeholder = markdown.get_by_role("button", name=re.compile("Load image"))
    assert image in placeholder.inner_text()
    assert not [hit for hit in site.paths() if hit.startswith("/cat.png")]

    page.screenshot(path="/tmp/chat-image.png")
    placeholder.click()
    markdown.locator("img").wait_for()
    assert markdown.locator("img").get_attribute("src") == image
    expect(markdown.locator("img")).to_have_js_property("complete", True)
    assert [hit for hit in site.paths() if hit.startswith("/cat.png")] == ["/cat.png?chat=secret"]


def test_stop_cancels_a_streaming_reply_and_it_shows_as_stopped(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(Reply.forever("tick ", 0.05))
    open_chat(page, chat_server, person, model_id)
    send(page, "Count forever")
    expect(page.locator(".reply[aria-busy] .markdown")).to_contain_text("tick", timeout=WAIT_MS)
    page.screenshot(path="/tmp/chat-streaming.png")
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_status(page, "cancelled")
    fake_model.wait_for_disconnects(1)
    reply = last_reply(page)
    assert reply.locator(".badge-stopped").inner_text() == "Stopped"
    assert "tick" in reply.inner_text()
    assert page.get_by_role("button", name="Send").is_visible()
    conversation = page.url.split("#c=")[1]
    wait_until(
        lambda: "tick" in json.dumps(chat.conversation(conversation)["messages"]),
        10,
        "the partial text was not stored",
    )
    page.reload()
    wait_status(page, "cancelled")
    assert "tick" in last_reply(page).locator(".markdown").inner_text()
    assert last_reply(page).locator(".badge-stopped").inner_text() == "Stopped"


def focused(page) -> str:
    """The accessible name of the element that has the keyboard's focus ("" for the page)."""
    return page.evaluate(
        """() => { const e = document.activeElement;
          return e === document.body ? "" : (e.labels && e.labels[0] ? e.labels[0].innerText
            : e.getAttribute("aria-label") || e.innerText); }"""
    )


def tab_to(page, name: str, most: int = 8) -> None:
    """Press Tab until the element named ``name`` has the focus; AssertionError past ``most``,
    naming what each press reached."""
    reached = []
    for _ in range(most):
        page.keyboard.press("Tab")
        reached.append(focused(page))
        if reached[-1] == name:
            return
    raise AssertionError(f"{most} presses of Tab did not reach {name!r}: {reached}")


def test_the_chat_opens_ready_to_type_except_on_a_touch_screen(browser, chat_server, user):
    """After signing in, the first keys typed went nowhere: nothing had the focus."""
    person, chat = user
    for touch, typed in ((False, "Hello"), (True, "")):
        context = browser.new_context(has_touch=touch, is_mobile=touch)
        page = context.new_page()
        try:
            sign_in(page, chat_server.url, person)
            page.keyboard.type("Hello")
            assert page.get_by_label("Message", exact=True).input_value() == typed
        finally:
            context.close()


def test_the_keyboard_stays_in_the_composer_when_send_and_stop_swap(
    page, chat_server, user, fake_model, model_id
):
    """Send and Stop hide in turn; the focus on either fell to the page, so a keyboard user
    started again from the top of it after every message and every Stop."""
    person, chat = user
    # The second reply holds after its first piece until the Tab key has reached Stop, so the
    # turn cannot end (and Stop hide) while the keys are still on their way, however slow.
    reached_stop = threading.Event()
    held = Reply.text("Done.", chunks=2, pause_after=(1, 60.0), release=reached_stop)
    fake_model.script(Reply.forever("tick ", 0.05), held)
    open_chat(page, chat_server, person, model_id)
    box = page.get_by_label("Message", exact=True)
    box.fill("Count forever")
    tab_to(page, "Send")
    page.keyboard.press("Enter")
    expect(page.locator(".reply[aria-busy] .markdown")).to_contain_text("tick", timeout=WAIT_MS)
    assert focused(page) == "Message"

    tab_to(page, "Stop")
    page.keyboard.press("Enter")
    wait_status(page, "cancelled")
    assert focused(page) == "Message"

    page.keyboard.type("Then finish")
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Stop", exact=True)).to_be_visible(timeout=WAIT_MS)
    tab_to(page, "Stop")
    reached_stop.set()
    wait_status(page, "completed")
    assert focused(page) == "Message"


def test_a_page_opened_while_a_turn_runs_follows_it(page, chat_server, user, fake_model, model_id):
    person, chat = user
    fake_model.script(Reply.forever("beat ", 0.05))
    conversation = chat.new_conversation()
    started = chat.start(conversation, "Keep going", model_id)
    fake_model.wait_for_requests(1)
    open_chat(page, chat_server, person, model_id, f"/#c={conversation}")
    page.wait_for_selector(".reply[aria-busy=true] .markdown", timeout=WAIT_MS)
    assert "beat" in last_reply(page).inner_text()
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_status(page, "cancelled")
    assert chat.turn(started["turn"]["id"])["status"] == "cancelled"


def test_a_reply_that_ended_before_the_page_read_it_is_not_drawn_running_again(
    page, chat_server, user, fake_model, model_id
):
    """The page reads the conversation as it sends; a turn that has ended by then is shown as
    stored, and its events are not followed: replayed from the start, they would draw the
    answer back to "Writing…" (and empty) until they ended again."""
    person, chat = user
    fake_model.script(Reply.text("A quick answer."))
    open_chat(page, chat_server, person, model_id)
    streams = []
    page.route("**/api/turns/*/events", lambda route: streams.append(route))  # held: see below

    def read_once_ended(route):
        conversation = route.request.url.rsplit("/", 1)[1]
        wait_until(
            lambda: not chat.conversation(conversation)["openTurnId"], HANG_SECONDS, "no end"
        )
        route.continue_()

    page.route("**/api/conversations/*", read_once_ended)
    # The stream of a turn the page read as ended is closed, unread: it would replay the turn.
    with page.expect_event(
        "requestfailed", lambda request: "/events" in request.url, timeout=WAIT_MS
    ) as closed:
        send(page, "Hello")
    assert closed.value.url == streams[0].request.url
    expect(last_reply(page)).to_have_attribute("data-status", "completed", timeout=WAIT_MS)
    expect(last_reply(page)).to_contain_text("A quick answer.")


def test_a_failed_turn_shows_its_error_and_try_again_answers_on_a_new_branch(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(Reply.error(401), Reply.text("Second try worked."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Answer me")
    wait_status(page, "failed")
    conversation = page.url.split("#c=")[1]
    messages = chat.conversation(conversation)["messages"]
    failed = [m for m in messages if m["role"] == "assistant"]
    assert [m["status"] for m in failed] == ["failed"]
    error = last_reply(page).locator(".reply-error")
    assert error.get_attribute("role") == "alert"
    assert "key" in error.inner_text().lower()  # the provider refused the key: said in words
    page.screenshot(path="/tmp/chat-failed.png")

    error.get_by_role("button", name="Try again").click()
    # The page may read the conversation as the turn ends and follow it to its end again,
    # "Writing..." a moment: the reply it settles on is what is asserted.
    reply = page.locator(".message-assistant[data-status=completed]").last
    expect(reply).to_contain_text("Second try worked.", timeout=WAIT_MS)
    reply = last_reply(page)
    assert reply.locator(".branch-position").inner_text() == "2/2"
    assert page.locator(".message-user").count() == 1
    reply.get_by_role("button", name="Previous version").click()
    assert last_reply(page).get_attribute("data-status") == "failed"
    assert last_reply(page).locator(".branch-position").inner_text() == "1/2"
    last_reply(page).get_by_role("button", name="Next version").click()
    assert "Second try worked." in last_reply(page).inner_text()


def test_regenerate_and_edit_make_branches_the_page_switches_between(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(
        Reply.text("First answer."),
        Reply.text("Second answer."),
        Reply.text("Answer to the follow-up."),
        Reply.text("Answer to the edit."),
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Question")
    wait_status(page, "completed")
    last_reply(page).get_by_role("button", name="Regenerate this reply").click()
    page.locator(".message-assistant .branch-position").first.wait_for(timeout=WAIT_MS)
    expect(last_reply(page)).to_contain_text("Second answer.", timeout=WAIT_MS)
    wait_status(page, "completed")  # of the reply holding the second answer
    assert last_reply(page).locator(".branch-switch").inner_text().split() == ["‹", "2/2", "›"]

    send(page, "Follow-up")
    expect(page.locator(".message-assistant[data-status=completed]")).to_have_count(
        2, timeout=WAIT_MS
    )
    follow_up = page.locator(".message-user").nth(1)
    follow_up.get_by_role("button", name="Edit this message").click()
    page.get_by_label("Edited message").fill("Edited follow-up")
    page.get_by_role("button", name="Send edit").click()
    page.locator(".message-assistant", has_text="Answer to the edit.").first.wait_for(
        timeout=WAIT_MS
    )
    edited = page.locator(".message-user").nth(1)
    assert "Edited follow-up" in edited.inner_text()
    assert edited.locator(".branch-position").inner_text() == "2/2"
    edited.get_by_role("button", name="Previous version").click()
    assert "Follow-up" in page.locator(".message-user").nth(1).inner_text()
    assert "Answer to the follow-up." in last_reply(page).inner_text()
    # The follow-up continued the second answer, the branch shown when it was sent.
    assert "Second answer." in page.locator(".message-assistant").first.inner_text()
    requests = fake_model.chat_requests()
    assert "Second answer." in json.dumps(requests[2].json["messages"])


def test_an_attached_file_is_sent_with_the_message(page, chat_server, user, fake_model, model_id):
    person, chat = user
    fake_model.script(Reply.text("Read it."))
    open_chat(page, chat_server, person, model_id)
    page.locator("#file-input").set_input_files(
        files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"The code is 4417."}]
    )
    chip = page.locator("#attachment-chips .file-chip")
    page.get_by_role("button", name="Remove notes.txt").wait_for()
    assert "notes.txt" in chip.inner_text()
    send(page, "What is the code?")
    wait_status(page, "completed")
    assert "notes.txt" in page.locator(".message-user .file-chip").inner_text()
    assert page.locator("#attachment-chips .file-chip").count() == 0
    assert "The code is 4417." in json.dumps(fake_model.chat_requests()[0].json["messages"])


def test_conversations_are_listed_newest_first_renamed_and_deleted(
    page, chat_server, user, model_id
):
    person, chat = user
    first = chat.new_conversation()
    chat.call("PATCH", f"/api/conversations/{first}", json={"title": "Older"})
    second = chat.new_conversation()
    chat.call("PATCH", f"/api/conversations/{second}", json={"title": "Newer"})
    open_chat(page, chat_server, person, model_id)
    links = page.locator(".conversation-link")
    assert links.all_inner_texts() == ["Newer", "Older"]

    page.get_by_role("link", name="Older").hover()  # the buttons show on hover or focus
    page.get_by_role("button", name="Rename Older").click()
    page.get_by_label("New title for Older").fill("Renamed")
    page.get_by_label("New title for Older").press("Enter")
    page.get_by_role("link", name="Renamed").wait_for()
    assert chat.conversation(first)["title"] == "Renamed"

    page.get_by_role("link", name="Newer").click()
    page.wait_for_selector("#chat-title:text('Newer')")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("link", name="Newer").focus()
    page.get_by_role("button", name="Delete Newer").click()
    expect(page.locator(".conversation-link")).to_have_count(1)
    assert chat.call("GET", f"/api/conversations/{second}").status_code == 404
    assert page.locator("#chat-title").inner_text() == "New chat"


def test_the_browser_tab_is_named_after_the_open_conversation(page, chat_server, user, model_id):
    """Every tab and history entry of the chat read "Chat · Lookout", whichever was open."""
    person, chat = user
    opened = chat.new_conversation()
    chat.call("PATCH", f"/api/conversations/{opened}", json={"title": "Tide tables"})
    open_chat(page, chat_server, person, model_id)
    expect(page).to_have_title("Chat · Lookout")
    page.get_by_role("link", name="Tide tables").click()
    expect(page).to_have_title("Tide tables · Lookout")

    page.get_by_role("button", name="Rename Tide tables").click()
    page.get_by_label("New title for Tide tables").fill("Spring tides")
    page.get_by_label("New title for Tide tables").press("Enter")
    expect(page).to_have_title("Spring tides · Lookout")
    page.get_by_role("button", name="New chat").click()
    expect(page).to_have_title("Chat · Lookout")


def test_an_api_error_is_shown_as_its_sentence(page, chat_app, chat_server, user, model_id):
    person, chat = user
    open_chat(page, chat_server, person, model_id)
    with chat_app.app_context():
        db.session.execute(db.delete(Provider).filter_by(name=model_id.split("/")[0]))
        db.session.commit()
    send(page, "Anyone there?")
    alert = page.locator("#chat-error")
    alert.wait_for()
    assert alert.inner_text() == (
        f"The model {model_id} is not installed: an administrator may have removed it. "
        "Pick another model from the list."
    )
    # Regression: a refused first message left an empty "Untitled conversation" behind.
    assert page.locator(".conversation-link").count() == 0 and "#c=" not in page.url
    assert chat.call("GET", "/api/conversations").json()["conversations"] == []


def test_the_page_fits_a_phone_and_its_conversations_open_from_a_button(
    browser, chat_server, user, fake_model, model_id
):
    person, chat = user
    fake_model.script(Reply.text("A short answer for a small screen."))
    context = browser.new_context(viewport={"width": 380, "height": 740})
    page = context.new_page()
    try:
        open_chat(page, chat_server, person, model_id)
        send(page, "Small screen?")
        wait_status(page, "completed")
        assert page.evaluate("document.documentElement.scrollWidth") <= 380
        assert not page.locator("#chat-sidebar").is_visible()
        page.screenshot(path="/tmp/chat-phone.png")
        page.get_by_role("button", name="Conversations").click()
        assert page.get_by_role("link", name="Small screen?").is_visible()
        page.screenshot(path="/tmp/chat-phone-list.png")
        page.get_by_role("button", name="Close the list").click()
        assert not page.locator("#chat-sidebar").is_visible()
        assert (
            page.get_by_role("button", name="Conversations").get_attribute("aria-expanded")
            == "false"
        )
    finally:
        context.close()


def test_a_message_sent_after_the_session_ended_is_kept_through_signing_in_again(
    page, chat_app, chat_server, user, fake_model, model_id
):
    """Signed out from another browser, the page answered with the API's sentence for programs
    ("send an API token as 'Authorization: Bearer <token>'"), and signing in again lost the
    message."""
    person, chat = user
    fake_model.script(Reply.text("Welcome back."))
    open_chat(page, chat_server, person, model_id)
    with chat_app.app_context():
        accounts.end_sessions(db.session.get(User, person.id))  # "Sign out everywhere"
    send(page, "A long and careful question")
    expect(page.locator("#chat-error")).to_have_text(
        "You are signed out, so this message was not sent. Reload the page to sign in again; "
        "what you wrote will still be here."
    )
    page.reload()
    assert "/sign-in" in page.url
    open_chat(page, chat_server, person, model_id)
    box = page.get_by_label("Message", exact=True)
    assert box.input_value() == "A long and careful question"
    box.press("Enter")
    wait_status(page, "completed")
    assert box.input_value() == ""
    page.reload()
    wait_status(page, "completed")
    assert box.input_value() == ""


def test_each_conversation_keeps_its_own_draft_through_a_reload(
    page, chat_server, user, fake_model, model_id
):
    """Regression: the draft belonged to the tab, so words written in one conversation showed
    in every other one opened, an Enter away from being sent there."""
    person, _ = user
    fake_model.script(Reply.text("Twice a day, mostly."))
    open_chat(page, chat_server, person, model_id)
    box = page.get_by_label("Message", exact=True)
    send(page, "How often are the tides?")
    wait_status(page, "completed")
    expect(box).to_have_value("")
    box.fill("And why twice?")
    page.get_by_role("button", name="New chat").click()
    expect(box).to_have_value("")
    box.fill("Something else entirely")
    page.get_by_role("link", name="How often are the tides?").click()
    expect(box).to_have_value("And why twice?")
    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    expect(box).to_have_value("And why twice?")
    page.get_by_role("button", name="New chat").click()
    expect(box).to_have_value("Something else entirely")


def test_signing_in_again_reopens_the_conversation_with_its_draft(
    page, chat_app, chat_server, user, fake_model, model_id
):
    """The page says what was written will still be there after signing in again: the browser
    keeps #c=<id> through the sign-in form's post and redirect, so the conversation opens again
    with its own draft."""
    person, chat = user
    conversation = chat.new_conversation()
    chat.call("PATCH", f"/api/conversations/{conversation}", json={"title": "Tide tables"})
    open_chat(page, chat_server, person, model_id, path=f"/#c={conversation}")
    page.wait_for_selector("#chat-title:text('Tide tables')")
    box = page.get_by_label("Message", exact=True)
    box.fill("Half-written question")
    with chat_app.app_context():
        accounts.end_sessions(db.session.get(User, person.id))  # "Sign out everywhere"
    page.reload()
    assert "/sign-in" in page.url
    page.get_by_label("Name").fill(person.name)
    page.get_by_label("Password").fill("password")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{chat_server.url}/#c={conversation}")
    page.wait_for_selector("#chat-title:text('Tide tables')")
    expect(box).to_have_value("Half-written question")


def test_a_message_no_worker_takes_says_why_it_waits_and_what_to_do(
    page, app, live_server, make_user
):
    """With every worker busy or none running, the reply said "Waiting for a worker…" for up
    to TURN_QUEUE_WAIT_SECONDS (ten minutes), and nothing more."""
    with app.app_context():
        db.session.add(Provider(name="p", base_url="http://127.0.0.1:9/v1", models=[{"name": "m"}]))
        db.session.commit()
    sign_in(page, live_server.url, make_user("alice"))  # no worker serves this app
    send(page, "Anyone there?")
    waiting = last_reply(page).locator(".writing")
    expect(waiting).to_have_text("Waiting for a worker…")
    expect(waiting).to_have_text(
        "Still waiting for a worker: every one is busy, or none is running. Wait, or press Stop "
        "to give up (your message stays); an administrator can see the workers in Admin → "
        "Health.",
        timeout=WAIT_MS,
    )
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.locator(".message-user .user-text")).to_have_text("Anyone there?")


def test_without_models_the_page_says_an_admin_must_add_a_provider(page, live_server, make_user):
    """The admin's link went to the admin area's front page, one click short of the form."""
    sign_in(page, live_server.url, make_user("root", admin=True))
    notice = page.locator("#chat-empty .notice")
    assert "An administrator needs to add a model provider." in notice.inner_text()
    assert page.get_by_role("button", name="Send").is_disabled()
    page.screenshot(path="/tmp/chat-no-models.png")
    notice.get_by_role("link", name="Add a provider in Admin → Providers").click()
    page.get_by_role("button", name="Add provider").wait_for()
    assert page.url == f"{live_server.url}/admin/providers"


def test_a_user_without_models_is_not_sent_to_the_admin_area(page, live_server, make_user):
    sign_in(page, live_server.url, make_user("alice"))
    notice = page.locator("#chat-empty .notice")
    assert "An administrator needs to add a model provider." in notice.inner_text()
    assert notice.get_by_role("link").count() == 0


def test_the_first_message_can_be_edited_and_a_failure_keeps_its_reason_after_reload(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    fake_model.script(Reply.text("Answer one."), Reply.error(401))
    open_chat(page, chat_server, person, model_id)
    send(page, "Frist question")
    wait_status(page, "completed")
    page.locator(".message-user").first.get_by_role("button", name="Edit this message").click()
    page.get_by_label("Edited message").fill("First question")
    page.get_by_role("button", name="Send edit").click()
    wait_status(page, "failed")
    first = page.locator(".message-user").first
    assert "First question" in first.inner_text()
    assert first.locator(".branch-position").inner_text() == "2/2"
    page.reload()
    page.wait_for_selector(".reply-error", timeout=WAIT_MS)
    assert "rejected its API key" in page.locator(".reply-error").inner_text()
