"""The chat page keeps what the user saw when a turn fails or is stopped, in a real Chromium.

Shares the chat page module's set-up (tests/webapp/conftest.py): one app, worker and server;
each test has its own fake model and user.
"""

from __future__ import annotations

import pytest

from tests.support.chat_page import WAIT_MS, last_reply, open_chat, send, wait_status
from tests.support.fake_model import Reply

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

ECHO = Reply.tool_calls([("echo", {"text": "ping"})])


def test_after_stop_the_reply_shows_its_text_and_finished_tool_card_at_once(
    page, chat_server, user, fake_model, model_id
):
    """Regression: for 0.5-3 s after Stop the reply showed its last tool card as "Running…"
    and no text, then corrected itself."""
    person, _chat = user
    fake_model.script(ECHO, Reply.forever("more ", 0.05))
    open_chat(page, chat_server, person, model_id)
    send(page, "Echo, then talk")
    live = page.locator(".reply[aria-busy] .markdown")
    live.wait_for(timeout=WAIT_MS)
    page.wait_for_function(
        "() => document.querySelector('.reply[aria-busy] .markdown').innerText.length > 20",
        timeout=WAIT_MS,
    )
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_status(page, "cancelled")
    reply = last_reply(page)  # read at once: no wait for a later correction
    card = reply.locator(".tool-card[data-tool=echo]")
    assert card.locator(".tool-outcome").inner_text() == "Done"
    assert "Running" not in reply.inner_text()
    assert reply.locator(".markdown").inner_text().startswith("more more more")
    assert reply.locator(".badge-stopped").inner_text() == "Stopped"


def test_a_reply_cut_off_after_a_tool_step_keeps_its_card_and_text_after_reload(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    fake_model.script(ECHO, Reply.text("The echo came back as ping", then="close"))
    open_chat(page, chat_server, person, model_id)
    send(page, "Echo, then explain")
    wait_status(page, "failed")
    for _ in range(2):  # as it ended, then after a reload
        reply = last_reply(page)
        assert reply.locator(".tool-card[data-tool=echo] .tool-outcome").inner_text() == "Done"
        assert reply.locator(".markdown").inner_text() == "The echo came back as ping"
        assert (
            reply.locator(".reply-error")
            .inner_text()
            .startswith("The answer above was cut off. The provider")
        )
        page.reload()
        wait_status(page, "failed")
