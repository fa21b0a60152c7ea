"""Reads a chat-completions event stream into provider events, assembling tool calls by index."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tools.charset import loads_json
from workers.providers.base import (
    Finished,
    ProviderError,
    ProviderEvent,
    ReasoningDelta,
    SourceEvent,
    TextDelta,
    ToolCallRequest,
    Usage,
)
from workers.providers.openai_errors import (
    ProviderIdentity,
    cut_off,
    length_reached,
    stopped_early,
    stream_error,
    unreadable,
)
from workers.providers.thinking import ThinkSplitter
from workers.providers.tokens import estimate_tokens

DONE = "[DONE]"
# The finish reasons of a complete answer ("function_call": the legacy name of a tool call).
FINISHED = ("stop", "tool_calls", "function_call")
# Where servers put streamed reasoning: DeepSeek, vLLM and llama.cpp say reasoning_content,
# OpenRouter and Ollama's OpenAI endpoint say reasoning.
REASONING_FIELDS = ("reasoning_content", "reasoning")
# JSON up to a quote that opens a string: text outside strings (which holds no quote) and
# whole strings (escapes and all), then the opening quote.
_OPENS_STRING = re.compile(r'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+"', re.DOTALL)


def sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of an event stream's bytes, as text without their ends (CRLF, LF or CR)."""
    pending = b""
    for chunk in chunks:
        complete, pending = _split_lines(pending, chunk)
        for line in complete:
            yield line.decode("utf-8", "replace")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", "replace")


def _split_lines(pending: bytes, chunk: bytes) -> tuple[list[bytes], bytes]:
    """Return the complete lines in ``pending`` and ``chunk``, and the rest (a cut line)."""
    if pending:
        chunk = pending + chunk
    held = b""
    if b"\r" in chunk:
        if chunk.endswith(b"\r"):  # maybe the first half of a CRLF
            chunk, held = chunk[:-1], b"\r"
        chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    *complete, pending = chunk.split(b"\n")
    return complete, pending + held


class EventStream:
    """Reads the ``data`` of each server-sent event from an event stream's bytes, up to and
    including ``DONE`` when the stream sends it (comments and other fields skipped; a
    multi-line ``data`` is joined with newlines).

    One reader over the bytes as they arrive: httpx's text and line decoders and a generator
    per layer cost a model's streamed token about as much as parsing it, so a read that holds
    only whole events of one ``data`` line each (what servers send) skips the line splitting.
    ``spoke`` tells whether any line was more than a blank, a comment or ``DONE``.
    """

    def __init__(self) -> None:
        self.spoke = False

    def batches(self, chunks: Iterable[bytes]) -> Iterator[list[str]]:
        """Yield the data of the events each read of ``chunks`` completes, as text, one list a
        read that completes any, ending after ``DONE``."""
        pending = b""
        data: list[str] = []
        for chunk in chunks:
            if not pending and not data:
                found = self._whole_events(chunk)
                if found is not None:
                    if found:
                        yield found
                        if found[-1] is DONE:
                            return
                    continue
            complete, pending = _split_lines(pending, chunk)
            found = []
            for line in complete:
                payload = self._line(line.decode("utf-8", "replace"), data)
                if payload is not None:
                    found.append(payload)
                    if payload is DONE:
                        break
            if found:
                yield found
                if found[-1] is DONE:
                    return
        if pending:
            self._line(pending.rstrip(b"\r").decode("utf-8", "replace"), data)
        if data:
            payload = "\n".join(data)
            yield [DONE if payload.strip() == DONE else payload]

    def _whole_events(self, chunk: bytes) -> list[str] | None:
        """The data of the events in ``chunk`` (up to ``DONE``) when it holds only whole
        events of one ``data`` line each; else None, and the lines are read one by one."""
        if not chunk.endswith(b"\n\n") or b"\r" in chunk:
            return None
        if chunk.startswith(b"data: ") and b"[DONE]" not in chunk:  # most reads: decoded once
            payloads = chunk[6:-2].decode("utf-8", "replace").split("\n\ndata: ")
            if chunk.count(b"\n") == 2 * len(payloads):  # no line but these
                self.spoke = True
                return payloads
        parts = chunk[:-2].split(b"\n\n")
        for part in parts:
            if not part.startswith(b"data:") or b"\n" in part:
                return None
        found: list[str] = []
        for part in parts:
            payload = part[5:].decode("utf-8", "replace")
            payload = payload[1:] if payload.startswith(" ") else payload
            if payload.strip() == DONE:
                found.append(DONE)
                break
            self.spoke = True
            found.append(payload)
        return found

    def _line(self, line: str, data: list[str]) -> str | None:
        """Add one line to the event in ``data``; return the event's data when the line
        ends it (``DONE`` itself for the end of the stream)."""
        if not self.spoke:
            said = line.strip()
            if said and not said.startswith(":") and said.removeprefix("data:").strip() != DONE:
                self.spoke = True
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
            return None
        if line or not data:
            return None
        payload = "\n".join(data)
        data.clear()
        return DONE if payload.strip() == DONE else payload


