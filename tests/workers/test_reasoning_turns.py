"""Reasoning, grounding and follow-up questions in real turns: the API, Redis, a worker process,
loopback sites for search and fetch, and the scripted fake model recording what it was sent."""

from __future__ import annotations

import json

import pytest

from core.extensions import db
from core.models import UsageCount
from tests.support.chat_apps import loopback_chat_app
from tests.support.fake_model import Reply
from tests.support.models import ask_for_follow_ups
from tests.support.processes import free_port
from tests.support.sites import Site
from workers.follow_ups import MAX_TOKENS as FOLLOW_UP_TOKENS

PAGE = """<html><head><title>Lighthouses of Brittany</title></head><body><article>
<h1>Lighthouses of Brittany</h1><p>The Phare d'Eckmühl stands sixty-five metres tall.</p>
</article></body></html>"""


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """The built-in plugins and the turn tests' own, with loopback sites allowed."""
    plugins = "tools.web_search,tools.web_fetch,tests.workers.turn_plugins"
    with loopback_chat_app(tmp_path_factory, redis_url, sqlite_template, plugins) as app:
        yield app


@pytest.fixture
def site():
    """A SearXNG instance and the page it finds, on one loopback server; yields its address."""
    with Site() as server:
        results = {
            "query": "lighthouse",
            "results": [{"title": "Lighthouses", "url": server.url("/page"), "content": "Tall."}],
            "unresponsive_engines": [],
        }
        server.serve("/search", "application/json", json.dumps(results).encode())
        server.serve("/page", "text/html; charset=utf-8", PAGE.encode())
        yield server.url("")


def search_with(make_chat, base_url: str):
    """Save SearXNG at ``base_url`` as the admin's engine; return the admin's client."""
    admin = make_chat(admin=True)
    admin.search_with_searxng(base_url)
    return admin


def sent_text(request) -> str:
    """Return everything a model request carried, as one string."""
    return json.dumps(request.json["messages"], ensure_ascii=False)


def test_reasoning_is_stored_apart_from_the_answer_counted_and_never_sent_back(
    chat, chat_app, fake_model, model_ids
):
    fake_model.script(
        Reply.text("Paris.", chunks=3, reasoning="France's capital is Paris.", usage=(10, 20),
                   reasoning_tokens=12),
        Reply.text("<think>Same city, still.</think>Yes, Paris.", chunks=9),
    )  # fmt: skip
    conversation = chat.new_conversation()
    first = chat.run(conversation, "Capital of France?", model_ids[0])
    assert first["status"] == "completed", first
    events = chat.events(first["id"])
    reasoned = "".join(e.data["text"] for e in events if e.name == "reasoning.delta")
    answered = "".join(e.data["text"] for e in events if e.name == "text.delta")
    assert (reasoned, answered) == ("France's capital is Paris.", "Paris.")
    assert chat.reply(first)["parts"] == [
        {"type": "reasoning", "text": "France's capital is Paris."},
        {"type": "text", "text": "Paris."},
    ]
    assert first["usage"]["reasoningTokens"] == 12

    second = chat.run(conversation, "Sure?", model_ids[0])
    assert second["status"] == "completed", second
    replayed = sent_text(fake_model.chat_requests()[1])
    assert "Paris." in replayed and "France's capital" not in replayed
    assert chat.reply(second)["parts"] == [
        {"type": "reasoning", "text": "Same city, still."},
        {"type": "text", "text": "Yes, Paris."},
    ]
    with chat_app.app_context():
        counted = db.session.scalar(
            db.select(UsageCount.amount).filter_by(
                user_id=chat.user_id, metric="reasoningTokens", detail=model_ids[0]
            )
        )
    assert counted >= 12  # the first turn's, and an estimate of the second's


