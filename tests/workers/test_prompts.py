"""Prompt building: replay of stored parts, wrapping of untrusted output, the context budget."""

from __future__ import annotations

import re

from workers.prompts import CONTINUE_INSTRUCTION, StoredMessage, build_messages

BOUNDARY = re.compile(r'^<untrusted_tool_output id="([0-9a-f]{32})">\n')


def call(id_, name, input_):
    return {"type": "tool-call", "id": id_, "name": name, "input": input_}


def result(id_, name, output=None, error=None):
    part = {"type": "tool-result", "callId": id_, "name": name, "outcome": "ok"}
    if error is not None:
        part.update(error=error, outcome="error")
    else:
        part["output"] = output
    return part


def build(history, untrusted=("page",), budget=60_000):
    return build_messages(history, lambda name: name in untrusted, budget, "Lookout")


def test_a_branch_becomes_system_user_assistant_and_tool_messages_in_order():
    messages = build(
        [
            StoredMessage("user", [{"type": "text", "text": "Find it"}]),
            StoredMessage(
                "assistant",
                [
                    {"type": "text", "text": "Looking."},
                    call("c1", "echo", {"text": "a"}),
                    result("c1", "echo", {"echo": "a"}),
                    {"type": "source", "url": "https://example.com", "title": "E"},
                    {"type": "text", "text": "Found."},
                ],
            ),
        ]
    )
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[0]["content"].startswith("You are Lookout")
    assert messages[2]["content"] == "Looking."
    assert messages[2]["tool_calls"][0]["function"] == {
        "name": "echo",
        "arguments": '{"text": "a"}',
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "c1", "content": '{"echo": "a"}'}
    assert messages[4]["content"] == "Found."


def test_untrusted_output_and_errors_are_wrapped_with_a_fresh_boundary_each_build():
    history = [
        StoredMessage("user", [{"type": "text", "text": "q"}]),
        StoredMessage(
            "assistant",
            [
                call("c1", "page", {}),
                call("c2", "page", {}),
                result("c1", "page", "Raw page"),
                result("c2", "page", error="Fetching x failed (HTTP 404)."),
            ],
        ),
    ]
    first = [m["content"] for m in build(history) if m["role"] == "tool"]
    again = [m["content"] for m in build(history) if m["role"] == "tool"]
    assert "\nRaw page\n" in first[0]
    assert "\nError: Fetching x failed (HTTP 404).\n" in first[1]
    boundaries = {BOUNDARY.match(c).group(1) for c in first + again}
    assert len(boundaries) == 4
    assert history[1].parts[2]["output"] == "Raw page"  # the record stays raw


def test_a_call_without_a_result_is_answered_so_the_prompt_stays_valid():
    messages = build(
        [
            StoredMessage("user", [{"type": "text", "text": "q"}]),
            StoredMessage("assistant", [call("c1", "echo", {}), {"type": "text", "text": "…"}]),
        ]
    )
    tool = next(m for m in messages if m["role"] == "tool")
    assert tool == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "The call to echo did not finish.",
    }


def test_past_the_budget_the_oldest_results_become_a_note_and_the_newest_stays():
    """Regression (issue 24): the note said calling again "within this turn that is free",
    which was false for a search: only a page fetched in the turn comes from its cache."""
    parts = []
    for index in range(3):
        parts += [call(f"c{index}", "page", {"n": index}), result(f"c{index}", "page", "x" * 500)]
    history = [
        StoredMessage("user", [{"type": "text", "text": "q"}]),
        StoredMessage("assistant", parts),
    ]
    contents = [m["content"] for m in build(history, budget=1000) if m["role"] == "tool"]
    assert contents[0] == (
        '[This result of page with input {"n": 0} was cleared to keep the conversation short. '
        "Call page again with the same input if you need it. A page fetched earlier in this turn "
        "comes again from the turn's cache; a search is sent to the search engine again and "
        "counts as a new search.]"
    )
    assert BOUNDARY.match(contents[1]) and BOUNDARY.match(contents[2])


def test_the_newest_result_is_kept_even_when_alone_it_exceeds_the_budget():
    history = [
        StoredMessage("user", [{"type": "text", "text": "q"}]),
        StoredMessage("assistant", [call("c1", "echo", {}), result("c1", "echo", "y" * 5000)]),
    ]
    (content,) = [m["content"] for m in build(history, budget=1000) if m["role"] == "tool"]
    assert content == "y" * 5000


def test_attachments_follow_the_users_text():
    messages = build(
        [
            StoredMessage(
                "user",
                [
                    {"type": "text", "text": "Summarise"},
                    {
                        "type": "attachment",
                        "filename": "a.pdf",
                        "mimeType": "application/pdf",
                        "text": "PDF text",
                    },
                ],
            )
        ]
    )
    assert messages[1]["content"] == "Summarise\n\n[Attached file: a.pdf]\nPDF text"


def chars(messages) -> int:
    return sum(len(m["content"] or "") for m in messages)


