"""Plugins: users' tool switches and settings, admins' options; the forms' JSON Schemas inside.

Settings and options are each plugin's own (its marshmallow schemas, served as JSON Schema in
``schema``), so their bodies are ``FreeForm`` objects.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields

FORM_SCHEMA = {"description": "The JSON Schema of the form, or null when there is none."}


class JsonBoolean(fields.Boolean):
    """true or false only: marshmallow's Boolean also takes 1, 0, "yes" and "off"."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class ToolSwitchBody(Schema):
    """The body of switching a tool on or off."""

    enabled = JsonBoolean(
        required=True,
        error_messages={"required": "Must be a boolean.", "invalid": "Must be a boolean."},
        metadata={"title": "Enabled"},
    )


class ToolSwitchSchema(Schema):
    """The stored switch."""

    name = fields.String()
    enabled = fields.Boolean()
    userToggle = fields.Boolean()


class UserToolSchema(ToolSwitchSchema):
    """A tool of a plugin on the user's settings page: its switch, and what it does."""

    description = fields.String()


class SavedSettingsSchema(Schema):
    """The user's settings for a plugin as stored, secrets masked."""

    id = fields.String()
    settings = fields.Dict()
    secretsSet = fields.Dict(keys=fields.String(), values=fields.Boolean())


class UserPluginSchema(SavedSettingsSchema):
    """One plugin's block of the settings page: the user's saved settings, with the plugin's
    title, its tools and the form's JSON Schema."""

    title = fields.String()
    tools = fields.List(fields.Nested(UserToolSchema))
    schema = fields.Dict(allow_none=True, metadata=FORM_SCHEMA)


class UserPluginListSchema(Schema):
    """Each plugin with user settings or a switchable tool."""

    plugins = fields.List(fields.Nested(UserPluginSchema))


class OfferedToolSchema(Schema):
    """A tool the user's messages offer a tool-capable model by default."""

    name = fields.String()
    plugin = fields.String()
    pluginTitle = fields.String()
    userToggle = fields.Boolean()


class OfferedToolListSchema(Schema):
    """The tools offered by default."""

    tools = fields.List(fields.Nested(OfferedToolSchema))


class AdminPluginSchema(Schema):
    """A plugin as admins see it: status, why it is not active, options (secrets masked)."""

    id = fields.String()
    title = fields.String()
    status = fields.String(metadata={"enum": ["active", "needs-configuration", "failed"]})
    reason = fields.String(allow_none=True)
    fields_ = fields.Dict(
        data_key="fields",
        attribute="fields",
        keys=fields.String(),
        values=fields.List(fields.String()),
    )
    notices = fields.List(fields.String())
    offerOption = fields.String(
        allow_none=True,
        metadata={
            "description": "The boolean option that offers the plugin's tools to everyone, "
            "when some tool is offered to nobody by default (web_search's enabledByDefault); "
            "null otherwise."
        },
    )
    schema = fields.Dict(allow_none=True, metadata=FORM_SCHEMA)
    options = fields.Dict()
    secretsSet = fields.Dict(keys=fields.String(), values=fields.Boolean())
    tools = fields.List(fields.String())
    hasCatalog = fields.Boolean()


class AdminPluginListSchema(Schema):
    """Every listed plugin."""

    plugins = fields.List(fields.Nested(AdminPluginSchema))
