"""``POST /v1/chat/completions``: a request's messages answered by a Lookout turn, streamed or not.

The turn runs on the workers like any other (quotas, usage, the user's tools, or those named in
``lookout.tools``), in a conversation made for the request (``conversations.py``). A client that
goes away cancels the turn: a streamed answer notices when a write to it fails, a whole one
when its connection reads as closed (``following.client_gone``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import redis
from flask import Flask, Response, current_app, jsonify, request
from flask_login import current_user

from core import plugin_host
from core.models import Turn
from core.models.providers import find_model
from core.turn import lifecycle
from core.turn.events import REASONING_DELTA, TEXT_DELTA
from core.turn.lifecycle import TurnRefused
from core.turn.state import TurnState, turn_state
from webapp import queue
from webapp.api.bodies import load_json
from webapp.api.operations import EVENT_STREAM, JSON, operation
from webapp.auth.guards import api_login_required
from webapp.openai_api import answers
from webapp.openai_api.conversations import CLIENT_TOOLS, make_conversation
from webapp.openai_api.errors import OpenAIError, error_body
from webapp.openai_api.following import (
    client_gone,
    follow_turn,
    read_ended,
    stop_turn,
)
from webapp.openai_api.routes import bp
from webapp.openai_api.schemas import (
    CompletionChunkSchema,
    CompletionRequest,
    CompletionSchema,
    OpenAIErrorSchema,
)

FOLLOW_LOST = (
    "Lookout lost track of the answer because Redis could not be read. The answer goes on in "
    "your conversation: read it there, or send the request again in a moment."
)
CANCELLED = "The answer was cancelled before it was complete. Send the request again."


def read_request() -> dict[str, Any]:
    """Return the checked body; 400 for a bad one or client-side tools, 404 for a model that
    is not installed."""
    data = load_json(CompletionRequest, "request")
    for what in ("tools", "functions"):
        if data.get(what):
            raise OpenAIError(CLIENT_TOOLS.format(what=what), 400, what, "tools_not_supported")
    if data.get("tool_choice") not in (None, "none", "auto"):
        raise OpenAIError(
            CLIENT_TOOLS.format(what="tool_choice"), 400, "tool_choice", "tools_not_supported"
        )
    found = find_model(data["model"])
    if found is None:
        raise OpenAIError(
            f"The model {data['model']} does not exist here. List the installed models with "
            "GET /v1/models, and send one of their ids.",
            404,
            "model",
            "model_not_found",
        )
    check_named_tools((data.get("lookout") or {}).get("tools") or [], data["model"], found[1])
    return data


def check_named_tools(names: list[str], model_id: str, model: dict[str, Any]) -> None:
    """Refuse (400) tools named in ``lookout.tools`` that the turn could not offer: a name
    no plugin or tool source has, or any name for a model that cannot use tools. Started,
    the turn failed on its first step, a 502 for the client's mistake."""
    if not names:
        return
    if not model.get("tools"):
        raise OpenAIError(
            f"The model {model_id} cannot use tools. Pick another model, or leave out "
            "lookout.tools.",
            400,
            "lookout.tools",
            "tools_not_supported",
        )
    host = plugin_host.get_host()
    unknown = [name for name in dict.fromkeys(names) if host.find_tool(name) is None]
    sources = host.source_tools() if unknown else {}
    unknown = [name for name in unknown if name not in sources]
    if unknown:
        raise OpenAIError(
            f"The tool {unknown[0]} is not available. Check the names in lookout.tools, or "
            "ask an admin whether its plugin is installed and configured.",
            400,
            "lookout.tools",
            "tool_not_found",
        )


def start(data: dict[str, Any]) -> Turn:
    """Store the request as a conversation and start its turn; return the turn."""
    conversation, question = make_conversation(current_user.id, data["messages"])
    tools = (data.get("lookout") or {}).get("tools")
    generation = {} if tools is None else {"tools": tools}
    try:
        return lifecycle.start_turn(
            conversation,
            question,
            data["model"],
            generation,
            current_user.roles,
            send=queue.send_first_step,
        )
    except TurnRefused as refused:
        raise OpenAIError(
            refused.message, refused.status, retry_after=refused.retry_after
        ) from refused


