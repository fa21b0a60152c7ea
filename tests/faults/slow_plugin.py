"""A plugin that takes seconds to start, as one loading a large library or model would."""

from __future__ import annotations

import time

from marshmallow import Schema

from tools.api import Plugin

START_SECONDS = 5


class Empty(Schema):
    pass


def setup(ctx):
    time.sleep(START_SECONDS)


plugin = Plugin(id="slow_plugin", options_schema=Empty, setup=setup)
