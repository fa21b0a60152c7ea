"""A reply on the chat page, in Chromium: code blocks, Copy, the page-reading card, Try again and
Continue."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import last_reply, open_chat, send, sign_in, wait_status
from tests.support.fake_model import Reply

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