@bp.post("/chat/completions")
@api_login_required
@operation(
    body=CompletionRequest,
    answers={200: {JSON: CompletionSchema, EVENT_STREAM: CompletionChunkSchema}},
    errors=(404, 429, 502, 503),
    error_schema=OpenAIErrorSchema,
)
def create_completion():
    """Answer the messages with a Lookout turn that may search and read the web.

    With ``stream`` true the answer comes as Server-Sent Events of ``chat.completion.chunk``s;
    otherwise whole, once the turn ends. The answer ends with its sources as numbered Markdown
    links, and carries them in ``lookout.sources``. Closing the request cancels the turn.
    """
    data = read_request()
    turn = start(data)
    app = current_app._get_current_object()
    if data.get("stream"):
        include_usage = bool((data.get("stream_options") or {}).get("include_usage"))
        return Response(
            stream_answer(app, turn_state(turn.id), include_usage),
            mimetype=EVENT_STREAM,
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return whole_answer(app, turn.id)


def whole_answer(app: Flask, turn_id: str) -> Response:
    """Wait for the turn to end and answer it as a ``chat.completion``; cancel it when the
    client goes away meanwhile."""
    environ = request.environ
    try:
        for _followed in follow_turn(app, turn_state(turn_id)):
            if client_gone(environ):  # a cheap peek at the socket, after each event or second
                stop_turn(app, turn_id)
                return Response(status=499)  # nobody reads it
    except redis.RedisError as exc:
        raise OpenAIError(FOLLOW_LOST, 503) from exc
    turn, parts = read_ended(app, turn_id)
    if turn.status == "completed":
        return jsonify(answers.make_completion(turn, parts))
    raise OpenAIError(turn.error or CANCELLED, 502, code=f"turn_{turn.status}", retry=False)


def stream_answer(app: Flask, state: TurnState, include_usage: bool) -> Iterator[str]:
    """Yield the turn's answer as Server-Sent Events; cancel the turn when the client goes
    away (a write fails, and the server closes this generator)."""
    turn_id = state.turn_id
    ended = False
    try:
        turn, _parts = read_ended(app, turn_id)
        yield answers.event(answers.make_chunk(turn, {"role": "assistant", "content": ""}))
        try:
            for followed in follow_turn(app, state):
                if followed is None:
                    yield ": keep-alive\n\n"  # a client that went away fails this write
                    continue
                name, event_data = followed
                if name == TEXT_DELTA and event_data.get("text"):
                    yield answers.event(answers.make_chunk(turn, {"content": event_data["text"]}))
                elif name == REASONING_DELTA and event_data.get("text"):
                    delta = {"reasoning_content": event_data["text"]}
                    yield answers.event(answers.make_chunk(turn, delta))
        except redis.RedisError:
            ended = True  # the turn goes on: the client may read it in the conversation
            yield answers.event(error_body(FOLLOW_LOST, 503))
            yield answers.DONE
            return
        ended = True
        yield from ending_chunks(app, turn_id, include_usage)
    finally:
        if not ended:
            stop_turn(app, turn_id)


def ending_chunks(app: Flask, turn_id: str, include_usage: bool) -> Iterator[str]:
    """Yield what follows a turn's text: its sources and finish (or its error), then usage
    when asked, then ``[DONE]``."""
    turn, parts = read_ended(app, turn_id)
    if turn.status == "completed":
        sources = answers.numbered_sources(parts)
        if sources:
            markdown = answers.sources_markdown(sources)
            yield answers.event(answers.make_chunk(turn, {"content": markdown}))
        lookout = answers.lookout_field(turn, sources)
        yield answers.event(answers.make_chunk(turn, {}, "stop", lookout=lookout))
    else:
        yield answers.event(error_body(turn.error or CANCELLED, 502, code=f"turn_{turn.status}"))
    if include_usage:
        yield answers.event(answers.usage_chunk(turn))
    yield answers.DONE
