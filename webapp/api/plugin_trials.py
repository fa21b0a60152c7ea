"""Admins try a plugin's tool once with the options in its form, saved or not (the plugins
page's "Test search"); a worker runs it, as every tool runs, and the request awaits the answer.

The options are checked here as a save checks them, then sent sealed with the secrets key, so
the task queue never holds a key in clear and no key is ever sent back.
"""

from __future__ import annotations

import json

from flask import Blueprint, current_app, jsonify
from flask_login import current_user
from marshmallow import ValidationError

from core import broker, plugin_host
from core.models.encrypted import encrypt
from tools.api import IngesterRegistry, PluginConfigError
from tools.host import start
from tools.settings import merge_save
from webapp import queue
from webapp.api.bodies import load_json
from webapp.api.operations import operation
from webapp.api.plugins import config_error
from webapp.api.schemas.trials import ToolTrialBody, ToolTrialSchema
from webapp.auth.guards import admin_required
from webapp.errors import ApiError

bp = Blueprint("api_plugin_trials", __name__, url_prefix="/api")

# Above the longest tool deadline a trial runs under (web_search: 20 s), so a slow tool is
# reported in its own words, not as no worker.
TRIAL_TIMEOUT_SECONDS = 35.0


def plain_messages(error: ValidationError) -> str:
    """The messages of a refused input, each after its field's name, in one line."""
    messages = error.normalized_messages()
    return "; ".join(f"{field}: {' '.join(map(str, said))}" for field, said in messages.items())


@bp.post("/admin/plugins/<plugin_id>/try/<name>")
@admin_required
@operation(body=ToolTrialBody, answers={200: ToolTrialSchema}, errors=(503,))
def try_tool(plugin_id: str, name: str):
    """Have a worker run the tool once with the form's options: 200 {ok, output | error}; 400
    for options a save would refuse; 503 when no worker answers."""
    body = load_json(ToolTrialBody, "trial")
    state = plugin_host.get_host().plugins.get(plugin_id)
    if state is None or state.plugin is None:
        raise ApiError(f"There is no loadable plugin {plugin_id}.", 404)
    schema = state.plugin.options_schema
    options = merge_save(schema, state.stored, body["options"])
    config = current_app.config
    try:
        _valid, tools = start(
            state.plugin, options, IngesterRegistry(), config["APP_NAME"], config["PUBLIC_URL"]
        )
    except PluginConfigError as error:
        raise config_error(error, schema) from error
    tool = next((tool for tool in tools if tool.name == name), None)
    if tool is None:
        raise ApiError(f"With these options the plugin {plugin_id} offers no tool {name}.", 404)
    try:
        tool.input_schema().load(body["input"])
    except ValidationError as error:
        raise ApiError(
            f"The input is not what the tool {name} takes: {plain_messages(error)}. Check the "
            "test's input, then try again.",
            400,
            {"input": [plain_messages(error)]},
        ) from None
    sealed = encrypt(json.dumps(options))
    try:
        outcome = queue.call(
            broker.TRY_PLUGIN_TOOL,
            plugin_id,
            name,
            sealed,
            body["input"],
            current_user.id,
            timeout=TRIAL_TIMEOUT_SECONDS,
        )
    except queue.QueueError as error:
        raise ApiError(f"{error} Check that a worker is running, then try again.", 503) from None
    return jsonify(ToolTrialSchema().dump(outcome))
