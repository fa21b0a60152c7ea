"""The chat page's composer and a turn's end, in Chromium against a real worker and fake model."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import WAIT_MS, last_reply, open_chat, send, wait_status
from tests.support.fake_model import Reply

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

# window.slowWork counts the slowed frames and conversation reads not yet handled (a read is
# handled once the page's code that reads its body has run): the test waits for none to be
# left, rather than for a time that a busy machine may outlast.
SLOW_FRAMES_AND_READS = """
window.slowWork = 0;
const done = () => setTimeout(() => { window.slowWork -= 1; }, 0);
window.requestAnimationFrame = callback => {
  window.slowWork += 1;
  return setTimeout(() => { try { callback(); } finally { done(); } }, 300);
};
const quickFetch = window.fetch;
const slowRead = (url, init) => {
  window.slowWork += 1;
  return new Promise(wait => setTimeout(wait, 1000)).then(() => quickFetch(url, init)).then(
    response => {
      const text = response.text.bind(response);
      response.text = () => text().finally(done);
      return response;
    },
    error => { done(); throw error; },
  );
};
window.fetch = (url, init) => url.startsWith("/api/conversations/") && init.method === "GET"
  ? slowRead(url, init)
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
    expect(last_reply(page)).to_contain_text("Six, seven, eight.", timeout=WAIT_MS)
    wait_status(page, "completed")
    # Every slowed frame and read has run (the end's read of the conversation, the frames that
    # draw it): where the error struck. Polled by a timer, since the page's frames are slowed.
    page.wait_for_function("window.slowWork === 0", polling=50, timeout=WAIT_MS)
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


DROP = """
([selector, files]) => {
  const transfer = new DataTransfer();
  for (const [name, type, text] of files) transfer.items.add(new File([text], name, {type}));
  const target = document.querySelector(selector);
  for (const name of ["dragenter", "dragover", "drop"]) {
    const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
    target.dispatchEvent(new DragEvent(name, init));
  }
}
"""


def test_a_file_dropped_on_the_composer_is_attached_and_sent(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    fake_model.script(Reply.text("Read both."))
    open_chat(page, chat_server, person, model_id)
    page.evaluate(
        DROP,
        [
            "#message-input",  # onto the box itself: the drop reaches the composer
            [
                ["notes.txt", "text/plain", "The code is 4417."],
                ["more.md", "text/markdown", "# More"],
            ],
        ],
    )
    page.get_by_role("button", name="Remove notes.txt").wait_for()
    page.get_by_role("button", name="Remove more.md").wait_for()
    assert "dropping" not in page.locator("#composer").get_attribute("class")
    send(page, "What is the code?")
    wait_status(page, "completed")
    sent = fake_model.chat_requests()[0].json["messages"]
    assert "The code is 4417." in str(sent) and "# More" in str(sent)
    assert page.locator(".message-user .file-chip").all_inner_texts() == ["notes.txt", "more.md"]


def test_a_dropped_file_lookout_cannot_read_says_so_like_the_paper_clip(
    page, chat_server, user, model_id
):
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    page.evaluate(DROP, ["#composer", [["song.mp3", "audio/mpeg", "ID3"]]])
    error = page.locator("#chat-error")
    error.wait_for()
    dropped = error.inner_text()
    assert page.locator("#attachment-chips .file-chip").count() == 0
    page.evaluate("document.querySelector('#chat-error').hidden = true")
    page.locator("#file-input").set_input_files(
        files=[{"name": "song.mp3", "mimeType": "audio/mpeg", "buffer": b"ID3"}]
    )
    error.wait_for()
    assert "song.mp3" in dropped and "cannot read" in dropped
    assert error.inner_text() == dropped


def test_a_refused_file_s_sentence_goes_once_another_file_is_attached(
    page, chat_server, user, model_id
):
    """The refusal stayed under the message box beside the next file's chip, as if that file
    had been refused too."""
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    page.locator("#file-input").set_input_files(
        files=[{"name": "photo.png", "mimeType": "image/png", "buffer": b"\x89PNG"}]
    )
    error = page.locator("#chat-error")
    expect(error).to_contain_text("photo.png is of type image/png")
    page.locator("#file-input").set_input_files(
        files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"The code is 4417."}]
    )
    page.get_by_role("button", name="Remove notes.txt").wait_for()
    expect(error).to_be_hidden()


def test_a_file_dropped_beside_the_composer_does_not_replace_the_chat(
    page, chat_server, user, model_id
):
    person, _chat = user
    open_chat(page, chat_server, person, model_id)
    url = page.url
    page.evaluate(DROP, ["#chat-log", [["notes.txt", "text/plain", "x"]]])
    prevented = page.evaluate(
        "() => { const e = new DragEvent('drop', {dataTransfer: new DataTransfer(), bubbles: true,"
        " cancelable: true}); e.dataTransfer.items.add(new File(['x'], 'a.txt'));"
        " document.querySelector('#chat-log').dispatchEvent(e); return e.defaultPrevented; }"
    )
    assert prevented and page.url == url
    assert page.locator("#attachment-chips .file-chip").count() == 0
