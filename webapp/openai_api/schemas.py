"""The bodies and answers of the OpenAI-compatible API, as OpenAI's clients send and read them.

Keys are snake_case, as OpenAI spells them. A request may carry fields Lookout does not use
(sampling settings such as ``temperature``): they are ignored, since the administrator's model
settings apply. Lookout's own additions sit under one key, ``lookout``, in the request and in
the answer.
"""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields, validate

ROLES = ("system", "developer", "user", "assistant", "tool", "function")


class CompletionMessageSchema(Schema):
    """One message of the request: its role and its text (a string, or a list of text parts)."""

    class Meta:
        unknown = EXCLUDE

    error_messages = {
        "type": 'Send each message as an object, such as {"role": "user", "content": "Hello"}.'
    }

    role = fields.String(required=True, validate=validate.OneOf(ROLES))
    content = fields.Raw(
        allow_none=True,
        metadata={"description": "A string, or a list of {type: text, text} parts."},
    )
    # Null as OpenAI's clients send them back in an answer's message (``model_dump()``).
    name = fields.String(allow_none=True)
    tool_calls = fields.Raw(
        allow_none=True, metadata={"description": "Refused: Lookout runs its own tools."}
    )


class StreamOptionsSchema(Schema):
    """What a streamed answer adds: ``include_usage`` ends it with a chunk of token usage."""

    class Meta:
        unknown = EXCLUDE

    error_messages = {
        "type": 'Send stream_options as an object, such as {"include_usage": true}, or leave '
        "it out."
    }

    include_usage = fields.Boolean(load_default=False)


class LookoutOptionsSchema(Schema):
    """Lookout's extension of the request: which of its tools the turn may use."""

    error_messages = {
        "type": 'Send lookout as an object, such as {"tools": ["web_search"]}, or leave it out.'
    }

    tools = fields.List(
        fields.String(),
        allow_none=True,
        metadata={
            "description": "The tools the turn may use, by name (web_search, web_fetch, ...); "
            "left out or null: the tools the user has enabled; empty: none."
        },
    )


class CompletionRequest(Schema):
    """The body of ``POST /v1/chat/completions``."""

    class Meta:
        unknown = EXCLUDE

    model = fields.String(
        required=True,
        validate=validate.Length(min=1, max=300),
        metadata={"description": "A model id from GET /v1/models: provider/model."},
    )
    messages = fields.List(
        fields.Nested(CompletionMessageSchema),
        required=True,
        validate=validate.Length(min=1, max=500, error="Send 1 to 500 messages."),
    )
    stream = fields.Boolean(load_default=False, allow_none=True)
    stream_options = fields.Nested(StreamOptionsSchema, allow_none=True)
    n = fields.Integer(
        allow_none=True,
        validate=validate.Equal(1, error="Lookout writes one answer per request: send n=1."),
    )
    tools = fields.List(
        fields.Raw(),
        allow_none=True,
        metadata={"description": "Refused unless empty: Lookout runs its own tools."},
    )
    tool_choice = fields.Raw(allow_none=True)
    functions = fields.List(fields.Raw(), allow_none=True)
    lookout = fields.Nested(LookoutOptionsSchema, allow_none=True)


class OpenAIModelSchema(Schema):
    """One model, as OpenAI lists it."""

    id = fields.String(required=True, metadata={"description": "provider/model"})
    object = fields.String(required=True, metadata={"description": "Always model."})
    created = fields.Integer(required=True)
    owned_by = fields.String(required=True, metadata={"description": "Its provider's name."})


class OpenAIModelListSchema(Schema):
    """Every installed model."""

    object = fields.String(required=True)
    data = fields.List(fields.Nested(OpenAIModelSchema), required=True)


class CompletionSourceSchema(Schema):
    """A page the answer cites, numbered as in the answer's Sources list."""

    number = fields.Integer(required=True)
    url = fields.String(required=True)
    title = fields.String(allow_none=True)


class LookoutAnswerSchema(Schema):
    """Lookout's extension of the answer: where the turn is stored, and its sources."""

    conversationId = fields.String(required=True)
    turnId = fields.String(required=True)
    sources = fields.List(fields.Nested(CompletionSourceSchema), required=True)


class CompletionUsageSchema(Schema):
    """The turn's tokens, over every step the model took."""

    prompt_tokens = fields.Integer(required=True)
    completion_tokens = fields.Integer(required=True)
    total_tokens = fields.Integer(required=True)
    completion_tokens_details = fields.Dict(
        metadata={
            "description": "``reasoning_tokens``: the completion tokens the model spent "
            "reasoning; left out when it spent none."
        }
    )


class AnswerMessageSchema(Schema):
    """The assistant's answer."""

    role = fields.String(required=True)
    content = fields.String(required=True)
    reasoning_content = fields.String(
        metadata={"description": "What the model reasoned first; left out when it did not."}
    )


class CompletionChoiceSchema(Schema):
    """The one answer of a completion."""

    index = fields.Integer(required=True)
    message = fields.Nested(AnswerMessageSchema, required=True)
    finish_reason = fields.String(required=True)


class CompletionSchema(Schema):
    """A ``chat.completion``: the answer, its usage and Lookout's extension."""

    id = fields.String(required=True)
    object = fields.String(required=True)
    created = fields.Integer(required=True)
    model = fields.String(required=True)
    choices = fields.List(fields.Nested(CompletionChoiceSchema), required=True)
    usage = fields.Nested(CompletionUsageSchema, required=True)
    lookout = fields.Nested(LookoutAnswerSchema, required=True)


class CompletionChunkSchema(Schema):
    """One Server-Sent Event of a streamed answer: ``data:`` a ``chat.completion.chunk``
    (text in ``choices[0].delta.content``, reasoning in ``choices[0].delta.reasoning_content``;
    the last has ``finish_reason`` and ``lookout``, then
    a chunk with ``usage`` when asked), or an error in OpenAI's shape; then ``data: [DONE]``."""

    data = fields.String(required=True)


class OpenAIErrorDetail(Schema):
    """What went wrong, as a sentence that says what to do."""

    message = fields.String(required=True)
    type = fields.String(required=True)
    param = fields.String(required=True, allow_none=True)
    code = fields.String(required=True, allow_none=True)


class OpenAIErrorSchema(Schema):
    """Every error answer under /v1/, in OpenAI's shape."""

    error = fields.Nested(OpenAIErrorDetail, required=True)