def test_reasoning_before_a_tool_call_is_not_sent_to_the_next_step(chat, fake_model, model_ids):
    fake_model.script(
        Reply.tool_calls([("echo", {"text": "x"})], reasoning="Plan: echo it first."),
        Reply.text("Echoed."),
    )
    turn = chat.run(chat.new_conversation(), "echo x", model_ids[0])
    assert turn["status"] == "completed", turn
    assert "Plan: echo it first." not in sent_text(fake_model.chat_requests()[1])
    kinds = [p["type"] for p in chat.reply(turn)["parts"]]
    assert kinds == ["reasoning", "tool-call", "tool-result", "text"]


def test_a_turn_that_searched_and_read_says_so(make_chat, chat, fake_model, model_ids, site):
    search_with(make_chat, site)
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": "lighthouse"})]),
        Reply.tool_calls([("web_fetch", {"url": f"{site}/page"})]),
        Reply.text("65 m."),
    )
    turn = chat.run(chat.new_conversation(), "How tall?", model_ids[0])
    assert turn["status"] == "completed", turn
    assert chat.reply(turn)["grounding"] == {
        "summary": "Searched 1 time, read 1 page",
        "searches": 1,
        "reads": 1,
        "failed": 0,
    }


def test_a_turn_whose_search_failed_quotes_the_failure(make_chat, chat, fake_model, model_ids):
    search_with(make_chat, f"http://127.0.0.1:{free_port()}")  # nothing listens there
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": "lighthouse"})]),
        Reply.text("The search failed."),
    )
    turn = chat.run(chat.new_conversation(), "How tall?", model_ids[0])
    assert turn["status"] == "completed", turn
    grounding = chat.reply(turn)["grounding"]
    assert grounding["summary"] == (
        "Search failed: SearXNG could not be reached. Only an administrator can fix this: tell one."
    )
    assert (grounding["searches"], grounding["failed"]) == (0, 1)


def test_a_turn_without_the_web_says_so_and_other_tools_do_not_count(chat, fake_model, model_ids):
    fake_model.script(Reply.tool_calls([("echo", {"text": "x"})]), Reply.text("Done."))
    turn = chat.run(chat.new_conversation(), "echo x", model_ids[0])
    assert chat.reply(turn)["grounding"]["summary"] == "Answered without the web"


def test_follow_ups_are_off_by_default_and_cost_no_model_call(chat, fake_model, model_ids):
    turn = chat.run(chat.new_conversation(), "hi", model_ids[0])
    assert turn["status"] == "completed", turn
    assert len(fake_model.chat_requests()) == 1
    assert all(p["type"] != "follow-ups" for p in chat.reply(turn)["parts"])


def test_follow_ups_when_asked_are_three_plain_short_questions(
    chat, chat_app, fake_model, model_ids
):
    ask_for_follow_ups(chat_app, model_ids[0])
    too_long = "Why " + "very " * 30 + "long?"
    offered = f"1. How big is **Paris**?\n- {too_long}\n* What is its `history`?\n\nWhat to see?"
    fake_model.script(
        Reply.text("Paris is the capital."),
        Reply.text(offered + "\nA fourth one?", usage=(30, 20)),
    )
    turn = chat.run(chat.new_conversation(), "Capital of France?", model_ids[0])
    assert turn["status"] == "completed", turn
    asked = fake_model.chat_requests()[1].json
    assert "tools" not in asked and asked["max_tokens"] == FOLLOW_UP_TOKENS
    assert asked["messages"][0]["content"] == "Capital of France?"
    assert chat.reply(turn)["parts"][-1] == {
        "type": "follow-ups",
        "questions": ["How big is Paris?", "What is its history?", "What to see?"],
    }
    assert turn["usage"]["inputTokens"] == 10 + 30  # the call is counted


def test_a_failed_follow_up_call_loses_nothing_and_shows_nothing(
    chat, chat_app, fake_model, model_ids
):
    ask_for_follow_ups(chat_app, model_ids[0])
    fake_model.script(Reply.text("Paris."), Reply.text("How big", then="error"))
    turn = chat.run(chat.new_conversation(), "Capital of France?", model_ids[0])
    assert turn["status"] == "completed", turn
    assert chat.reply(turn)["parts"] == [{"type": "text", "text": "Paris."}]
