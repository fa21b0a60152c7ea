"""A model server that drops the connection mid-answer, or answers garbage, during a real
turn: the turn fails with the provider's sentence, the text shown is stored, the previous
step's tool results stay, and the next message is answered."""

from __future__ import annotations

import json

from tests.faults.conftest import Stopwatch, record_recovery
from tests.support.fake_model import Reply
from tests.support.processes import HANG_SECONDS, joined
from tests.workers.test_failed_turns import (
    PAGE_OUTPUT,
    READ_PAGE,
    assert_page_result_kept,
    reloaded,
    streamed_text,
    wait_for_text,
)

UNREADABLE = (
    "The provider fake sent a reply Lookout could not read. Check that it is OpenAI-compatible "
    "and that the base URL points at its API (often ending in /v1)."
)
STOP = 'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'


def chunk(text: str) -> str:
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]}) + "\n\n"


def run_to_failure(stack, answer: Reply, shown: str):
    """Read a page, then answer with ``answer``; return (turn, reply, failure, streamed text,
    seconds from the last text shown to the stored failure)."""
    stack.fake.script(READ_PAGE, answer)
    conversation, turn_id, reader = stack.start_turn("read it")
    wait_for_text(reader, shown, timeout=HANG_SECONDS)
    clock = Stopwatch()
    turn = stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    seconds = clock.seconds()
    joined(reader, "the event stream")  # its reader ends with the turn's ending event
    reply, failure = reloaded(stack.chat, conversation, turn_id)
    stack.fake.script(Reply.text("Fine now."))
    after = stack.chat.run(conversation, "again", "fake/m")
    assert after["status"] == "completed", after
    return turn, reply, failure, streamed_text(reader), seconds


def test_a_connection_dropped_mid_answer_fails_the_turn_keeping_the_text_and_results(
    shared_stack,
):
    answer = Reply.text("The page says hello and then", chunks=6, delay=0.05, then="disconnect")
    turn, reply, failure, shown, seconds = run_to_failure(
        shared_stack, answer, "The page says hello and then"
    )
    record_recovery("model connection dropped mid-answer", seconds)
    assert turn["status"] == "failed" and failure["error"] == turn["error"]
    assert turn["error"] == (
        "The answer above was cut off. The connection to the provider fake broke during the "
        "reply. Try again."
    )
    assert_page_result_kept(reply["parts"])
    assert reply["parts"][-1] == {"type": "text", "text": "The page says hello and then"}
    assert shown == "The page says hello and then"


def test_garbage_mid_answer_fails_the_turn_keeping_the_text_and_results(shared_stack):
    answer = Reply.raw(chunk("The page ") + chunk("says") + "data: {<html>502 Bad Gateway\n\n")
    turn, reply, failure, shown, seconds = run_to_failure(shared_stack, answer, "The page says")
    record_recovery("model answered garbage mid-answer", seconds)
    assert turn["status"] == "failed" and failure["error"] == turn["error"]
    assert turn["error"] == f"The answer above was cut off. {UNREADABLE}"
    assert_page_result_kept(reply["parts"])
    assert reply["parts"][-1] == {"type": "text", "text": "The page says"}


def test_garbage_instead_of_an_answer_fails_the_turn_keeping_the_results(shared_stack):
    shared_stack.fake.script(READ_PAGE, Reply.raw("<html><body>502 Bad Gateway</body></html>"))
    conversation = shared_stack.chat.new_conversation()
    turn = shared_stack.chat.run(conversation, "read it", "fake/m")
    reply, failure = reloaded(shared_stack.chat, conversation, turn["id"])
    assert turn["status"] == "failed" and failure is not None
    # Nothing was written, so nothing was cut off (issue 25): the reply kept only its call.
    no_answer = "No answer was written: the model stopped after its tool calls, kept above."
    assert turn["error"] == f"{no_answer} {UNREADABLE}"
    assert_page_result_kept(reply["parts"])
    assert reply["parts"][-1]["type"] == "source"  # no text: nothing was said after the page
    assert PAGE_OUTPUT in json.dumps(reply["parts"])


def test_half_an_emoji_mid_answer_is_shown_and_stored_as_a_replacement_character(shared_stack):
    """Regression: a chunk holding a lone surrogate ("\\ud83d", an emoji cut in two by the
    server) could not be encoded to send or store, and the turn broke mid-answer."""
    cut = 'data: {"choices": [{"index": 0, "delta": {"content": "Cut \\ud83d here"}}]}\n\n'
    answer = Reply.raw(chunk("The page says ") + cut + chunk(" and \U0001f600 whole.") + STOP)
    shared_stack.fake.script(READ_PAGE, answer)
    conversation, turn_id, reader = shared_stack.start_turn("read it")
    turn = shared_stack.chat.wait(turn_id, timeout=HANG_SECONDS)
    joined(reader, "the event stream")  # its reader ends with the turn's ending event
    reply, failure = reloaded(shared_stack.chat, conversation, turn_id)
    expected = "The page says Cut \ufffd here and \U0001f600 whole."
    assert turn["status"] == "completed" and failure is None, (turn.get("error"), failure)
    assert reply["parts"][-1] == {"type": "text", "text": expected}
    assert streamed_text(reader) == expected
