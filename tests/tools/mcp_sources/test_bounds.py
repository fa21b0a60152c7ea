"""An MCP server's answers are bounded in size, not only in time: past a limit the call fails
with a sentence the model reads, and the worker holds no more than the limit.

Each flooding call runs in a child process (``floods measure``), which reports what the model
read and how far its peak memory grew; the servers flood 256 MB, far past every limit.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.processes import HANG_SECONDS
from tests.tools.mcp_sources.floods import MANY_TOOLS, FloodServer
from tests.tools.mcp_sources.test_half_pairs import READ
from tools.mcp import list_server_tools
from tools.mcp.guard import BoundedLines, mend_json
from tools.mcp.limits import ANSWER_BYTES, LISTED_TOOLS, SESSION_BYTES, AnswerLimit

# What a worker may grow by: the answer limit's bytes held, copied and parsed, with margin.
GROWTH_BYTES = SESSION_BYTES * 4
TOO_LARGE = "The MCP server flood sent an answer larger than 4 MB, more than Lookout reads"
TOO_MANY = "The MCP server flood sent more than 10,000 messages in answer to one request"


def measure(where: str) -> dict:
    """Call the flood tool at ``where`` from a child process; return what it reported."""
    child = subprocess.run(
        [sys.executable, "-m", "tests.tools.mcp_sources.floods", "measure", where, "120"],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS * 2,
        check=True,
    )
    return json.loads(child.stdout)


@pytest.mark.parametrize("kind", ["json", "line"])
def test_an_endless_answer_over_http_fails_the_call_with_a_sentence_and_bounded_memory(kind):
    """Regression: a 256 MB JSON body, or an event stream's endless line, was read whole (the
    worker grew by 0.8 to 1 GB) and the call failed as a server that "could not be reached"."""
    with FloodServer(kind) as server:
        said = measure(server.url)
    assert said["error"].startswith(f"ToolError: {TOO_LARGE}")
    assert "Ask it for less" in said["error"]
    assert said["grew"] < GROWTH_BYTES


def test_an_endless_stream_of_small_events_fails_the_call_before_its_deadline():
    """Regression: events that never answered were read until the call's deadline."""
    with FloodServer("events") as server:
        said = measure(server.url)
    assert said["error"].startswith(f"ToolError: {TOO_MANY}")
    assert said["grew"] < GROWTH_BYTES


def test_a_stdio_line_that_never_ends_fails_the_call_with_a_sentence_and_bounded_memory():
    """Regression: the SDK joined the line's chunks until the deadline (copying it again with
    each), and the call ended as a timeout."""
    said = measure("flood")
    assert said["error"].startswith(f"ToolError: {TOO_LARGE}")
    assert said["grew"] < GROWTH_BYTES


def test_half_a_pair_from_a_stdio_server_is_read_as_a_replacement_character():
    """Regression: the SDK refused the line, and the call failed as a server that "could not
    be reached"."""
    said = measure("halves")
    assert said["output"] == {"text": READ}


def test_a_listing_keeps_its_first_tools_up_to_the_limit():
    with FloodServer("tools") as server:
        listed = list_server_tools(server.spec(), HANG_SECONDS)
    assert MANY_TOOLS > LISTED_TOOLS
    assert [tool.name for tool in listed] == [f"tool{i}" for i in range(LISTED_TOOLS)]


def test_events_each_under_the_limit_pass_unchanged_however_they_are_cut():
    event = b"event: message\r\ndata: " + b"y" * (ANSWER_BYTES // 4) + b"\r\n\r\n"
    stream = event * 8  # twice the answer limit in all, each event a quarter of it
    lines = BoundedLines(AnswerLimit(), events=True)
    cuts = [0, *range(len(event) - 2, len(stream), len(event)), len(stream)]
    passed = b"".join(lines.feed(stream[a:b]) for a, b in zip(cuts, cuts[1:], strict=False))
    assert passed + lines.rest() == stream


def test_json_nested_deeper_than_python_reads_is_passed_on_for_the_sdk_to_refuse():
    """Regression: mending such a body raised RecursionError out of the transport."""
    deep = b"[" * 100_000 + b'"\\ud83d"' + b"]" * 100_000
    assert mend_json(deep) == deep
