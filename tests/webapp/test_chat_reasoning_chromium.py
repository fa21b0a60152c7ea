"""Reasoning, grounding and follow-up questions on the chat page, in Chromium: the Thinking
section folded while it streams and after a reload, the grounding line above the Sources row,
and follow-up buttons that send their question."""

from __future__ import annotations

import threading

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import WAIT_MS, last_reply, open_chat, send, wait_status
from tests.support.fake_model import Reply
from tests.support.models import ask_for_follow_ups

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

REASONING = "Two and two: count them. That makes four."


def test_reasoning_shows_live_folded_apart_from_the_answer_and_again_after_a_reload(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    release = threading.Event()
    fake_model.script(
        Reply.text("It is four.", chunks=3, reasoning=REASONING, pause_after=(0, 60),
                   release=release),
    )  # fmt: skip
    open_chat(page, chat_server, person, model_id)
    send(page, "What is 2+2?")
    thinking = last_reply(page).locator("details.thinking")
    expect(thinking.locator("summary")).to_have_text("Thinking…", timeout=WAIT_MS)
    expect(thinking.locator(".thinking-text")).to_have_text(REASONING)
    expect(thinking.locator(".thinking-text")).to_be_hidden()  # folded
    release.set()
    wait_status(page, "completed")
    expect(thinking.locator("summary")).to_have_text("Thinking")
    answer = last_reply(page).locator(".markdown")
    expect(answer).to_have_text("It is four.")
    thinking.locator("summary").click()
    expect(thinking.locator(".thinking-text")).to_be_visible()

    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    thinking = last_reply(page).locator("details.thinking")
    expect(thinking.locator(".thinking-text")).to_have_text(REASONING, timeout=WAIT_MS)
    expect(thinking.locator(".thinking-text")).to_be_hidden()
    expect(last_reply(page).locator(".markdown")).to_have_text("It is four.")
    expect(last_reply(page).locator(".grounding")).to_have_text("Answered without the web")


def test_the_grounding_line_sits_above_the_sources_row(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": "lighthouse"})]),
        Reply.text("Two lighthouses."),
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Lighthouses?")
    wait_status(page, "completed")
    reply = last_reply(page)
    expect(reply.locator(".grounding")).to_have_text("Searched 1 time")
    expect(reply.locator(".grounding + .sources")).to_be_visible()


def test_follow_up_buttons_send_their_question(
    page, chat_app, chat_server, user, fake_model, model_id
):
    person, _chat = user
    ask_for_follow_ups(chat_app, model_id)
    fake_model.script(
        Reply.text("Paris is the capital."),
        Reply.text("How big is Paris?\nWhat is its history?\nWhat to see there?"),
        Reply.text("About two million people."),
        Reply.text(""),  # no follow-ups for the second answer
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Capital of France?")
    wait_status(page, "completed")
    buttons = last_reply(page).locator(".follow-ups button")
    expect(buttons).to_have_text(
        ["How big is Paris?", "What is its history?", "What to see there?"]
    )
    buttons.first.click()
    expect(page.locator(".message-user .user-text").last).to_have_text("How big is Paris?")
    expect(last_reply(page).locator(".markdown")).to_have_text(
        "About two million people.", timeout=WAIT_MS
    )
    wait_status(page, "completed")
    asked = fake_model.chat_requests()[2].json["messages"]
    assert asked[-1] == {"role": "user", "content": "How big is Paris?"}
    expect(page.locator(".follow-ups")).to_have_count(0)  # answered: the old ones are gone
