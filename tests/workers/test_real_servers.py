"""What real OpenAI-compatible servers do that the polite fake did not (issue 30), through a real
worker: no usage, a bare ``[DONE]``, ``finish_reason: "length"``, keep-alive pings, an empty
HTTP 200, a 500 on ``content: null``, and a context that a long conversation outgrows.

Each turn is stored exactly as it ended: complete only with a "stop" or tool-calls finish.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from core.extensions import db
from core.models import Provider, UsageCount
from core.models.providers import DEFAULT_MAX_TOKENS
from tests.support.fake_model import FakeModel, Reply
from tests.workers.conftest import make_chat_app
from workers.prompts import EARLIER_LEFT_OUT

CUT = "The answer above was cut off."
READ_PAGE = Reply.tool_calls([("page", {"text": "a"})], usage=None)


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory, redis_url, sqlite_template):
    """The module's chat app: a model must start its answer within 2 s."""
    app = make_chat_app(tmp_path_factory, redis_url, sqlite_template, MODEL_TIMEOUT_SECONDS=2)
    yield app
    with app.app_context():
        db.engine.dispose()


def add_model(app, fake: FakeModel, **settings) -> str:
    """Register ``fake`` as a provider of its own with one tool-capable model "m" (with the
    model ``settings`` given); return the model's id."""
    name = f"real-{uuid.uuid4().hex[:8]}"
    with app.app_context():
        model = {"name": "m", "tools": True, **settings}
        db.session.add(Provider(name=name, base_url=fake.base_url, models=[model]))
        db.session.commit()
    return f"{name}/m"


@pytest.fixture
def strict_fake() -> Iterator[FakeModel]:
    """A fake that answers HTTP 500 to an assistant message with ``"content": null``."""
    with FakeModel(rejects_null_content=True) as fake:
        yield fake


def test_a_server_that_reports_no_usage_has_its_tokens_estimated_and_marked(
    chat, chat_app, fake_model, model_ids
):
    """Issue 30: llama.cpp ignores ``include_usage``; every turn's usage was null and the
    Usage page read 0 tokens."""
    fake_model.script(Reply.text("An answer of forty characters, or so!!!", usage=None))
    turn = chat.run(chat.new_conversation(), "Hello " * 50, model_ids[0])
    assert turn["status"] == "completed", turn
    usage = turn["usage"]
    assert usage["inputTokens"] > 75 and usage["outputTokens"] == 10
    assert usage["estimatedTokens"] == usage["inputTokens"] + usage["outputTokens"]
    with chat_app.app_context():
        rows = {
            (row.metric, row.detail): row.amount
            for row in db.session.scalars(db.select(UsageCount).filter_by(user_id=chat.user_id))
        }
    assert rows[("estimatedTokens", model_ids[0])] == usage["estimatedTokens"]
    assert rows[("outputTokens", model_ids[0])] == 10


def test_an_answer_at_its_length_limit_is_stored_as_cut_with_the_limit(chat, chat_app, fake_model):
    """Issue 30: Lookout sent no max_tokens and ignored ``finish_reason: "length"``, so an
    answer the model stopped mid-sentence was stored as completed."""
    model = add_model(chat_app, fake_model, maxTokens=300)
    fake_model.script(Reply.text("It goes on and on and", chunks=3, then="length"))
    turn = chat.run(chat.new_conversation(), "Tell me everything", model)
    assert turn["status"] == "failed", turn
    assert turn["error"] == (
        f"{CUT} The model reached its length limit of 300 tokens. Press Continue to have it go "
        "on, or ask for a shorter answer; an admin can raise the model's max tokens in the "
        "provider settings."
    )
    assert chat.reply(turn)["parts"] == [{"type": "text", "text": "It goes on and on and"}]
    assert fake_model.last_request().json["max_tokens"] == 300
    assert turn["usage"] == {"inputTokens": 10, "outputTokens": 5}  # a cut answer costs too


def test_a_model_without_a_max_tokens_setting_gets_the_documented_default(
    chat, fake_model, model_ids
):
    chat.run(chat.new_conversation(), "Hi", model_ids[0])
    assert fake_model.last_request().json["max_tokens"] == DEFAULT_MAX_TOKENS


def test_a_stream_interrupted_with_a_bare_done_is_stored_as_cut(chat, fake_model, model_ids):
    """Issue 30: llama.cpp ends a stream it interrupts for a newer request with a bare
    ``data: [DONE]``; the 10-token fragment was stored as completed."""
    fake_model.script(Reply.text("Half of the", chunks=2, then="done"))
    turn = chat.run(chat.new_conversation(), "Hi", model_ids[0])
    assert turn["status"] == "failed", turn
    assert turn["error"].startswith(f"{CUT} The provider ")
    assert turn["error"].endswith("closed the stream before the answer was finished. Try again.")
    assert chat.reply(turn)["parts"] == [{"type": "text", "text": "Half of the"}]


