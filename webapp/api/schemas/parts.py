"""How a message's parts read in the API: one schema for every part type, and a reply's
checked citations (``core.turn.parts`` and ``core.turn.checks`` make them)."""

from __future__ import annotations

from marshmallow import Schema, fields

CITATION_STATUSES = ("supported", "partly", "not_found", "snippet_only", "no_such_source")


class PassageSchema(Schema):
    """The passage of the source's read text the check found for a sentence."""

    start = fields.Integer(metadata={"description": "Offset of its start in the read text."})
    end = fields.Integer(metadata={"description": "Offset of its end in the read text."})
    text = fields.String(metadata={"description": "The passage, cut to 1,000 characters."})


class CitationSchema(Schema):
    """One ``[n]`` marker of a reply's text, checked against what the turn read of source n."""

    number = fields.Integer(metadata={"description": "The source's number in the reply."})
    url = fields.String(allow_none=True, metadata={"description": "None: no such source."})
    title = fields.String(allow_none=True)
    readAt = fields.String(
        allow_none=True, metadata={"description": "When the call that read it ended (ISO 8601)."}
    )
    status = fields.String(
        metadata={
            "enum": list(CITATION_STATUSES),
            "description": "supported, partly (the passage misses some of the sentence's facts: "
            "`missing`), not_found (in what was read), snippet_only (only a search snippet "
            "was read: checked against it), no_such_source (the number names no source).",
        }
    )
    marker = fields.List(fields.Integer(), metadata={"description": "[start, end] in the text."})
    sentence = fields.List(
        fields.Integer(), metadata={"description": "[start, end] of the cited sentence."}
    )
    passage = fields.Nested(PassageSchema, allow_none=True)
    missing = fields.List(
        fields.String(), metadata={"description": "The sentence's facts the passage lacks."}
    )


class PartSchema(Schema):
    """One part of a message; which keys it has depends on its ``type``: text (``text``, and
    ``citations`` once its turn ended, when it has ``[n]`` markers), tool-call (``id``,
    ``name``, ``input``), tool-result (``callId``, ``name``, ``outcome``, ``output`` or
    ``error``, ``sources``), source (``url``, ``title``, ``number``), attachment
    (``uploadId``, ``filename``, ``mimeType``), reasoning (``text``: what the model thought
    before answering, never sent back to it), follow-ups (``questions``: up to three to ask
    next)."""

    type = fields.String(
        metadata={
            "enum": [
                "text",
                "tool-call",
                "tool-result",
                "source",
                "attachment",
                "reasoning",
                "follow-ups",
            ]
        }
    )
    text = fields.String()
    citations = fields.List(fields.Nested(CitationSchema))
    id = fields.String()
    name = fields.String()
    input = fields.Raw()
    callId = fields.String()
    outcome = fields.String()
    output = fields.Raw(allow_none=True)
    error = fields.String(allow_none=True)
    sources = fields.List(
        fields.Integer(), metadata={"description": "The numbers of the sources it cites."}
    )
    url = fields.String()
    title = fields.String(allow_none=True)
    number = fields.Integer(metadata={"description": "The source's number: [n] in the text."})
    uploadId = fields.String()
    filename = fields.String()
    mimeType = fields.String()
    questions = fields.List(fields.String())
