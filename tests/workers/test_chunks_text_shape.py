"""A stream's text chunks read without parsing them (``TextShape``) give the events their
parse gives, and every chunk written otherwise is parsed as before."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from workers.providers import ProviderError, ReasoningDelta, TextDelta
from workers.providers.chunks import DONE, EventStream, ReplyAssembler
from workers.providers.openai_errors import ProviderIdentity

WHO = ProviderIdentity("test", "http://127.0.0.1:9", "not-needed")


def chunk(delta: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A chunk as OpenAI writes it, one choice carrying ``delta``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        **fields,
    }


def text(token: str, **fields: Any) -> str:
    return json.dumps(chunk({"content": token}, **fields))


def read(payloads: list[str], parse_all: bool = False) -> list[Any]:
    """The events of each payload and of the stream's end (an error as its message)."""
    reply = ReplyAssembler(WHO)
    if parse_all:
        reply._shape.text = lambda payload: None
    out: list[Any] = []
    try:
        for payload in payloads:
            out.append(reply.add(payload))
        out.append(reply.finish())
    except ProviderError as error:
        out.append(str(error))
    return [re.sub(r"call_[0-9a-f]{24}", "call_", repr(events)) for events in out]


def shown(payloads: list[str]) -> int:
    """How many of ``payloads`` an assembler that read them in order read unparsed."""
    reply = ReplyAssembler(WHO)
    unparsed = 0
    for payload in payloads:
        unparsed += reply._shape.text(payload) is not None
        reply.add(payload)
    return unparsed


END = json.dumps({**chunk({}), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})


def test_a_streams_text_chunks_after_the_first_two_are_read_without_a_parse():
    tokens = ["The", " answer", " is", " 42", "."]
    payloads = [text(token) for token in tokens] + [END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert shown(payloads) == 3
    assert read(payloads)[2] == repr([TextDelta(" is")])


def test_a_stream_of_one_token_over_and_over_is_read_without_a_parse():
    payloads = [text("tok ") for _ in range(6)] + [END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert shown(payloads) == 4


@pytest.mark.parametrize(
    "token",
    ["two\nlines", 'a "quote"', "back\\slash", "tab\there", "\ud83d", "é", "\x7f"],
)
def test_a_token_that_json_escapes_is_parsed_in_a_proved_shape(token):
    """A token written with an escape (a newline, a quote, half an emoji) is parsed, and
    gives what the parse gives: U+FFFD for half a surrogate pair."""
    payloads = [text("a"), text("b"), text("c"), text(token), text("d"), END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert shown(payloads) == 2
    if token == "\ud83d":
        assert read(payloads)[3] == repr([TextDelta("\ufffd")])


def test_chunks_that_are_not_text_alone_are_parsed_in_a_proved_shape():
    payloads = [
        text("a"),
        text("b"),
        text("c"),
        json.dumps(chunk({"content": "d", "reasoning_content": "why"})),
        json.dumps(chunk({"content": "e"}, usage={"prompt_tokens": 3, "completion_tokens": 5})),
        text("f")[:-1],  # cut: malformed
    ]
    assert read(payloads) == read(payloads, parse_all=True)
    assert read(payloads)[3] == repr([ReasoningDelta("why"), TextDelta("d")])
    assert "could not read" in read(payloads)[-1]


def test_a_chunk_with_a_control_character_in_its_token_is_unreadable_as_before():
    payloads = [text("a"), text("b"), text("c"), text("x").replace('"x"', '"x\ty"'), END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert read(payloads)[-1] == read([payloads[-2]], parse_all=True)[-1]


def test_a_token_elsewhere_in_the_chunk_is_not_taken_for_its_text():
    """The model's name written as the token, the text's key written with an escape: the
    token found first is not the text, and the shape is never proved."""
    payloads = [
        json.dumps(chunk({"content": "m"})).replace('"content"', '"cont\\u0065nt"')
        for _ in range(4)
    ]
    changed = payloads[3].replace('"model": "m"', '"model": "x"')
    payloads = [*payloads[:3], changed, END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert read(payloads)[3] == repr([TextDelta("m")])
    assert shown(payloads) == 0


def test_think_tags_in_tokens_read_unparsed_still_split_the_reasoning_out():
    tokens = ["a", "b", "<think>", "hm", "</thi", "nk>", "answer"]
    payloads = [text(token) for token in tokens] + [END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert shown(payloads) == 5


def test_a_shape_changed_midway_is_learned_again():
    """llama.cpp writes each chunk's time: a second later the JSON around the token changes."""
    first = [text(t) for t in ("a", "b", "c")]
    later = [text(t, created=2) for t in ("d", "e", "f", "g")]
    payloads = [*first, *later, END]
    assert read(payloads) == read(payloads, parse_all=True)
    assert shown(payloads) == 1 + 2


def test_a_read_of_whole_events_is_split_as_its_lines_would_be():
    cases = [
        b"data: a\n\ndata: b\n\n",
        b"data: a\n\ndata: [DONE]\n\n",
        b"data: a\n\n: ping\n\ndata: b\n\n",
        b"data:a\n\ndata: b\n\n",
        b"data: a\ndata: b\n\n",
        b"data: \xe2\n\ndata: b\n\n",
        b"data: a\n\n\n\ndata: b\n\n",
        b"data: \n\n",
    ]
    for case in cases:
        whole = list(EventStream().batches([case]))
        by_line = list(EventStream().batches([case[:1], case[1:]]))
        assert whole == by_line, case
    assert list(EventStream().batches([cases[1]])) == [["a", DONE]]


def test_a_reads_tokens_read_unparsed_come_as_one_text_and_a_failure_after_them():
    reply = ReplyAssembler(WHO)
    first = reply.add_read([text("a"), text("b")], join=True)  # parsed: the shape's proof
    assert first == ([TextDelta("a"), TextDelta("b")], None)
    assert reply.add_read([text("c"), text("d")], join=True) == ([TextDelta("cd")], None)
    events, failure = reply.add_read(
        [text("e"), text("<think>"), text("hm"), "{", text("f")], join=True
    )
    assert events == [TextDelta("e"), ReasoningDelta("hm")]
    assert failure is not None and "could not read" in str(failure)


def test_a_reads_events_are_one_a_chunk_unless_joined():
    reply = ReplyAssembler(WHO)
    reply.add_read([text("a"), text("b")])
    assert reply.add_read([text("c"), text("d")]) == ([TextDelta("c"), TextDelta("d")], None)