def test_a_tool_only_assistant_message_carries_empty_content_never_null():
    """Issue 30: llama-cpp-python's server answered HTTP 500 ("Input should be a valid
    string") to the request after a tool call, whose assistant message had content null."""
    messages = build(
        [
            StoredMessage("user", [{"type": "text", "text": "q"}]),
            StoredMessage("assistant", [call("c1", "echo", {}), result("c1", "echo", "a")]),
        ]
    )
    assert messages[2]["tool_calls"] and messages[2]["content"] == ""


def test_tool_results_are_cut_first_to_fit_the_context_the_newest_with_a_note():
    history = [
        StoredMessage("user", [{"type": "text", "text": "q"}]),
        StoredMessage(
            "assistant",
            [
                call("c1", "echo", {"n": 1}),
                result("c1", "echo", "a" * 3000),
                call("c2", "echo", {"n": 2}),
                result("c2", "echo", "b" * 3000),
            ],
        ),
    ]
    messages = build_messages(history, lambda name: False, 60_000, "Lookout", context_chars=2500)
    older, newest = (m["content"] for m in messages if m["role"] == "tool")
    assert "was cleared to keep the conversation short" in older
    assert newest.startswith("b" * 1000)
    assert newest.endswith("characters) was cut to fit the model's context.]")
    assert messages[1]["content"] == "q" and chars(messages) <= 2500


def test_attached_text_is_cut_with_a_note_to_fit_the_context():
    """Issue 24: every prompt stays within the model's context whatever was attached."""
    attachment = {"type": "attachment", "filename": "big.txt", "text": "z" * 50_000}
    history = [StoredMessage("user", [{"type": "text", "text": "Summarise"}, attachment])]
    messages = build_messages(history, lambda name: False, 60_000, "Lookout", context_chars=4000)
    content = messages[-1]["content"]
    assert content.startswith("Summarise\n\n[Attached file: big.txt]\nzzz")
    assert "[The rest of this file's text (" in content and "was cut to fit" in content
    assert chars(messages) <= 4000
    assert attachment["text"] == "z" * 50_000  # the record stays whole


def test_the_oldest_turns_are_left_out_with_a_note_and_the_newest_message_kept():
    history = []
    for n in range(5):
        history.append(StoredMessage("user", [{"type": "text", "text": f"Q{n} " + "w" * 900}]))
        history.append(StoredMessage("assistant", [{"type": "text", "text": "A " * 300}]))
    history.append(StoredMessage("user", [{"type": "text", "text": "Last question"}]))
    messages = build_messages(history, lambda name: False, 60_000, "Lookout", context_chars=3500)
    assert messages[0]["role"] == "system"
    assert "The oldest messages of this conversation were left out" in messages[0]["content"]
    assert messages[1]["role"] == "user" and messages[-1]["content"] == "Last question"
    assert not any(m["content"].startswith("Q0 ") for m in messages[1:])
    assert chars(messages) <= 3500


def test_a_newest_message_longer_than_the_context_is_cut_not_refused():
    history = [StoredMessage("user", [{"type": "text", "text": "x" * 20_000}])]
    messages = build_messages(history, lambda name: False, 60_000, "Lookout", context_chars=3000)
    assert messages[-1]["content"].startswith("x" * 1000)
    assert "was cut to fit the model's context" in messages[-1]["content"]
    assert chars(messages) <= 3000


def test_a_continuation_asks_to_go_on_after_the_partial_answer_within_the_context():
    """Issue 25: Continue went to the model as a visible user message of its own; the partial
    answer is now the assistant's last message, followed by an instruction never stored."""
    history = []
    for n in range(4):
        history.append(StoredMessage("user", [{"type": "text", "text": f"Q{n} " + "w" * 900}]))
        history.append(StoredMessage("assistant", [{"type": "text", "text": "A " * 300}]))
    history[-1] = StoredMessage("assistant", [{"type": "text", "text": "The answer so fa"}])
    messages = build_messages(
        history, lambda name: False, 60_000, "Lookout", context_chars=3500, continuing=True
    )
    assert messages[-2:] == [
        {"role": "assistant", "content": "The answer so fa"},
        {"role": "user", "content": CONTINUE_INSTRUCTION},
    ]
    assert messages[-3]["content"].startswith("Q3 ")  # older turns left out, not the newest
    assert "were left out" in messages[0]["content"]
    assert chars(messages) <= 3500


def test_a_result_introduces_the_numbered_sources_it_cites_inside_the_envelope():
    cited = {**result("c1", "page", "The page text."), "sources": [2, 1]}
    messages = build(
        [
            StoredMessage("user", [{"type": "text", "text": "q"}]),
            StoredMessage(
                "assistant",
                [
                    {"type": "source", "url": "https://one.example/", "title": None, "number": 1},
                    call("c1", "page", {"text": "a"}),
                    cited,
                    {"type": "source", "url": "https://two.example/", "title": "Two", "number": 2},
                ],
            ),
        ]
    )
    assert "using only the numbers shown" in messages[0]["content"]
    tool = messages[-1]["content"]
    assert BOUNDARY.match(tool)
    assert (
        "Source [2]: Two, https://two.example/\nSource [1]: untitled, https://one.example/\n"
        "The page text.\n</untrusted_tool_output" in tool
    )
