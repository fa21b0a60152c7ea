"""The chat page over a limit, in a real Chromium: it says the sentence of a 429, and a reply
whose event stream the server closed for the user's newest one follows on when focused again.

Shares the chat page module's set-up (tests/webapp/conftest.py).
"""

from __future__ import annotations

import pytest

from core.extensions import db
from core.limits import set_overrides
from core.models import Conversation, Turn
from tests.support.chat_page import WAIT_MS, open_chat, send
from tests.support.fake_model import Reply

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

LIVE_TEXT = "() => (document.querySelector('.reply[aria-busy] .markdown') || {}).innerText || ''"


def limit(chat_app, user_id: str, **values: int) -> None:
    """Set the user's own limits."""
    with chat_app.app_context():
        set_overrides(user_id, values)
        db.session.commit()


def running_turn(chat_app, user_id: str) -> str:
    """Return the id of the user's one open turn."""
    with chat_app.app_context():
        return db.session.scalar(
            db.select(Turn.id)
            .join(Conversation, Conversation.id == Turn.conversation_id)
            .filter(Conversation.owner_id == user_id, Turn.status.in_(("queued", "running")))
        )


def test_the_page_says_why_a_message_over_the_limit_was_refused(
    page, chat_app, chat_server, user, fake_model, model_id
):
    person, chat = user
    limit(chat_app, person.id, openTurns=1)
    fake_model.default = Reply.hang()
    running = chat.start(chat.new_conversation(), "Busy", model_id)["turn"]["id"]
    open_chat(page, chat_server, person, model_id)

    send(page, "One more")

    error = page.locator("#chat-error")
    error.wait_for(timeout=WAIT_MS)
    assert error.inner_text() == (
        "You have 1 answer running. Wait for one to finish, or stop one, then send again."
    )
    chat.call("POST", f"/api/turns/{running}/cancel")


def test_a_reply_whose_stream_was_closed_for_a_newer_one_follows_on_when_focused(
    page, chat_app, chat_server, user, fake_model, model_id
):
    person, chat = user
    limit(chat_app, person.id, eventStreams=1)
    fake_model.script(Reply.forever("more ", 0.1))
    open_chat(page, chat_server, person, model_id)
    send(page, "Talk")
    page.wait_for_function(f"() => ({LIVE_TEXT})().length > 10", timeout=WAIT_MS)
    open_turn = running_turn(chat_app, person.id)
    newest = chat.call("GET", f"/api/turns/{open_turn}/events", stream=True, timeout=30)
    lines = newest.iter_lines(decode_unicode=True)
    next(lines)  # the API's stream is served: the page's, the older, was closed
    page.wait_for_timeout(300)
    before = len(page.evaluate(LIVE_TEXT))
    page.wait_for_timeout(1000)
    assert len(page.evaluate(LIVE_TEXT)) == before  # paused: nothing new drawn

    page.evaluate("() => window.dispatchEvent(new Event('focus'))")

    page.wait_for_function(f"() => ({LIVE_TEXT})().length > {before + 20}", timeout=WAIT_MS)
    newest.close()
    page.get_by_role("button", name="Stop", exact=True).click()