def test_an_empty_answer_says_the_prompt_may_exceed_the_context(chat, fake_model, model_ids):
    """Issue 30: llama.cpp answers an overlong prompt with an empty HTTP 200 stream, which
    read "sent a reply Lookout could not read ... check that it is OpenAI-compatible"."""
    fake_model.script(Reply.empty())
    turn = chat.run(chat.new_conversation(), "Hi", model_ids[0])
    provider = model_ids[0].split("/")[0]
    assert turn["status"] == "failed", turn
    assert turn["error"].startswith(
        f"The provider {provider} sent an empty answer. The prompt may exceed the model's context"
    )


def test_keep_alive_pings_do_not_keep_a_busy_server_from_timing_out(chat, fake_model, model_ids):
    """Issue 30: a busy server's keep-alive pings reset the timeout, so a turn queued behind
    another waited 90 s and more without failing (MODEL_TIMEOUT_SECONDS is 2 s here)."""
    fake_model.script(Reply.hang(pings=0.2))
    turn = chat.run(chat.new_conversation(), "Hi", model_ids[0])
    provider = model_ids[0].split("/")[0]
    assert turn["status"] == "failed", turn
    assert turn["error"] == (
        f"The provider {provider} did not start answering within 2 seconds; it may be busy with "
        "other requests. Try again in a few minutes."
    )
    fake_model.wait_for_disconnects(1)


def test_tools_are_offered_with_tool_choice_and_the_call_is_replayed_without_null_content(
    chat, chat_app, strict_fake
):
    """Issue 30: without ``tool_choice`` llama.cpp left the tools out of the prompt, and the
    request after a tool call failed (HTTP 500, "Input should be a valid string") because the
    assistant message carried ``"content": null``."""
    model = add_model(chat_app, strict_fake)
    strict_fake.script(READ_PAGE, Reply.text("The page says a.", usage=None))
    turn = chat.run(chat.new_conversation(), "read it", model)
    assert turn["status"] == "completed", turn
    first, second = (r.json for r in strict_fake.chat_requests())
    assert first["tool_choice"] == "auto" and first["tools"]
    asked = next(m for m in second["messages"] if m.get("tool_calls"))
    assert asked["content"] == ""
    assert chat.reply(turn)["parts"][-1] == {"type": "text", "text": "The page says a."}


def test_a_long_conversation_keeps_working_past_the_models_context(chat, chat_app):
    """Issue 30: after one answer filled the model's context, every later message of that
    conversation failed with an empty answer; the oldest turns are now left out, with a note."""
    # A context of 2,000 tokens, 500 of them for the answer: at 4 characters a token, the
    # server takes prompts of up to 6,000 characters; Lookout sends at most 5,400 (a margin).
    with FakeModel(context_chars=6000) as fake:
        model = add_model(chat_app, fake, contextTokens=2000, maxTokens=500)
        fake.default = Reply.text("Noted. " * 100, usage=None)
        conversation = chat.new_conversation()
        for n in range(6):
            turn = chat.run(conversation, f"Message {n}: " + "words " * 150, model)
            assert turn["status"] == "completed", (n, turn)
        last = fake.chat_requests()[-1].json["messages"]
    assert last[0]["content"].endswith(EARLIER_LEFT_OUT)
    assert last[-1]["content"].startswith("Message 5: ")
    assert not any(m["content"].startswith("Message 0: ") for m in last if m["role"] == "user")
    assert sum(len(m["content"] or "") for m in last) <= 5400


def test_a_large_attachment_is_cut_with_a_note_to_fit_the_models_context(chat, chat_app):
    """Issue 24: every prompt stays within the model's context whatever was attached; a long
    file's text made the server answer with an empty stream."""
    with FakeModel(context_chars=6000) as fake:
        model = add_model(chat_app, fake, contextTokens=2000, maxTokens=500)
        text = "The tide table for the whole year. " * 2000
        uploaded = chat.call(
            "POST", "/api/uploads", files={"file": ("tides.txt", text.encode(), "text/plain")}
        )
        assert uploaded.status_code == 201, uploaded.text
        conversation = chat.new_conversation()
        turn = chat.run(
            conversation, "When is high tide?", model, attachments=[uploaded.json()["id"]]
        )
        sent = fake.chat_requests()[-1].json["messages"][-1]["content"]
    assert turn["status"] == "completed", turn
    assert sent.startswith("When is high tide?\n\n[Attached file: tides.txt]\nThe tide table")
    assert "[The rest of this file's text (" in sent and "was cut to fit the model's" in sent
