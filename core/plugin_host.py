"""This process's plugin host, rebuilt when an admin saves options, and each user's choices."""

from __future__ import annotations

import copy
import logging
import threading
from typing import Any

import redis
from flask import Flask, current_app

from core import mcp_servers
from core.extensions import db
from core.kept import current_version, find_kept, known, new_version
from core.models import PluginOptions, UserPluginSettings, UserToolSetting
from core.models.plugins import SETTINGS_VERSION_KEY, TOOLS_VERSION_KEY
from tools.api import Tool
from tools.host import PluginHost, is_enabled
from tools.parser_shares import fair_share
from tools.parsers import ParserLimits, ParserPool, shared_pool

VERSION_KEY = known("lookout:plugins:version")
log = logging.getLogger("lookout.plugins")


class _HostHolder:
    """The host of one app, with the options version it was built from."""

    def __init__(self) -> None:
        self.host: PluginHost | None = None
        self.version: bytes | None = None
        self.lock = threading.Lock()


def init_plugins(app: Flask) -> None:
    """Attach an (empty) host holder to the app; the host is built on first use."""
    app.extensions["lookout_plugins"] = _HostHolder()


def _current_version() -> bytes | None:
    try:
        return current_version(VERSION_KEY)
    except redis.RedisError:
        return None


def get_host() -> PluginHost:
    """Return the plugin host, rebuilt when the stored options changed in any process."""
    holder: _HostHolder = current_app.extensions["lookout_plugins"]
    version = _current_version()
    if holder.host is not None and (version is None or version == holder.version):
        return holder.host
    with holder.lock:
        if holder.host is None or (version is not None and version != holder.version):
            holder.host = build_host()
            holder.version = version
    return holder.host


def build_host() -> PluginHost:
    """Return a host with every listed plugin started from the stored options."""
    stored = {row.plugin_id: row.options for row in db.session.scalars(db.select(PluginOptions))}
    config = current_app.config
    # Uploads and web_fetch both parse through the host: one fair admission covers them.
    parsers = fair_share(get_parsers(), config["PARSER_PROCESSES"], config["PARSER_QUEUE_SECONDS"])
    host = PluginHost(config["LOOKOUT_PLUGINS"], config["APP_NAME"], config["PUBLIC_URL"], parsers)
    host.load(stored)
    for source in mcp_servers.make_sources():  # each MCP server an admin added: mcp:<name>
        host.tool_sources.register(source)
    return host


def get_parsers() -> ParserPool:
    """Return this process's parser processes, limited by the PARSER_* settings."""
    config = current_app.config
    limits = ParserLimits(
        processes=config["PARSER_PROCESSES"],
        cpu_seconds=config["PARSER_CPU_SECONDS"],
        memory_bytes=config["PARSER_MEMORY_MB"] * 1024 * 1024,
        max_chars=config["PARSER_MAX_CHARS"],
    )
    return shared_pool(limits, preload=config["LOOKOUT_PLUGINS"])


def save_options(plugin_id: str, options: dict[str, Any]) -> None:
    """Store a plugin's options and tell every process to rebuild its host."""
    row = db.session.get(PluginOptions, plugin_id) or PluginOptions(plugin_id=plugin_id)
    row.options = options
    db.session.add(row)
    db.session.commit()
    tell_hosts()
    get_host()


def tell_hosts() -> None:
    """Have every process rebuild its plugin host at its next use (options or MCP servers
    changed): ``VERSION_KEY`` set anew."""
    new_version(VERSION_KEY)


def plugin_title(plugin_id: str) -> str:
    """Return the title people read for a plugin: its id in words (web_search -> Web search)."""
    return plugin_id.replace("_", " ").capitalize()


def tool_choices(user_id: str) -> dict[str, bool]:
    """Return the user's stored tool switches by tool name."""
    rows = db.session.scalars(db.select(UserToolSetting).filter_by(user_id=user_id))
    return {row.tool: row.enabled for row in rows}


def enabled_tools(host: PluginHost, user_id: str) -> list[Tool]:
    """Return the registered tools enabled for the user (the spec's tool switches), their
    switches kept per process until any process commits a change to a user's (``core.kept``):
    a model step offering the user's tools read them every step."""
    choices = find_kept(TOOLS_VERSION_KEY, user_id, lambda: tool_choices(user_id))
    return [tool for tool in host.tools() if is_enabled(tool, choices.get(tool.name))]


def find_settings(user_id: str, plugin_id: str) -> dict[str, Any]:
    """Return the user's stored settings for a plugin, ``{}`` when none."""
    row = db.session.get(UserPluginSettings, (user_id, plugin_id))
    return dict(row.settings) if row is not None else {}


def find_kept_settings(user_id: str, plugin_id: str) -> dict[str, Any]:
    """Return ``find_settings``, kept per process until any process commits a change to a
    user's plugin settings (``core.kept``): a tool call's settings cost one Redis GET where a
    read and a decryption were. Each call gets a copy of its own, which its tool may change."""
    kept = find_kept(
        SETTINGS_VERSION_KEY, (user_id, plugin_id), lambda: find_settings(user_id, plugin_id)
    )
    return copy.deepcopy(kept)
