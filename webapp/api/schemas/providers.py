"""Model providers: the body admins send (the key write-only), and the models users pick from."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates, validates_schema

from core.models.providers import DEFAULT_CONTEXT_TOKENS, DEFAULT_MAX_TOKENS
from tools.settings import header_safe_key

KINDS = ["openai-compatible"]
MOST_TOKENS = 10_000_000
# Said where a key holds a character an HTTP header cannot carry.
PROVIDER_KEY = header_safe_key("the provider's page")


class ModelSchema(Schema):
    """One model of a provider: whether it can use tools, its answers' length and context."""

    name = fields.String(
        required=True, validate=validate.Length(min=1, max=200), metadata={"title": "Model name"}
    )
    tools = fields.Boolean(load_default=True, metadata={"title": "Tools"})
    maxTokens = fields.Integer(
        allow_none=True,
        validate=validate.Range(min=16, max=MOST_TOKENS),
        metadata={
            "title": "Max tokens",
            "description": f"The most tokens one answer may take (default {DEFAULT_MAX_TOKENS}).",
        },
    )
    default = fields.Boolean(
        allow_none=True,
        metadata={
            "title": "Default",
            "description": "The model the chat selects for someone who has not picked one; "
            "at most one model across all providers.",
        },
    )
    followUps = fields.Boolean(
        allow_none=True,
        metadata={
            "title": "Follow-ups",
            "description": "After each answer, ask the model for three short follow-up "
            "questions, shown as buttons under it (one more model call per answer; off by "
            "default).",
        },
    )
    contextTokens = fields.Integer(
        allow_none=True,
        validate=validate.Range(min=512, max=MOST_TOKENS),
        metadata={
            "title": "Context",
            "description": "The model's context in tokens, prompt and answer together "
            f"(default {DEFAULT_CONTEXT_TOKENS}).",
        },
    )

    @validates_schema
    def answer_fits_context(self, data: dict[str, Any], **_: Any) -> None:
        """Max tokens must leave room in the context for a prompt."""
        answer = data.get("maxTokens") or DEFAULT_MAX_TOKENS
        context = data.get("contextTokens") or DEFAULT_CONTEXT_TOKENS
        if answer >= context:
            raise ValidationError(
                f"Max tokens ({answer}) must be smaller than the context ({context}): the "
                "prompt needs room too. Lower max tokens or raise the context.",
                "maxTokens",
            )


class ProviderSchema(Schema):
    """The body of creating or changing a provider."""

    name = fields.String(
        required=True, validate=validate.Length(min=1, max=100), metadata={"title": "Name"}
    )
    kind = fields.String(
        load_default="openai-compatible",
        validate=validate.OneOf(KINDS),
        metadata={"title": "Kind"},
    )
    baseUrl = fields.Url(
        required=True,
        schemes={"http", "https"},
        require_tld=False,
        metadata={"title": "Base URL"},
    )
    apiKey = fields.String(
        allow_none=True, validate=PROVIDER_KEY, metadata={"secret": True, "title": "API key"}
    )
    models = fields.List(
        fields.Nested(ModelSchema), load_default=list, metadata={"title": "Models"}
    )

    @validates("name")
    def no_slash(self, value: str, **_: Any) -> None:
        """Provider names may not contain "/": model ids split at the first one."""
        if "/" in value:
            raise ValidationError('A provider name may not contain "/".')

    @validates("models")
    def one_default(self, value: list[dict[str, Any]], **_: Any) -> None:
        """At most one model is the default."""
        chosen = [m["name"] for m in value if m.get("default")]
        if len(chosen) > 1:
            raise ValidationError(
                f"Only one model can be the default, not {', '.join(chosen)}. Untick Default "
                "for all but one."
            )


class ProviderChange(ProviderSchema):
    """The body of changing a provider: any of its fields; those left out stay as they are."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["partial"] = True
        super().__init__(*args, **kwargs)


class ProviderAnswer(Schema):
    """A provider as admins read it: whether a key is set, never the key."""

    id = fields.String()
    name = fields.String()
    kind = fields.String()
    baseUrl = fields.String(attribute="base_url")
    keySet = fields.Function(lambda provider: bool(provider.api_key), metadata={"type": "boolean"})
    models = fields.List(fields.Nested(ModelSchema), allow_none=True)


class ProviderListSchema(Schema):
    """Every provider, keys left out."""

    providers = fields.List(fields.Nested(ProviderAnswer))


class ConnectionSettingsSchema(Schema):
    """The body of testing a provider before it is saved: where it is and its key."""

    name = fields.String(
        load_default="new", validate=validate.Length(max=100), metadata={"title": "Name"}
    )
    baseUrl = fields.Url(
        required=True, schemes={"http", "https"}, require_tld=False, metadata={"title": "Base URL"}
    )
    apiKey = fields.String(
        allow_none=True, validate=PROVIDER_KEY, metadata={"secret": True, "title": "API key"}
    )


class ModelFindingSchema(Schema):
    """What a connection test found about one listed model: its context size when the server
    reports it, and whether one tool call worked (true), was refused (false) or is unknown."""

    name = fields.String(required=True)
    contextTokens = fields.Integer(allow_none=True)
    tools = fields.Boolean(allow_none=True)


class ConnectionTestSchema(Schema):
    """What a worker saw listing a provider's models: the models, or a sentence saying why not;
    ``found`` per model, and ``note`` a sentence for the admin about what was not probed."""

    ok = fields.Boolean(required=True)
    models = fields.List(fields.String())
    found = fields.List(fields.Nested(ModelFindingSchema))
    note = fields.String()
    error = fields.String()


class ModelChoiceSchema(Schema):
    """A model a user can pick: ``id`` is ``provider/name``."""

    id = fields.String()
    provider = fields.String()
    name = fields.String()
    tools = fields.Boolean()
    default = fields.Boolean(metadata={"description": "The model an admin chose as the default."})


class ModelChoiceListSchema(Schema):
    """Every model of every provider."""

    models = fields.List(fields.Nested(ModelChoiceSchema))
