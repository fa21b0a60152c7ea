"""A reply on the chat page, in Chromium: code blocks, Copy, the page-reading card, Try again and
Continue."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import WAIT_MS, last_reply, open_chat, send, sign_in, wait_status
from tests.support.fake_model import Reply
from tests.support.turns import stored_conversation

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

CODE_REPLY = (
    "Here is the function:\n\n"
    "```python\ndef add(a, b):\n    return a + b  # the sum\n```\n\n"
    "And a plain block:\n\n```\n<b>not bold</b>\n```"
)
RECORD_CSP = (
    "window.cspViolations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def clipboard(page) -> str:
    return page.evaluate("navigator.clipboard.readText()")


def test_code_blocks_are_labelled_highlighted_and_copied_exactly(
    page, chat_server, user, fake_model, model_id, tmp_path
):
    person, _chat = user
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.add_init_script(RECORD_CSP)
    fake_model.script(Reply.text(CODE_REPLY))
    open_chat(page, chat_server, person, model_id)
    send(page, "Write add")
    wait_status(page, "completed")
    python, plain = last_reply(page).locator(".code-block").all()
    assert python.locator(".code-language").inner_text() == "python"
    assert python.locator(".hljs-keyword").first.inner_text() == "def"
    assert python.locator(".hljs-comment").inner_text() == "# the sum"
    assert plain.locator(".code-language").inner_text() == "text"
    assert plain.locator("b").count() == 0 and "<b>not bold</b>" in plain.inner_text()
    page.screenshot(path=str(tmp_path / "code-blocks.png"))

    copy = python.get_by_role("button", name="Copy the python code")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard(page) == "def add(a, b):\n    return a + b  # the sum"
    plain.get_by_role("button", name="Copy the text code").click()
    expect(plain.get_by_role("button", name="Copy the text code")).to_have_text("Copied")
    assert clipboard(page) == "<b>not bold</b>"
    assert page.evaluate("window.cspViolations") == []


def test_copy_on_a_reply_copies_its_text_as_written(page, chat_server, user, fake_model, model_id):
    person, _chat = user
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fake_model.script(
        Reply.tool_calls([("echo", {"text": "ping"})]),
        Reply.text("The answer is **42**.\n\n- one\n- two"),
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Answer")
    wait_status(page, "completed")
    copy = last_reply(page).get_by_role("button", name="Copy this reply")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard(page) == "The answer is **42**.\n\n- one\n- two"


def test_highlighting_is_loaded_by_the_chat_page_only(page, chat_server, user):
    person, _chat = user
    loaded = []
    page.on("request", lambda r: loaded.append(r.url) if "vendor/highlight" in r.url else None)
    sign_in(page, chat_server.url, person)
    assert [url.rsplit("/", 1)[1] for url in loaded] == ["highlight.min.js"]
    loaded.clear()
    page.goto(chat_server.url + "/settings")
    page.wait_for_load_state("networkidle")
    assert loaded == []
    assert page.evaluate("typeof window.hljs") == "undefined"


def read(call_id: str, url: str, offset: int, next_offset: int | None, title="The Guide") -> list:
    """The parts of one web_fetch call of a 30,000-character page and its result."""
    output = {"url": url, "title": title, "content": f"Text from {offset}.", "offset": offset}
    if next_offset is not None:
        output["nextOffset"] = next_offset
    output["totalCharacters"] = 30000
    return [
        {
            "type": "tool-call",
            "id": call_id,
            "name": "web_fetch",
            "input": {"url": url, "offset": offset},
        },
        {
            "type": "tool-result",
            "callId": call_id,
            "name": "web_fetch",
            "outcome": "ok",
            "output": output,
        },
    ]


def test_reading_a_page_shows_the_site_the_part_and_the_title(
    page, chat_app, chat_server, user, tmp_path
):
    person, _chat = user
    url = "https://example.com/guide"
    parts = (
        read("c1", url, 0, 9800)
        + read("c2", url, 9800, 19500)
        + read("c3", url, 19500, None)
        + [
            {
                "type": "tool-call",
                "id": "c4",
                "name": "web_fetch",
                "input": {"url": "https://down.example/x"},
            },
            {
                "type": "tool-result",
                "callId": "c4",
                "name": "web_fetch",
                "outcome": "error",
                "error": "The page could not be fetched: the server answered 503.",
            },
            {
                "type": "tool-call",
                "id": "c5",
                "name": "web_fetch",
                "input": {"url": "https://slow.example/page"},
            },
            {"type": "text", "text": "The guide says three things."},
        ]
    )
    conversation = stored_conversation(chat_app, person.id, "Reading", parts)
    sign_in(page, chat_server.url, person, f"/#c={conversation}")
    cards = page.locator(".tool-card[data-tool=web_fetch]")
    cards.first.wait_for()
    assert cards.locator(".tool-name").all_inner_texts() == [
        "Reading example.com — part 1 of 3",
        "Reading example.com — part 2 of 3",
        "Reading example.com — part 3 of 3",
        "Reading down.example",
        "Reading slow.example",  # no result yet: the site from the call's URL
    ]
    assert cards.nth(4).locator(".tool-outcome").inner_text() == "Running…"
    assert cards.nth(4).locator(".tool-summary").inner_text() == "https://slow.example/page"
    assert cards.nth(0).locator(".tool-summary").inner_text() == "The Guide"
    assert cards.nth(0).locator(".tool-outcome").inner_text() == "Done"
    assert "web_fetch" not in page.locator(".messages").inner_text()
    assert "{" not in cards.nth(1).inner_text()
    cards.nth(1).get_by_text("Show the output").click()
    assert cards.nth(1).locator(".tool-output").inner_text() == "Text from 9800."
    failed = cards.nth(3)
    assert failed.locator(".tool-outcome").inner_text() == "Failed"
    failed.get_by_text("Show the error").click()
    assert "answered 503" in failed.locator(".tool-output").inner_text()
    page.screenshot(path=str(tmp_path / "reading-cards.png"))


def stop_when_it_writes(page, text: str) -> None:
    """Press Stop once the live reply shows ``text``, and wait for the stopped reply."""
    expect(page.locator(".reply[aria-busy] .markdown")).to_contain_text(text, timeout=WAIT_MS)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_status(page, "cancelled")


def test_a_stopped_reply_can_be_tried_again(page, chat_server, user, fake_model, model_id):
    person, _chat = user
    fake_model.script(Reply.forever("tick ", 0.05), Reply.text("A fresh answer."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Count")
    stop_when_it_writes(page, "tick")
    stopped = last_reply(page)
    expect(stopped.get_by_role("button", name="Continue")).to_be_visible(timeout=WAIT_MS)

    stopped.get_by_role("button", name="Try again").click()
    expect(last_reply(page)).to_have_attribute("data-status", "completed", timeout=WAIT_MS)
    expect(last_reply(page)).to_contain_text("A fresh answer.")
    assert last_reply(page).locator(".branch-position").inner_text() == "2/2"
    last_reply(page).get_by_role("button", name="Previous version").click()
    older = last_reply(page)
    assert older.get_attribute("data-status") == "cancelled"
    # Only the newest reply goes on: this one can be asked again, not continued.
    expect(older.get_by_role("button", name="Try again")).to_be_visible()
    assert older.get_by_role("button", name="Continue").count() == 0


def test_continue_writes_on_at_the_end_of_the_same_reply(
    page, chat_server, user, fake_model, model_id, tmp_path
):
    """Issue 25: Continue posted a visible message and ran a whole new turn with tools, the
    answer split over two replies."""
    person, chat = user
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    fake_model.script(
        Reply.forever("tick ", 0.05), Reply.forever("tock ", 0.05), Reply.text("and the rest.")
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Count")
    stop_when_it_writes(page, "tick")
    last_reply(page).get_by_role("button", name="Continue").click()
    live = page.locator(".reply[aria-busy] .markdown")
    expect(live).to_contain_text("tock", timeout=WAIT_MS)
    page.reload()  # followed again, the reply shows what it held before the continuation too
    expect(live).to_contain_text("tick tock tock", timeout=WAIT_MS)
    stop_when_it_writes(page, "tock")  # a continuation is stopped like any answer
    assert page.locator(".message-assistant").count() == 1
    assert "tick tock" in last_reply(page).locator(".markdown").inner_text()

    last_reply(page).get_by_role("button", name="Continue").click()
    wait_status(page, "completed")
    assert page.locator(".message-user").count() == 1  # no message of the user's was added
    assert page.locator(".message-assistant").count() == 1
    page.screenshot(path=str(tmp_path / "continued.png"))
    copy = last_reply(page).get_by_role("button", name="Copy this reply")
    copy.click()
    expect(copy).to_have_text("Copied")
    copied = clipboard(page)
    # One answer, in the order it was written: however many ticks came before the first Stop
    # (one, when Stop lands between two tokens), then the tocks, then the rest.
    assert re.fullmatch(r"(tick )+(tock )+and the rest\.", copied), copied
    sent = fake_model.chat_requests()[-1].json
    assert "tools" not in sent
    assert sent["messages"][-2] == {"role": "assistant", "content": copied[: -len("and the rest.")]}

    page.reload()
    wait_status(page, "completed")
    assert page.locator(".message-assistant").count() == 1
    assert last_reply(page).locator(".markdown").inner_text().strip() == copied
    conversation = page.url.split("#c=")[1]
    assert len(chat.conversation(conversation)["messages"]) == 2


def test_a_failed_reply_that_wrote_something_offers_continue(page, chat_app, chat_server, user):
    person, _chat = user
    parts = [{"type": "text", "text": "The first half of an answer"}]
    conversation = stored_conversation(chat_app, person.id, "Cut off", parts, status="failed")
    sign_in(page, chat_server.url, person, f"/#c={conversation}")
    error = page.locator(".reply-error")
    error.wait_for()
    assert error.get_by_role("button").all_inner_texts() == ["Copy", "Try again", "Continue"]
    assert "The first half of an answer" in last_reply(page).locator(".markdown").inner_text()


def test_copy_works_where_the_clipboard_api_is_missing(
    page, chat_server, user, fake_model, model_id
):
    """Browsers give navigator.clipboard only to HTTPS and localhost; over plain HTTP to a
    server elsewhere, Copy still copies (through a selected text box)."""
    person, _chat = user
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.add_init_script("Object.defineProperty(window, 'isSecureContext', {value: false});")
    fake_model.script(Reply.text("Plain words to copy."))
    open_chat(page, chat_server, person, model_id)
    send(page, "Say")
    wait_status(page, "completed")
    copy = last_reply(page).get_by_role("button", name="Copy this reply")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert clipboard(page) == "Plain words to copy."
    assert page.locator("textarea.visually-hidden").count() == 0  # the helper box is gone
