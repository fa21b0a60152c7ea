"""Objects whose keys another schema names: a plugin's settings, options and catalog (its own
schemas say what they hold), and the OpenAPI description itself."""

from __future__ import annotations

from marshmallow import INCLUDE, Schema


class FreeForm(Schema):
    """Any JSON object; what its keys mean is described elsewhere."""

    class Meta:
        unknown = INCLUDE
