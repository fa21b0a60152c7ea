"""Plugins over the API: users' tool switches and settings, admins' options and catalogs."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, jsonify
from flask_login import current_user

from core import plugin_host
from core.extensions import db
from core.models import UserPluginSettings, UserToolSetting
from core.models.base import utcnow
from tools.api import IngesterRegistry, PluginConfigError, validate_options
from tools.host import PluginState, is_enabled, start
from tools.schema import json_schema
from tools.settings import mask, merge_save
from webapp.api.bodies import json_object, load_json
from webapp.api.field_errors import plain_error, titles_of
from webapp.api.operations import NO_CONTENT, operation
from webapp.api.schemas.free import FreeForm
from webapp.api.schemas.plugins import (
    AdminPluginListSchema,
    AdminPluginSchema,
    OfferedToolListSchema,
    SavedSettingsSchema,
    ToolSwitchBody,
    ToolSwitchSchema,
    UserPluginListSchema,
)
from webapp.auth.guards import admin_required, api_login_required
from webapp.errors import ApiError

bp = Blueprint("api_plugins", __name__, url_prefix="/api")


def get_active_plugin(plugin_id: str) -> PluginState:
    """Return a listed, active plugin; 404 otherwise."""
    state = plugin_host.get_host().plugins.get(plugin_id)
    if state is None or state.status != "active":
        raise ApiError(f"There is no active plugin {plugin_id}.", 404)
    return state


def config_error(error: PluginConfigError, schema: Any) -> ApiError:
    """Return the 400 for invalid options or settings, with the per-field messages in words."""
    message, fields = plain_error(error.fields, titles_of(schema), error.message)
    return ApiError(message, 400, fields)


def form_schema(schema: Any) -> dict[str, Any]:
    """Return a schema's JSON Schema for forms, with ``x-order`` listing fields as declared.

    Flask sorts JSON keys, so without it a form would show ``apiKey`` before ``engine``.
    """
    out = json_schema(schema)
    out["x-order"] = list(out["properties"])
    return out


def show_user_plugin(state: PluginState, choices: dict[str, bool]) -> dict[str, Any]:
    """Return one plugin's block of the settings page for the signed-in user."""
    schema = state.settings_schema(current_user.roles)
    settings, secrets_set = mask(schema, plugin_host.find_settings(current_user.id, state.id))
    return {
        "id": state.id,
        "title": plugin_host.plugin_title(state.id),
        "tools": [
            {
                "name": tool.name,
                "description": tool.description,
                "enabled": is_enabled(tool, choices.get(tool.name)),
                "userToggle": tool.user_toggle,
            }
            for tool in state.tools
        ],
        "schema": form_schema(schema) if schema is not None else None,
        "settings": settings if schema is not None else {},
        "secretsSet": secrets_set,
    }


@bp.get("/plugins/settings")
@api_login_required
@operation(answers={200: UserPluginListSchema})
def list_settings():
    """List each plugin that has user settings or a switchable tool."""
    choices = plugin_host.tool_choices(current_user.id)
    shown = [
        show_user_plugin(state, choices)
        for state in plugin_host.get_host().plugins.values()
        if state.status == "active"
        and (
            state.settings_schema(current_user.roles) is not None
            or any(t.user_toggle for t in state.tools)
        )
    ]
    return jsonify(UserPluginListSchema().dump({"plugins": shown}))


@bp.get("/tools")
@api_login_required
@operation(answers={200: OfferedToolListSchema})
def list_offered_tools():
    """List the tools the signed-in user's messages offer a tool-capable model by default."""
    host = plugin_host.get_host()
    offered = []
    for tool in plugin_host.enabled_tools(host, current_user.id):
        owner = host.owner(tool.name) or ""
        offered.append(
            {
                "name": tool.name,
                "plugin": owner,
                "pluginTitle": plugin_host.plugin_title(owner),
                "userToggle": tool.user_toggle,
            }
        )
    return jsonify(OfferedToolListSchema().dump({"tools": offered}))


@bp.put("/plugins/<plugin_id>/tools/<name>")
@api_login_required
@operation(body=ToolSwitchBody, answers={200: ToolSwitchSchema})
def switch_tool(plugin_id: str, name: str):
    """Store the user's switch for a tool; 404 for another plugin's tool, 400 without a toggle."""
    state = get_active_plugin(plugin_id)
    tool = next((t for t in state.tools if t.name == name), None)
    if tool is None:
        raise ApiError(f"The plugin {plugin_id} has no tool {name}.", 404)
    if not tool.user_toggle:
        raise ApiError(f"The tool {name} cannot be switched on or off by users.", 400)
    enabled = load_json(ToolSwitchBody, "switch")["enabled"]
    row = db.session.get(UserToolSetting, (current_user.id, name))
    if row is None:
        row = UserToolSetting(user_id=current_user.id, tool=name, enabled=enabled)
        db.session.add(row)
    row.enabled, row.updated_at = enabled, utcnow()
    db.session.commit()
    return jsonify(ToolSwitchSchema().dump({"name": name, "enabled": enabled, "userToggle": True}))


@bp.put("/plugins/<plugin_id>/settings")
@api_login_required
@operation(body=FreeForm, answers={200: SavedSettingsSchema})
def save_settings(plugin_id: str):
    """Validate and store the user's settings for a plugin; 400 with per-field messages."""
    state = get_active_plugin(plugin_id)
    schema = state.settings_schema(current_user.roles)
    if schema is None:
        raise ApiError(f"The plugin {plugin_id} has no settings for users.", 404)
    stored = plugin_host.find_settings(current_user.id, plugin_id)
    try:
        valid = validate_options(schema, merge_save(schema, stored, json_object()), "settings")
    except PluginConfigError as error:
        raise config_error(error, schema) from error
    row = db.session.get(UserPluginSettings, (current_user.id, plugin_id))
    if row is None:
        row = UserPluginSettings(user_id=current_user.id, plugin_id=plugin_id)
        db.session.add(row)
    row.settings = valid
    db.session.commit()
    settings, secrets_set = mask(schema, valid)
    saved = {"id": plugin_id, "settings": settings, "secretsSet": secrets_set}
    return jsonify(SavedSettingsSchema().dump(saved))


