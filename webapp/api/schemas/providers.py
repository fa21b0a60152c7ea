"""Model providers: the body admins send (the key write-only), and the models users pick from."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates

KINDS = ["openai-compatible"]


class ModelSchema(Schema):
    """One model of a provider and whether it can use tools."""

    name = fields.String(
        required=True, validate=validate.Length(min=1, max=200), metadata={"title": "Model name"}
    )
    tools = fields.Boolean(load_default=True, metadata={"title": "Tools"})


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
    apiKey = fields.String(allow_none=True, metadata={"secret": True, "title": "API key"})
    models = fields.List(
        fields.Nested(ModelSchema), load_default=list, metadata={"title": "Models"}
    )

    @validates("name")
    def no_slash(self, value: str, **_: Any) -> None:
        """Provider names may not contain "/": model ids split at the first one."""
        if "/" in value:
            raise ValidationError('A provider name may not contain "/".')


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


class ConnectionTestSchema(Schema):
    """What a worker saw listing a provider's models: the models, or a sentence saying why not."""

    ok = fields.Boolean(required=True)
    models = fields.List(fields.String())
    error = fields.String()


class ModelChoiceSchema(Schema):
    """A model a user can pick: ``id`` is ``provider/name``."""

    id = fields.String()
    provider = fields.String()
    name = fields.String()
    tools = fields.Boolean()


class ModelChoiceListSchema(Schema):
    """Every model of every provider."""

    models = fields.List(fields.Nested(ModelChoiceSchema))
