"""The web process restarted while a page and an API client follow turns: each event stream
breaks, each reconnects with Last-Event-ID (the page through its EventSource), and each reads
every word once; the turns themselves never notice."""

from __future__ import annotations

import re
import threading

import pytest

from tests.faults.conftest import Follower, Stopwatch, record_recovery
from tests.support.chat import ChatClient
from tests.support.chat_page import WAIT_MS, last_reply, open_chat, send, token_for, wait_status
from tests.support.fake_model import Reply
from tests.support.fake_model_http import split
from tests.support.processes import joined, wait_until
from tests.support.web_process import WebProcess

PIECES = 40
HELD_SECONDS = 40  # the last piece waits (until RELEASE): the readers hold all the others first
RELEASE = threading.Event()
ANSWERS = {
    f"count {n}": f"Answer {n}: " + "one two three four five six seven eight. " * 4
    for n in ("page", "api")
}


def answer_to(body: dict) -> Reply:
    asked = body["messages"][-1]["content"]
    asked = asked if isinstance(asked, str) else asked[0]["text"]
    return Reply.text(
        ANSWERS[asked],
        chunks=PIECES,
        delay=0.05,
        pause_after=(PIECES - 1, HELD_SECONDS),
        release=RELEASE,
    )


def all_but_the_last_piece(answer: str) -> str:
    return answer[: -len(split(answer, PIECES)[-1])]


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture
def released():
    """RELEASE, lowered for the test and raised after it, so no answer stays held."""
    yield RELEASE
    RELEASE.set()


@pytest.mark.chromium
@pytest.mark.slow
def test_a_page_and_a_client_following_turns_through_a_web_restart_miss_no_word(
    shared_stack,
    tmp_path,
    released,
    page,
):
    stack = shared_stack
    stack.fake.responder = answer_to
    person, token = token_for(stack.app)
    with WebProcess(stack.app, tmp_path) as web:
        open_chat(page, web, person, "fake/m")
        send(page, "count page")
        page.wait_for_function(
            "() => (document.querySelector('.reply[aria-busy] .markdown') || {}).innerText"
            " && document.querySelector('.reply[aria-busy] .markdown').innerText.length > 20",
            timeout=WAIT_MS,
        )
        chat = ChatClient(web.url, token)
        turn_id = chat.start(chat.new_conversation(), "count api", "fake/m")["turn"]["id"]
        client = Follower(chat, turn_id)
        client.start()
        client.wait_for_text("Answer api")

        clock = Stopwatch()
        web.restart()
        record_recovery("web process restarted: serving again", clock.seconds())
        held = {key: all_but_the_last_piece(answer) for key, answer in ANSWERS.items()}
        shown = last_reply(page).locator(".markdown")
        wait_until(
            lambda: (
                client.text() == held["count api"]
                and words(shown.inner_text()) == words(held["count page"])
            ),
            HELD_SECONDS - 5,
            "a reader missed or repeated words across the restart",
        )
        released.set()
        record_recovery("web process restarted: page and client caught up", clock.seconds())
        assert client.connections > 1

        wait_status(page, "completed")
        joined(client, "the API client's event stream")
        assert words(last_reply(page).locator(".markdown").inner_text()) == words(
            ANSWERS["count page"]
        )
        turn = chat.wait(turn_id)
        assert turn["status"] == "completed", turn
        assert chat.reply(turn)["parts"] == [{"type": "text", "text": ANSWERS["count api"]}]
        assert client.text() == ANSWERS["count api"]
        assert client.events[-1].name == "turn.completed"