@bp.delete("/plugins/<plugin_id>/settings")
@api_login_required
@operation(answers={204: NO_CONTENT})
def delete_settings(plugin_id: str):
    """Forget the user's settings for a plugin; tool switches stay as they are."""
    get_active_plugin(plugin_id)
    row = db.session.get(UserPluginSettings, (current_user.id, plugin_id))
    if row is not None:
        db.session.delete(row)
        db.session.commit()
    return "", 204


def admin_reason(state: PluginState, schema: Any) -> tuple[str | None, dict[str, Any]]:
    """Return why a plugin is not active, and its per-field messages, in people's words."""
    if not state.fields:
        return state.reason, {}
    message, fields = plain_error(state.fields, titles_of(schema), state.reason or "")
    if state.status == "needs-configuration":
        return f"Set its options below to turn it on. {message}", fields
    return f"Its saved options are no longer valid. {message} Correct them below and save.", fields


def off_by_default_notices(state: PluginState, schema: Any) -> list[str]:
    """Return a sentence for each tool of an active plugin that nobody is offered by default."""
    switch = titles_of(schema).get("enabledByDefault")  # the spec's name for that option
    how = f"tick “{switch}” below and save" if switch else "turn it on by default in its options"
    notices = []
    for tool in state.tools:
        if tool.default_enabled:
            continue
        if tool.user_toggle:
            notices.append(
                f"Nobody gets {tool.name} yet: it is off by default, so only users who switch "
                f"it on in their Settings get it. To offer it to everyone, {how}."
            )
        else:
            notices.append(
                f"Nobody gets {tool.name}: it is off by default and users may not switch it "
                f"on. To offer it to everyone, {how}."
            )
    return notices


def everyone_offer(state: PluginState, schema: Any) -> str | None:
    """Return the option that offers an active plugin's tools to everyone (its
    ``enabledByDefault``) when some tool of it is offered to nobody by default, else None: the
    page asks beside the notice, so that a first engine saved is one step from search."""
    if state.status != "active" or "enabledByDefault" not in titles_of(schema):
        return None
    return "enabledByDefault" if any(not tool.default_enabled for tool in state.tools) else None


def audience_notices(state: PluginState) -> list[str]:
    """Return the sentence of each tool of the plugin that says who is offered it."""
    return [tool.audience.description for tool in state.tools if tool.audience is not None]


def show_admin_plugin(state: PluginState) -> dict[str, Any]:
    """Return one plugin's status, options schema and options, secrets masked."""
    schema = state.plugin.options_schema if state.plugin is not None else None
    options, secrets_set = mask(schema, state.stored)
    reason, fields = admin_reason(state, schema)
    return {
        "id": state.id,
        "title": plugin_host.plugin_title(state.id),
        "status": state.status,
        "reason": reason,
        "fields": fields,
        "notices": off_by_default_notices(state, schema) + audience_notices(state)
        if state.status == "active"
        else [],
        "offerOption": everyone_offer(state, schema),
        "schema": form_schema(schema) if schema is not None else None,
        "options": options,
        "secretsSet": secrets_set,
        "tools": [tool.name for tool in state.tools],
        "hasCatalog": bool(state.plugin and state.plugin.catalog),
    }


@bp.get("/admin/plugins")
@admin_required
@operation(answers={200: AdminPluginListSchema})
def list_plugins():
    """List every listed plugin with its status (active, needs-configuration, failed)."""
    shown = [show_admin_plugin(state) for state in plugin_host.get_host().plugins.values()]
    return jsonify(AdminPluginListSchema().dump({"plugins": shown}))


@bp.put("/admin/plugins/<plugin_id>/options")
@admin_required
@operation(body=FreeForm, answers={200: AdminPluginSchema})
def save_plugin_options(plugin_id: str):
    """Validate, store and apply a plugin's options everywhere; 400 with per-field messages."""
    state = plugin_host.get_host().plugins.get(plugin_id)
    if state is None or state.plugin is None:
        raise ApiError(f"There is no loadable plugin {plugin_id}.", 404)
    schema = state.plugin.options_schema
    merged = merge_save(schema, state.stored, json_object())
    try:
        app_name, public_url = current_app.config["APP_NAME"], current_app.config["PUBLIC_URL"]
        start(state.plugin, merged, IngesterRegistry(), app_name, public_url)
    except PluginConfigError as error:
        raise config_error(error, schema) from error
    except Exception as error:  # a plugin's setup bug is reported, and nothing is stored
        raise ApiError(f"The plugin {plugin_id} could not start: {error}", 400) from error
    plugin_host.save_options(plugin_id, merged)
    return jsonify(
        AdminPluginSchema().dump(show_admin_plugin(plugin_host.get_host().plugins[plugin_id]))
    )


@bp.get("/admin/plugins/<plugin_id>/catalog")
@admin_required
@operation(answers={200: FreeForm})
def plugin_catalog(plugin_id: str):
    """Return what a plugin offers admins to choose from (web_search: its engines)."""
    state = plugin_host.get_host().plugins.get(plugin_id)
    if state is None or state.plugin is None or state.plugin.catalog is None:
        raise ApiError(f"The plugin {plugin_id} has no catalog.", 404)
    return jsonify(state.plugin.catalog())
