"""Continue, end to end through a real worker: a stopped or cut-off reply goes on in the same
reply, with no tools offered and no message of the user's, and can be stopped and continued
again (issue 25)."""

from __future__ import annotations

from tests.support.chat import ChatClient
from tests.support.fake_model import Reply
from tests.support.processes import joined
from tests.workers.test_cancel import EventReader
from tests.workers.test_failed_turns import READ_PAGE, assert_page_result_kept
from workers.prompts import CONTINUE_INSTRUCTION


def continue_path(message_id: str) -> str:
    return f"/api/messages/{message_id}/continue"


def start_and_stop(chat: ChatClient, start) -> dict:
    """Start a turn with ``start()`` (returning its 202 body), stop it once it streamed some
    text, and return the ended turn."""
    turn_id = start()["turn"]["id"]
    reader = EventReader(chat, turn_id)
    reader.start()
    reader.wait_for("text.delta", 3)
    assert chat.call("POST", f"/api/turns/{turn_id}/cancel").status_code == 200
    joined(reader, "the event stream")
    return chat.wait(turn_id)


def continue_reply(chat: ChatClient, message_id: str, **body) -> dict:
    """Continue the reply and return the 202 body."""
    response = chat.call("POST", continue_path(message_id), json=body)
    assert response.status_code == 202, response.text
    return response.json()


def test_a_stopped_reply_goes_on_in_the_same_reply_with_no_tools_and_no_new_message(
    chat, fake_model, model_ids
):
    fake_model.script(Reply.forever("tick ", 0.05), Reply.text("and the rest."))
    conversation = chat.new_conversation()
    stopped = start_and_stop(chat, lambda: chat.start(conversation, "Count for me", model_ids[0]))
    reply_id = stopped["assistantMessageId"]
    started = continue_reply(chat, reply_id)
    assert started["turn"]["assistantMessageId"] == reply_id
    assert started["turn"]["continues"] is True
    turn = chat.wait(started["turn"]["id"])
    assert turn["status"] == "completed", turn
    assert turn["usage"]["outputTokens"] == 5  # counted as any turn's

    messages = chat.conversation(conversation)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[1]["status"] == "completed"
    [part] = messages[1]["parts"]  # one text: Copy copies it whole
    assert part["text"].startswith("tick tick tick ") and part["text"].endswith(
        "tick and the rest."
    )
    sent = fake_model.chat_requests()[-1].json
    assert "tools" not in sent
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "user"]
    assert sent["messages"][2]["content"].startswith("tick tick tick")
    assert sent["messages"][3]["content"] == CONTINUE_INSTRUCTION
    events = chat.events(turn["id"])
    assert events[0].name == "turn.started"
    assert events[0].data == {"assistantMessageId": reply_id}


def test_a_cut_off_reply_is_continued_once_and_then_is_complete(chat, fake_model, model_ids):
    fake_model.script(Reply.text("The first half", then="length"), Reply.text(" and the second."))
    conversation = chat.new_conversation()
    cut = chat.run(conversation, "Write it", model_ids[0])
    assert cut["status"] == "failed" and cut["error"].startswith("The answer above was cut off.")
    turn = chat.wait(continue_reply(chat, cut["assistantMessageId"])["turn"]["id"])
    assert turn["status"] == "completed", turn
    reply = chat.reply(turn)
    assert reply["status"] == "completed"
    assert reply["parts"] == [{"type": "text", "text": "The first half and the second."}]

    again = chat.call("POST", continue_path(reply["id"]), json={})
    assert again.status_code == 409
    assert again.json()["error"]["message"].startswith("This reply is complete")


def test_a_reply_of_tool_results_only_is_continued_from_them(chat, fake_model, model_ids):
    """A reply cut off after its tool calls, with no answer text, is continued from its
    results: replayed to the model, kept in the reply, the answer written after them."""
    fake_model.script(READ_PAGE, Reply.text("", then="length"), Reply.text("It says a."))
    conversation = chat.new_conversation()
    cut = chat.run(conversation, "read it", model_ids[0])
    assert cut["error"].startswith("No answer was written"), cut
    turn = chat.wait(continue_reply(chat, cut["assistantMessageId"])["turn"]["id"])
    assert turn["status"] == "completed", turn
    parts = chat.reply(turn)["parts"]
    assert_page_result_kept(parts)
    assert parts[-1] == {"type": "text", "text": "It says a."}
    sent = fake_model.chat_requests()[-1].json
    assert "tools" not in sent
    assert [m["role"] for m in sent["messages"]][-3:] == ["assistant", "tool", "user"]


def test_a_continuation_can_be_stopped_and_continued_again(chat, fake_model, model_ids):
    fake_model.script(
        Reply.forever("one ", 0.05), Reply.forever("two ", 0.05), Reply.text("three.")
    )
    conversation = chat.new_conversation()
    first = start_and_stop(chat, lambda: chat.start(conversation, "Count", model_ids[0]))
    reply_id = first["assistantMessageId"]
    second = start_and_stop(chat, lambda: continue_reply(chat, reply_id))
    assert second["status"] == "cancelled" and second["assistantMessageId"] == reply_id
    reply = chat.reply(second)
    assert reply["status"] == "cancelled"
    [part] = reply["parts"]
    assert part["text"].startswith("one one ") and part["text"].endswith("two ")

    third = chat.wait(continue_reply(chat, reply_id)["turn"]["id"])
    assert third["status"] == "completed", third
    [part] = chat.reply(third)["parts"]
    assert "one two" in part["text"] and part["text"].endswith("two three.")
    sent = fake_model.chat_requests()[-1].json["messages"]
    assert sent[-2]["role"] == "assistant" and sent[-2]["content"] == part["text"][:-6]
    assert len(chat.conversation(conversation)["messages"]) == 2


def test_only_the_newest_stopped_reply_of_ones_own_conversation_is_continued(
    chat, make_chat, fake_model, model_ids
):
    fake_model.script(Reply.forever("tick ", 0.05), Reply.text("Another answer."))
    conversation = chat.new_conversation()
    stopped = start_and_stop(chat, lambda: chat.start(conversation, "Count", model_ids[0]))
    reply_id = stopped["assistantMessageId"]
    stranger = make_chat().call("POST", continue_path(reply_id), json={})
    assert stranger.status_code == 404
    own = chat.call("POST", continue_path(stopped["userMessageId"]), json={})
    assert own.status_code == 409 and "your own message" in own.json()["error"]["message"]
    unknown = chat.call("POST", continue_path(reply_id), json={"model": "no/such"})
    assert unknown.status_code == 400 and "model" in unknown.json()["error"]["fields"]

    chat.run(conversation, "Something else", model_ids[0])
    older = chat.call("POST", continue_path(reply_id), json={})
    assert older.status_code == 409
    assert older.json()["error"]["message"].startswith("Only the newest reply")
