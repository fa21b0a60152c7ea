"""The chat page's composer and a turn's end, in Chromium against a real worker and fake model."""

from __future__ import annotations

import pytest

from tests.support.chat_page import last_reply, open_chat, send, wait_status
from tests.support.fake_model import Reply

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

SLOW_FRAMES_AND_READS = """
window.requestAnimationFrame = callback => setTimeout(callback, 300);
const quickFetch = window.fetch;
window.fetch = (url, init) => url.startsWith("/api/conversations/") && init.method === "GET"
  ? new Promise(done => setTimeout(done, 1000)).then(() => quickFetch(url, init))
  : quickFetch(url, init);
"""


def test_a_streamed_turn_ends_without_a_script_error(page, chat_server, user, fake_model, model_id):
    """Regression: a TypeError at the end of most turns (state.live read after it was cleared).

    It struck when the frame drawing the last text came while the ended turn's conversation was
    being read again; frames and that read are slowed here, as on a busy machine, so it always does.
    """
    person, _chat = user
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(SLOW_FRAMES_AND_READS)
    fake_model.script(
        Reply.text("One, two, three, four, five.", chunks=10, delay=0.02),
        Reply.text("Six, seven, eight.", chunks=8, delay=0.02),
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Count")
    wait_status(page, "completed")
    send(page, "More")
    page.locator(".message-assistant[data-status=completed]").nth(1).wait_for()
    page.wait_for_timeout(1500)
    assert "Six, seven, eight." in last_reply(page).inner_text()
    assert errors == []


def test_send_is_disabled_until_there_is_something_to_send(page, chat_server, user, model_id):
    """Regression: an empty Send looked clickable."""
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    send_button = page.get_by_role("button", name="Send")
    box = page.get_by_label("Message", exact=True)
    assert send_button.is_disabled()
    box.fill("   \n ")
    assert send_button.is_disabled()
    box.fill("A question")
    assert send_button.is_enabled()
    box.fill("")
    assert send_button.is_disabled()


def test_attachments_show_a_drawn_paper_clip_not_an_emoji(page, chat_server, user, model_id):
    """Regression: the paper-clip emoji showed as a box where no emoji font exists."""
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    attach = page.get_by_role("button", name="Attach file")
    assert attach.locator("svg.icon-paperclip").count() == 1
    page.locator("#file-input").set_input_files(
        files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"Some notes."}]
    )
    page.get_by_role("button", name="Remove notes.txt").wait_for()
    chip = page.locator("#attachment-chips .file-chip")
    assert chip.locator("svg.icon-paperclip").is_visible()
    assert "📎" not in page.locator("body").inner_text()