class ReplyAssembler:
    """Turns chat.completion.chunk payloads into events, assembling tool calls by index.

    Chunks are parsed as plain JSON rather than SDK models: it costs a tenth of the CPU, which
    is what lets one worker process hold hundreds of streams. Most chunks are a token of text,
    each written as the one before it but for the token: ``TextShape`` reads those without
    parsing them, and every other chunk is parsed.
    """

    def __init__(
        self,
        who: ProviderIdentity,
        max_tokens: int | None = None,
        prompt_chars: Callable[[], int] = lambda: 0,
    ) -> None:
        self._who = who
        self._max_tokens = max_tokens
        self._prompt_chars = prompt_chars  # counted only for a server that reports no usage
        self._answer_chars = 0
        self._reasoning_chars = 0
        self._thinking = ThinkSplitter()
        self._calls: dict[object, dict[str, str]] = {}
        self._usage: Usage | None = None
        self._reason: str | None = None
        self._shape = TextShape()

    def add(self, payload: str) -> list[ProviderEvent]:
        """The events in one chunk (none for ``DONE``); tool-call fragments are kept until
        ``finish``.

        Raises ProviderError for an error event or a chunk that is not the expected JSON.
        """
        if payload == DONE:
            return []
        text = self._shape.text(payload)
        return self._parsed(payload) if text is None else self._text(text)

    def add_read(
        self, payloads: list[str], join: bool = False
    ) -> tuple[list[ProviderEvent], ProviderError | None]:
        """The events of one read's chunks, as ``add`` gives them one by one, and the error of
        the chunk that failed (None if none did; the chunks after it are not read).

        With ``join``, the tokens of a run of chunks read unparsed go on as one text: the
        caller joins a read's runs of text anyway, and one text costs one event, not one a
        token (the think tags split the same, as a tag cut between tokens is held).
        """
        events: list[ProviderEvent] = []
        tokens: list[str] = []
        for payload in payloads:
            text = self._shape.text(payload) if join else None
            if text is not None:
                tokens.append(text)
                continue
            if tokens:
                events += self._text("".join(tokens))
                tokens = []
            try:
                events += self.add(payload)
            except ProviderError as error:
                return events, error
        if tokens:
            events += self._text("".join(tokens))
        return events, None

    def _text(self, text: str) -> list[ProviderEvent]:
        """The events of a chunk's text (or a run's) when it holds nothing else."""
        events = self._thinking.add(text)
        self._count(events)
        return events  # type: ignore[return-value]  # a list of two kinds of event

    def _parsed(self, payload: str) -> list[ProviderEvent]:
        """The events of a chunk, parsed."""
        try:
            chunk = loads_json(payload)
        except ValueError as exc:
            raise unreadable(self._who) from exc
        if not isinstance(chunk, dict):
            raise unreadable(self._who)
        if chunk.get("error"):
            raise stream_error(chunk["error"], self._who)
        choices = chunk.get("choices") or []
        if not isinstance(choices, list):
            raise unreadable(self._who)
        events: list[ProviderEvent] = []
        for choice in choices:
            if not isinstance(choice, dict):
                raise unreadable(self._who)
            delta = choice.get("delta")
            if isinstance(delta, dict):
                reasoning = _reasoning(delta)
                if reasoning:
                    events.append(ReasoningDelta(reasoning))
                content = delta.get("content")
                if isinstance(content, str) and content:
                    events.extend(self._thinking.add(content))
                calls = delta.get("tool_calls")
                if calls:
                    for position, call in enumerate(_list(calls)):
                        self._add_call_fragment(position, call)
                if delta.get("annotations"):
                    events.extend(_sources(delta["annotations"]))
            if isinstance(choice.get("finish_reason"), str):
                self._reason = choice["finish_reason"]
        self._count(events)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            details = usage.get("completion_tokens_details")
            self._usage = Usage(
                _int(usage.get("prompt_tokens")),
                _int(usage.get("completion_tokens")),
                reasoning_tokens=_int(details.get("reasoning_tokens"))
                if isinstance(details, dict)
                else 0,
            )
        else:
            self._shape.learn(payload, _text_alone(chunk, choices))
        return events

    @property
    def calling(self) -> bool:
        """Whether a tool call's fragments came (the call itself comes with ``finish``)."""
        return bool(self._calls)

    def _add_call_fragment(self, position: int, call: Any) -> None:
        if not isinstance(call, dict):
            raise unreadable(self._who)
        key = call.get("index")
        if key is None:
            key = call.get("id") or position
        entry = self._calls.setdefault(key, {"id": "", "name": "", "arguments": ""})
        if isinstance(call.get("id"), str) and not entry["id"]:
            entry["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, dict):
            if isinstance(function.get("name"), str) and not entry["name"]:
                entry["name"] = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                entry["arguments"] += arguments
            elif isinstance(arguments, dict):  # some servers send an object, not a string
                entry["arguments"] += json.dumps(arguments)

    def finish(self) -> list[ProviderEvent]:
        """The tool calls, the usage when reported, and Finished.

        Raises ProviderError unless the model said it finished ("stop" or a tool call): a
        stream with no finish reason (closed by a proxy whose upstream died, or a bare
        ``DONE`` from a server that interrupted the answer for another request), one cut at
        the length limit ("length") and one stopped for another reason are cut answers, which
        must not pass for finished ones (their half-assembled tool calls are dropped).
        """
        held = self._thinking.finish()  # a cut tag at the end is text, cut or not
        self._count(held)
        usage = self._counted_usage()
        error = None
        if self._reason is None:
            error = cut_off(self._who)
        elif self._reason == "length":
            error = length_reached(self._who, self._max_tokens)
        elif self._reason not in FINISHED:
            error = stopped_early(self._who, self._reason)
        if error is not None:
            error.usage = usage  # a cut answer cost its tokens too
            raise error
        events: list[ProviderEvent] = [*held]
        events.extend(_tool_call(entry) for entry in self._calls.values())
        events.append(usage)
        events.append(Finished(self._reason))
        return events

    def _count(self, events: Sequence[ProviderEvent]) -> None:
        for event in events:
            if isinstance(event, TextDelta):
                self._answer_chars += len(event.text)
            elif isinstance(event, ReasoningDelta):
                self._answer_chars += len(event.text)
                self._reasoning_chars += len(event.text)

    def _counted_usage(self) -> Usage:
        """The usage the server reported, else estimated; reasoning it streamed without saying
        what it cost is estimated from its characters (within the answer's tokens)."""
        usage = self._usage or self._estimated_usage()
        if usage.reasoning_tokens or not self._reasoning_chars:
            return usage
        reasoning = min(usage.output_tokens, estimate_tokens(self._reasoning_chars))
        return Usage(usage.input_tokens, usage.output_tokens, usage.estimated, reasoning)

    def _estimated_usage(self) -> Usage:
        """Usage estimated from the characters sent and received, for a server that reports
        none (llama.cpp ignores ``stream_options.include_usage``): never silently zero."""
        answer = self._answer_chars + sum(
            len(entry["name"]) + len(entry["arguments"]) for entry in self._calls.values()
        )
        return Usage(estimate_tokens(self._prompt_chars()), estimate_tokens(answer), estimated=True)


class TextShape:
    """Reads a chunk that is only a token of text without parsing it, once the chunks before
    it showed that the server writes each such chunk alike but for the token.

    A parsed chunk of text alone (no reasoning, tool call, source, finish reason, usage or
    error) whose token is plain (no quote, backslash or unprintable character: written in
    JSON as itself) gives the JSON before and after its token. When a second such chunk has
    the same JSON around its token, the shape is proved once: the JSON before ends in a
    quote that opens a string (``_OPENS_STRING``), so the string is the token (a plain token
    cannot end it), and the JSON with another token in its place parses to that token as
    the text. Any plain token there then parses the same way, the rest of the text being
    the same: a chunk with that JSON around a plain token is that token, and its events are
    its parse's. A chunk written otherwise is parsed (and may teach a new shape); a token
    needing an escape, or a server whose chunks vary (a timestamp each), is parsed as before,
    the shape costing it one search.
    """

    def __init__(self) -> None:
        self.before = ""
        self.after = ""
        self.proved: bool | None = None  # None: seen once, not yet tried
        self.stop = 0  # where a token's JSON after starts, from the end (-len(after))

    def text(self, payload: str) -> str | None:
        """Return the token ``payload`` holds when it is written in the proved shape, else
        None (then it must be parsed)."""
        if (
            self.proved
            and len(payload) > len(self.before) - self.stop
            and payload.startswith(self.before)
            and payload.endswith(self.after)
        ):
            token = payload[len(self.before) : self.stop]
            if token.isprintable() and '"' not in token and "\\" not in token:  # _plain
                return token
        return None

    def learn(self, payload: str, token: str | None) -> None:
        """Learn from a parsed chunk: ``token`` is its text when it holds text alone."""
        if token is None or not _plain(token):
            return
        at = payload.find(f'"{token}"')
        if at < 0:  # written with an escape after all (a server escaping "/")
            return
        before, after = payload[: at + 1], payload[at + 1 + len(token) :]
        if before != self.before or after != self.after:
            self.before, self.after, self.proved = before, after, None
            self.stop = -len(after)
        elif self.proved is None:
            self.proved = _proved(before, after, token)


def _proved(before: str, after: str, token: str) -> bool:
    """Whether any plain token between ``before`` and ``after`` is a chunk's text alone, as
    ``token`` there was."""
    if _OPENS_STRING.fullmatch(before) is None:
        return False
    other = "y" if token == "x" else "x"
    try:
        chunk = loads_json(before + other + after)
    except ValueError:
        return False
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    return isinstance(choices, list) and _text_alone(chunk, choices) == other


def _plain(token: str) -> bool:
    """Whether ``token`` stands in JSON as itself: no quote, backslash or control character."""
    return token.isprintable() and '"' not in token and "\\" not in token


def _text_alone(chunk: dict[str, Any], choices: list[Any]) -> str | None:
    """Return the text of a parsed chunk that holds text and nothing else, else None."""
    if len(choices) != 1 or chunk.get("usage") is not None:
        return None
    choice = choices[0]
    delta = choice.get("delta") if isinstance(choice, dict) else None
    if not isinstance(delta, dict) or isinstance(choice.get("finish_reason"), str):
        return None
    if _reasoning(delta) or delta.get("tool_calls") or delta.get("annotations"):
        return None
    content = delta.get("content")
    return content if isinstance(content, str) and content else None


def _reasoning(delta: dict[str, Any]) -> str:
    """Return the reasoning a delta carries, from the first field that has some."""
    for name in REASONING_FIELDS:
        value = delta.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _tool_call(entry: dict[str, str]) -> ToolCallRequest:
    raw = entry["arguments"]
    try:
        arguments = loads_json(raw) if raw.strip() else {}
    except ValueError:
        arguments = None
    if not isinstance(arguments, dict):
        arguments = None
    call_id = entry["id"] or f"call_{uuid.uuid4().hex[:24]}"
    return ToolCallRequest(call_id, entry["name"], arguments, raw)


def _sources(annotations: Any) -> list[ProviderEvent]:
    """SourceEvents from ``url_citation`` annotations (OpenAI's search models, OpenRouter)."""
    events: list[ProviderEvent] = []
    for note in annotations if isinstance(annotations, list) else ():
        citation = note.get("url_citation") if isinstance(note, dict) else None
        if isinstance(citation, dict) and isinstance(citation.get("url"), str):
            title = citation.get("title")
            events.append(SourceEvent(citation["url"], title if isinstance(title, str) else None))
    return events
