"""An admin's trial of a plugin's tool: the options its form holds and the tool's input, and
what one run of the tool gave back."""

from __future__ import annotations

from marshmallow import Schema, fields


class ToolTrialBody(Schema):
    """The options as the plugin's form holds them (a blank key keeps the stored one) and the
    input to run the tool with once."""

    options = fields.Dict(load_default=dict, metadata={"title": "Options"})
    input = fields.Dict(required=True, metadata={"title": "Input"})


class ToolTrialSchema(Schema):
    """What one run gave: ``output`` (the tool's, as the model would read it), or ``error``, the
    sentence the admin reads."""

    ok = fields.Boolean(required=True)
    output = fields.Raw()
    error = fields.String()
