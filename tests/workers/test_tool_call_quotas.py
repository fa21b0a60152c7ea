"""Tool calls one answer may make, over all its steps, and a user's own per-step value: calls
past them get an error result the model reads, and the next answer starts afresh."""

from __future__ import annotations

from core.extensions import db
from core.limits import set_overrides
from tests.support.fake_model import Reply

TURN_SENTENCE = (
    "This answer has made 3 tool calls, the most one answer may make, so this one was not run. "
    "Answer with what you have found."
)


def echoes(*texts: str) -> Reply:
    """A model step asking for one echo call per text."""
    return Reply.tool_calls([("echo", {"text": text}) for text in texts])


def results_of(chat, turn: dict) -> list[dict]:
    """Return the tool results stored in the turn's reply."""
    return [p for p in chat.reply(turn)["parts"] if p["type"] == "tool-result"]


def test_calls_past_the_answers_limit_get_an_error_result_until_the_next_answer(
    chat, chat_app, fake_model, model_ids
):
    with chat_app.app_context():
        set_overrides(chat.user_id, {"toolCallsPerTurn": 3})
        db.session.commit()
    fake_model.script(echoes("a", "b"), echoes("c", "d"), Reply.text("Three of four."))
    conversation = chat.new_conversation()

    turn = chat.run(conversation, "go", model_ids[0])

    assert turn["status"] == "completed"
    results = results_of(chat, turn)
    assert [r["outcome"] for r in results] == ["ok", "ok", "ok", "error"]
    assert results[3]["error"] == TURN_SENTENCE
    sent = fake_model.chat_requests()[-1].json["messages"]
    assert TURN_SENTENCE in [m for m in sent if m["role"] == "tool"][-1]["content"]
    fake_model.script(echoes("e"), Reply.text("Fresh."))
    again = chat.run(conversation, "again", model_ids[0])
    assert [r["outcome"] for r in results_of(chat, again)] == ["ok"]


def test_a_users_own_per_step_value_replaces_the_setting(chat, chat_app, fake_model, model_ids):
    with chat_app.app_context():
        set_overrides(chat.user_id, {"toolCallsPerStep": 1})
        db.session.commit()
    fake_model.script(echoes("a", "b"), Reply.text("One of two."))

    turn = chat.run(chat.new_conversation(), "go", model_ids[0])

    results = results_of(chat, turn)
    assert [r["outcome"] for r in results] == ["ok", "error"]
    assert results[1]["error"] == (
        "Only 1 tool call runs per step, so this one was not run. "
        "Call it again in your next step if you still need it."
    )
