"""The client for OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM...).

Retries: a 429, a 5xx or a connection failure that happens before the first event reached the
caller is retried up to ``max_retries`` times, after 0.5 s, 1 s, 2 s (or the provider's
``Retry-After`` when it asks for at most ``retry_after_cap`` seconds; a longer wait fails at
once). After the first event an error ends the stream, so no text is ever repeated.

Time bounds: ``timeout`` bounds the silence between two bytes (httpx's read timeout);
``first_token_timeout`` the time from the request to the answer's first text or tool call, and
``answer_timeout`` the whole answer. The last two are checked on every line the server sends,
so a busy server's keep-alive comments (``: ping`` every 15 s from llama.cpp) cannot hold a turn
past them: they are time, not an answer.

Reads: with ``read_interval``, the stream is read at most that often once the answer has
started (the worker reads at its text batches' interval, ``workers.runtime``): the tokens that
come meanwhile wait in the socket and come in one read, as one event, where each token cost the
reading thread a wake-up of its own, most of a token's CPU (docs/benchmarks.md). The read after
the first token's waits too, unless more comes within ``END_GRACE_SECONDS`` (an answer's end
sent right after it).

Cancellation: the caller's ``Signal`` is checked before each attempt and between reads, wakes
a retry wait or a wait between reads at once, and, through its ``on_cancel`` hook, shuts the
stream's socket down the moment it trips, so a stream stuck waiting for its next token closes
at once (no thread polls it). Either way the stream is closed and ProviderCancelled is raised.
"""

from __future__ import annotations

import functools
import json
import logging
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from typing import Any

import httpx2
import openai

from tools.api import Signal
from workers.providers.base import (
    ChatMessage,
    ProviderCancelled,
    ProviderError,
    ProviderEvent,
    ReasoningDelta,
    TextDelta,
    ToolSpec,
)
from workers.providers.body import body_chunks
from workers.providers.chunks import DONE, EventStream, ReplyAssembler
from workers.providers.openai_errors import (
    ProviderIdentity,
    answer_too_slow,
    empty_answer,
    no_first_token,
    translate,
    unreadable,
)
from workers.providers.tokens import message_chars, tool_chars

log = logging.getLogger(__name__)

Wait = Callable[[float, Signal], None]
# After the read that holds an answer's first token, how long bytes that follow at once (the
# end of a one-token answer, sent with it) are waited for before the read waits its interval.
END_GRACE_SECONDS = 0.005


