"""Loads plugins, validates their options, and records which plugin owns each tool."""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tools.api import (
    Ingester,
    IngesterRegistry,
    IngestInput,
    IngestResult,
    Parsers,
    Plugin,
    PluginConfigError,
    PluginContext,
    Signal,
    Tool,
    ToolRegistry,
    ToolSource,
    ToolSourceRegistry,
    validate_options,
)
from tools.parsers import InlineParsers

Status = Literal["active", "needs-configuration", "failed"]
log = logging.getLogger("lookout.plugins")


def is_enabled(tool: Tool, choice: bool | None) -> bool:
    """Whether a tool is offered: the user's stored choice counts only with ``user_toggle``."""
    if tool.user_toggle and choice is not None:
        return choice
    return tool.default_enabled


@dataclass
class PluginState:
    """One listed plugin: its status, the reason when not active, and what it registered."""

    id: str
    module: str
    plugin: Plugin | None
    status: Status
    reason: str | None = None
    fields: dict[str, list[str]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    stored: dict[str, Any] = field(default_factory=dict)
    tools: list[Tool] = field(default_factory=list)

    def settings_schema(self, roles: Sequence[str] = ()) -> Any:
        """Return the user settings schema under the current options for a user holding
        ``roles``, or None."""
        if self.plugin is None or self.status != "active":
            return None
        return self.plugin.settings_schema_for(self.options, roles)


def load_plugin(module_path: str) -> Plugin:
    """Import ``module_path`` and return its ``plugin``; raise PluginConfigError when unusable."""
    try:
        module = importlib.import_module(module_path)
    except Exception as exc:
        raise PluginConfigError(
            f"The plugin module {module_path} could not be imported: {exc}"
        ) from exc
    plugin = getattr(module, "plugin", None)
    if not isinstance(plugin, Plugin):
        raise PluginConfigError(
            f"The module {module_path} has no `plugin` attribute holding a tools.api.Plugin."
        )
    expected = module_path.rsplit(".", 1)[-1]
    if plugin.id != expected:
        raise PluginConfigError(
            f"The plugin in {module_path} has id {plugin.id!r}; it must be {expected!r}, "
            "the module's last name."
        )
    return plugin


def start(
    plugin: Plugin,
    options: Mapping[str, Any],
    ingesters: IngesterRegistry,
    app_name: str,
    public_url: str,
    tool_sources: ToolSourceRegistry | None = None,
    parsers: Parsers | None = None,
) -> tuple[dict[str, Any], list[Tool]]:
    """Validate ``options`` and run the plugin's setup; return the options and its tools.

    ``parsers`` runs untrusted parsing (``PluginContext.parsers``; in-process when None).
    Raises ``PluginConfigError`` for invalid options; nothing is registered then.
    """
    valid = validate_options(plugin.options_schema, dict(options), f"options of {plugin.id}")
    tools = ToolRegistry()
    staged = _StagedIngesters(ingesters)
    context = PluginContext(
        options=valid,
        tools=tools,
        ingesters=staged,
        tool_sources=tool_sources or ToolSourceRegistry(),
        logger=logging.getLogger(f"lookout.plugins.{plugin.id}"),
        app_name=app_name,
        public_url=public_url,
        parsers=parsers or InlineParsers(),
    )
    plugin.setup(context)
    staged.commit(PluginRecipe(plugin, dict(options), app_name, public_url))
    return valid, tools.tools


@dataclass(frozen=True)
class PluginRecipe:
    """How a parser process makes the ingesters of a plugin: start it with the same options."""

    plugin: Plugin
    options: dict[str, Any]
    app_name: str
    public_url: str

    def key(self) -> str:
        """Return a text naming the plugin and its options, equal for equal recipes."""
        return json.dumps([self.plugin.id, self.options], sort_keys=True, default=str)


class _StagedIngesters(IngesterRegistry):
    """The shared registry, with this plugin's own ingesters added only once setup succeeds."""

    def __init__(self, shared: IngesterRegistry) -> None:
        self._shared = shared
        self._new: list[Ingester] = []

    def register(self, ingester: Ingester) -> None:
        self._new.append(ingester)

    def find(self, mime_type: str) -> Ingester | None:
        return self._shared.find(mime_type)

    def ingest(self, file: IngestInput, signal: Signal | None = None) -> IngestResult | None:
        return self._shared.ingest(file, signal)

    def commit(self, recipe: PluginRecipe) -> None:
        for ingester in self._new:
            if isinstance(self._shared, PooledIngesters):
                self._shared.register(ingester, recipe)
            else:
                self._shared.register(ingester)


class PooledIngesters(IngesterRegistry):
    """The host's ingesters: each file is read in a parser process, under its limits."""

    def __init__(self, parsers: Parsers) -> None:
        super().__init__()
        self.parsers = parsers
        self._recipes: dict[int, PluginRecipe] = {}

    def register(self, ingester: Ingester, recipe: PluginRecipe | None = None) -> None:
        """Add an ingester; ``recipe`` tells a parser process how to make the same one."""
        super().register(ingester)
        if recipe is not None:
            self._recipes[id(ingester)] = recipe

    def ingest(self, file: IngestInput, signal: Signal | None = None) -> IngestResult | None:
        """Read ``file`` with its ingester in a parser process; see ``IngesterRegistry``."""
        ingester = self.find(file.mime_type)
        if ingester is None:
            return None
        recipe = self._recipes.get(id(ingester))
        inline = recipe is None or isinstance(self.parsers, InlineParsers)
        made = ingester if inline else (recipe, ingester.id)
        what = file.url or file.filename or "The file"
        return self.parsers.run(ingest_in_parser, made, file, signal=signal or Signal(), what=what)


_started_in_parser: dict[str, IngesterRegistry] = {}


def ingest_in_parser(made: Ingester | tuple[PluginRecipe, str], file: IngestInput) -> IngestResult:
    """Run an ingester inside a parser process: a bare one as sent, a plugin's from its recipe.

    A plugin's setup runs once per process and options, with in-process parsers (the limits
    of the process already hold).
    """
    if isinstance(made, Ingester):
        return made.ingest(file)
    recipe, ingester_id = made
    registry = _started_in_parser.get(recipe.key())
    if registry is None:
        registry = IngesterRegistry()
        start(recipe.plugin, recipe.options, registry, recipe.app_name, recipe.public_url)
        _started_in_parser.clear()  # options changed: the old plugin is not needed again
        _started_in_parser[recipe.key()] = registry
    ingester = registry.find_by_id(ingester_id)
    if ingester is None:
        raise PluginConfigError(f"The plugin {recipe.plugin.id} no longer registers {ingester_id}.")
    return ingester.ingest(file)


class PluginHost:
    """The plugins listed in ``LOOKOUT_PLUGINS``, started with their stored options."""

    def __init__(
        self,
        modules: Iterable[str],
        app_name: str,
        public_url: str,
        parsers: Parsers | None = None,
    ) -> None:
        self.modules = [m.strip() for m in modules if m.strip()]
        self.app_name = app_name
        self.public_url = public_url
        self.parsers: Parsers = parsers or InlineParsers()
        self.plugins: dict[str, PluginState] = {}
        self.ingesters: IngesterRegistry = PooledIngesters(self.parsers)
        self.tool_sources = ToolSourceRegistry()
        self._owners: dict[str, str] = {}

    def load(self, stored_options: Mapping[str, dict[str, Any]]) -> PluginHost:
        """(Re)start every listed plugin with its stored options, or ``{}`` when none."""
        self.plugins = {}
        self.ingesters = PooledIngesters(self.parsers)
        self.tool_sources = ToolSourceRegistry()
        self._owners = {}
        for module in self.modules:
            state = self._start_one(module, stored_options)
            self.plugins[state.id] = state
        return self

    def _start_one(self, module: str, stored_options: Mapping[str, dict]) -> PluginState:
        plugin_id = module.rsplit(".", 1)[-1]
        try:
            plugin = load_plugin(module)
        except PluginConfigError as exc:
            log.error("plugin %s failed: %s", plugin_id, exc.message)
            return PluginState(plugin_id, module, None, "failed", exc.message)
        has_stored = plugin.id in stored_options
        stored = dict(stored_options.get(plugin.id) or {})
        state = PluginState(plugin.id, module, plugin, "active", stored=stored)
        try:
            options, tools = start(
                plugin,
                stored,
                self.ingesters,
                self.app_name,
                self.public_url,
                self.tool_sources,
                self.parsers,
            )
        except PluginConfigError as exc:
            state.status = "failed" if has_stored else "needs-configuration"
            state.reason, state.fields = exc.message, exc.fields
            if state.status == "needs-configuration":
                state.reason = f"Set its options to turn it on. {exc.message}"
            log.warning("plugin %s is %s: %s", plugin.id, state.status, exc.message)
            return state
        except Exception as exc:  # a plugin's bug must not stop the app or the others
            state.status, state.reason = "failed", f"The plugin's setup failed: {exc}"
            log.exception("plugin %s failed during setup", plugin.id)
            return state
        taken = [t.name for t in tools if t.name in self._owners]
        if taken:
            owners = ", ".join(f"{n} (registered by {self._owners[n]})" for n in taken)
            state.status, state.reason = "failed", f"Tool names are already taken: {owners}."
            log.error("plugin %s failed: %s", plugin.id, state.reason)
            return state
        self._owners.update((tool.name, plugin.id) for tool in tools)
        state.options, state.tools = options, tools
        return state

    def tools(self) -> list[Tool]:
        """Return every tool registered by an active plugin, in load order."""
        return [t for s in self.plugins.values() if s.status == "active" for t in s.tools]

    def find_tool(self, name: str) -> Tool | None:
        """Return the registered tool of that name, or None."""
        return next((t for t in self.tools() if t.name == name), None)

    def owner(self, tool_name: str) -> str | None:
        """Return the id of the plugin that registered the tool, or None."""
        return self._owners.get(tool_name)

    def source_tools(self) -> dict[str, tuple[ToolSource, Tool]]:
        """Return the tools offered by tool sources, by name (always untrusted)."""
        found: dict[str, tuple[ToolSource, Tool]] = {}
        for source in self.tool_sources.sources:
            for tool in source.list_tools():
                found.setdefault(tool.name, (source, tool))
        return found