def wait_unless_cancelled(seconds: float, signal: Signal) -> None:
    """Sleep ``seconds``, returning early once ``signal`` trips."""
    signal.wait(seconds)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One SSL context for every provider: loading the CA store costs 50-200 ms a client."""
    return httpx2.create_ssl_context()


class OpenAICompatibleProvider:
    """A ChatProvider for any server speaking OpenAI's chat-completions API."""

    def __init__(
        self,
        name: str,
        base_url: str,
        api_key: str | None,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        first_token_timeout: float | None = None,
        answer_timeout: float | None = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        retry_after_cap: float = 10.0,
        read_interval: float = 0.0,
        wait: Wait = wait_unless_cancelled,
    ) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.backoff = backoff
        self.retry_after_cap = retry_after_cap
        self.first_token_timeout = first_token_timeout or timeout
        self.answer_timeout = answer_timeout
        self.read_interval = read_interval
        self._wait = wait
        # A keyless local server (Ollama, llama.cpp) gets a placeholder: given None, the SDK
        # would read OPENAI_API_KEY from the environment and send it to this provider.
        key = api_key or "not-needed"
        self._who = ProviderIdentity(name, self.base_url, key)
        limits = openai.Timeout(timeout, connect=min(connect_timeout, timeout))
        self._http = openai.DefaultHttpxClient(verify=_ssl_context(), timeout=limits)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=key,
            max_retries=0,
            timeout=limits,
            http_client=self._http,
        )
        # What the client's build_request merged for every call, merged once: the URL parsed,
        # the client's default headers under ours (at the first call: a key a header cannot
        # carry fails there, as a ProviderError), its timeout.
        self._completions_url = httpx2.URL(f"{self.base_url}/chat/completions")
        self._headers: httpx2.Headers | None = None
        self._extensions = {"timeout": self._http.timeout.as_dict()}

    def _merged_headers(self) -> httpx2.Headers:
        """The headers of every model call, merged at the first."""
        if self._headers is None:
            headers = httpx2.Headers(self._http.headers)
            headers.update(
                {
                    "Authorization": f"Bearer {self._who.api_key}",
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                    "User-Agent": self._client.user_agent,
                }
            )
            self._headers = headers
        return self._headers

    def close(self) -> None:
        """Release the provider's pooled connections."""
        self._client.close()

    def __enter__(self) -> OpenAICompatibleProvider:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def list_models(self) -> list[str]:
        """The model ids from ``GET /models``; raises ProviderError (used to test a connection)."""
        return [model["id"] for model in self.describe_models()]

    def describe_models(self) -> list[dict[str, Any]]:
        """The entries of ``GET /models`` as the server sent them, each with its ``id``; raises
        ProviderError in words for the admin testing the connection."""
        try:
            page = self._client.models.list()
            return [model.model_dump() for model in page]
        except (openai.OpenAIError, ValueError) as exc:
            raise translate(exc, self._who, None, streaming=False, admin=True) from exc

    def stream(
        self,
        model: str,
        messages: list[ChatMessage],
        tools: list[ToolSpec] | None = None,
        signal: Signal | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ProviderEvent]:
        """Stream one model call; see ChatProvider.stream for the events and errors."""
        signal = signal or Signal()
        progress = _Progress()
        body: dict[str, Any] = {"messages": messages}
        if tools:
            # Without tool_choice, llama.cpp's server leaves the tools out of the prompt.
            body["tools"] = [tool.to_openai() for tool in tools]
            body["tool_choice"] = "auto"
        if max_tokens:
            body["max_tokens"] = max_tokens

        def prompt_chars() -> int:  # the tools' JSON each step, for a server that counts none
            return message_chars(messages) + tool_chars(body.get("tools", ()))

        for attempt in range(self.max_retries + 1):
            if signal.cancelled:
                raise ProviderCancelled
            try:
                reply = ReplyAssembler(self._who, max_tokens, prompt_chars)
                yield from self._stream_once(model, body, reply, signal, progress)
                return
            except ProviderError as error:
                delay = self._retry_delay(error, attempt)
                if progress.started or delay is None:
                    raise
                log.warning(
                    "provider=%s model=%s status=%s retry=%d delay_s=%.2f",
                    self.name, model, error.status, attempt + 1, delay,
                )  # fmt: skip
                self._wait(delay, signal)

    def _retry_delay(self, error: ProviderError, attempt: int) -> float | None:
        """Seconds to wait before retrying ``error``, or None when it must not be retried."""
        if not error.retryable or attempt >= self.max_retries:
            return None
        if error.retry_after is None:
            return self.backoff * 2**attempt
        if error.retry_after > self.retry_after_cap:
            return None
        return error.retry_after

    def _stream_once(
        self,
        model: str,
        body: dict[str, Any],
        reply: ReplyAssembler,
        signal: Signal,
        progress: _Progress,
    ) -> Iterator[ProviderEvent]:
        # Sent through the SDK's HTTP client but not through the SDK: its request machinery
        # (options, headers, the body's transform) cost a model step about as much CPU as
        # sending the request did, and the stream is read here anyway. A refusal still becomes
        # the SDK's own error, so ``translate`` reads it as before.
        payload = {"model": model, "stream": True, "stream_options": {"include_usage": True}}
        payload.update(body)
        clock = _Clock(time.monotonic())
        try:
            request = httpx2.Request(
                "POST",
                self._completions_url,
                headers=self._merged_headers(),
                cookies=self._http.cookies,  # a server's (a balancer's), as build_request does
                content=json.dumps(payload),
                extensions=self._extensions,
            )
            response = self._http.send(request, stream=True)
            try:
                if response.status_code >= 400:
                    response.read()
                    raise self._client._make_status_error_from_response(response)
                yield from self._read(response, reply, signal, progress, clock)
            finally:
                response.close()
        except (openai.OpenAIError, httpx2.HTTPError, httpx2.StreamError, ValueError) as exc:
            if signal.cancelled:
                raise ProviderCancelled from exc
            raise translate(exc, self._who, model, progress.started) from exc

    def _read(
        self,
        response: httpx2.Response,
        reply: ReplyAssembler,
        signal: Signal,
        progress: _Progress,
        clock: _Clock,
    ) -> Iterator[ProviderEvent]:
        """The events of an open event stream; closes it when the signal trips."""
        undo = signal.on_cancel(lambda: _shut(response))
        seen = False
        try:
            events = EventStream()
            body = body_chunks(response)
            for payloads in events.batches(self._bounded(body, clock, signal, body.ready)):
                if signal.cancelled:
                    raise ProviderCancelled
                seen = seen or payloads[0] != DONE  # DONE ends a read's payloads
                # the error after what came before it in the read
                found, failure = reply.add_read(payloads, join=bool(self.read_interval))
                if found:
                    progress.started = clock.answering = clock.paced = True
                    yield from joined(found) if self.read_interval else found
                elif reply.calling:  # a call's fragments yield nothing until the end
                    clock.paced = True
                if failure is not None:
                    raise failure
            if not signal.cancelled:
                body.finish()  # the body's last chunk, after [DONE]: the connection is kept
            undo()  # before the pool hands the connection to another call
            if signal.cancelled:
                raise ProviderCancelled
            if not seen and not events.spoke:  # an HTTP 200 with nothing in it
                raise empty_answer(self._who)
            if not seen:  # e.g. a server that ignored stream=True and sent one JSON body
                raise unreadable(self._who)
            for event in reply.finish():
                progress.started = True
                yield event
        finally:
            undo()
            response.close()

    def _bounded(
        self,
        chunks: Iterable[bytes],
        clock: _Clock,
        signal: Signal,
        ready: Callable[[float], bool] = lambda seconds: True,
    ) -> Iterator[bytes]:
        """``chunks``, raising ProviderError once the first token or the whole answer is late,
        and read no more often than ``read_interval`` once the answer has started, or a tool
        call's arguments (read as they came, each fragment cost a wake-up).

        After the read that holds the first token, bytes that come within END_GRACE_SECONDS
        (``ready``) are read at once: an answer whose end came with or right after its first
        token never waits. Else that read waits too: taken at once, the second token cost a
        wake-up of its own, and the text thread two or three (text held within the first
        send's batch).

        Checked on every read, comments included: a server that pings while it is busy
        elsewhere is bounded by these, and one wholly silent by the read timeout.
        """
        for chunk in chunks:
            elapsed = time.monotonic() - clock.started
            if not clock.answering and elapsed > self.first_token_timeout:
                raise no_first_token(self._who, self.first_token_timeout)
            if self.answer_timeout is not None and elapsed > self.answer_timeout:
                raise answer_too_slow(self._who, self.answer_timeout)
            streaming = clock.paced
            yield chunk
            if not self.read_interval or not clock.paced:
                continue
            pause = self.read_interval
            if not streaming:  # the first token's read (or tool call's)
                grace = min(END_GRACE_SECONDS, pause)
                if ready(grace):
                    continue
                pause -= grace
            # The caller has taken this read's events; the tokens that come meanwhile gather
            # in the socket and come in one read, not one wake-up each. A cancel wakes the
            # wait (and the next check raises).
            signal.wait(pause)


def joined(events: list[ProviderEvent]) -> list[ProviderEvent]:
    """Return ``events`` with each run of text (or of reasoning) joined into one event: the
    tokens that came in one read go on as one, and cost the caller one event."""
    if len(events) < 2:
        return events
    out: list[ProviderEvent] = []
    for kind, run in groupby(events, type):
        if kind is TextDelta or kind is ReasoningDelta:
            out.append(kind("".join(event.text for event in run)))
        else:
            out.extend(run)
    return out


class _Clock:
    """When one model call was asked for, whether its answer has started (its first text or
    reasoning) and whether its reads are paced (that, or a tool call's first fragment)."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.answering = False
        self.paced = False


class _Progress:
    """Whether any event of this call reached the caller (then it must not be retried)."""

    started = False


def _shut(response: Any) -> None:
    """Wake a read of ``response`` blocked in another thread: shut its socket down.

    Closing the response from another thread would not wake the reader blocked in recv();
    shutting the socket down does, and the reader then sees the stream end.
    """
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
