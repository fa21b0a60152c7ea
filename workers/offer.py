"""The tools a turn offers the model, decided once per model step, exactly as the spec's tool
switches say; and the one tool a stored call names, found again by its name and owner.

A step works out its offer (its generation's tool names, the model's capability, the user's
switches) and stores each call with the tool's owner (a plugin, or a tool source) and whether
its output is untrusted (``core.turn.calls.store_calls``). A tool-call task never works the
offer out again: it finds the one tool the call names (``resolve_call``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from core.models import Provider, ToolCall, Turn
from core.models.providers import find_kept_model
from core.plugin_host import enabled_tools, get_host
from core.turn.owners import conversation_owner
from tools.api import Tool
from tools.host import PluginHost


class TurnFailed(Exception):
    """The turn cannot go on; the message is the reason the user reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Offered:
    """A tool offered in this step: its owner (a plugin id, or a tool source's id) and whether
    its output is untrusted."""

    tool: Tool
    untrusted: bool
    plugin: str | None = None
    source: str | None = None

    @property
    def grounding(self) -> str | None:
        """Return what a call of the tool does for an answer's grounding (``Tool.grounding``)."""
        return self.tool.grounding


def select_tools(
    host: PluginHost,
    generation: dict[str, Any],
    model_name: str,
    model_has_tools: bool,
    enabled: Callable[[], list[Tool]],
    roles: Sequence[str] = (),
) -> list[Offered]:
    """Return the tools for the turn; raise TurnFailed for a name or capability the turn can't use.

    ``generation["tools"]`` present, even empty, is used as given; absent means the user's
    enabled tools that their ``roles`` give them (a tool's ``audience``), which are skipped
    without failing when the model cannot use tools. Tools from tool sources are used only
    when named, and always as untrusted.
    """
    if "tools" not in generation or generation["tools"] is None:
        if not model_has_tools:
            return []
        return [
            Offered(t, t.untrusted, plugin=host.owner(t.name))
            for t in enabled()
            if t.audience is None or t.audience.includes(roles)
        ]
    names = generation["tools"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TurnFailed("generation.tools must be a list of tool names.")
    if names and not model_has_tools:
        raise TurnFailed(
            f"The model {model_name} cannot use tools. Pick another model, or send the message "
            "without naming tools."
        )
    sources = host.source_tools()
    offered = []
    for name in dict.fromkeys(names):
        tool = host.find_tool(name)
        if tool is not None:
            offered.append(Offered(tool, tool.untrusted, plugin=host.owner(name)))
        elif name in sources:
            source, source_tool = sources[name]
            offered.append(Offered(source_tool, True, source=source.id))
        else:
            raise TurnFailed(
                f"The tool {name} is not available. Check the name, or ask an admin whether "
                "its plugin is installed and configured."
            )
    return offered


def owner_id(turn: Turn) -> str:
    """Return the id of the user whose turn it is."""
    return conversation_owner(turn.conversation_id)


def get_turn_model(turn: Turn) -> tuple[Provider, dict]:
    """Return the turn's provider (detached, kept by the process until a provider changes) and
    model entry; raise TurnFailed when it is gone."""
    found = find_kept_model(turn.model)
    if found is None:
        raise TurnFailed(
            f"The model {turn.model} is not available. Pick another model; an admin can add "
            "models in the provider settings."
        )
    return found


def offered_tools(turn: Turn, model: dict, host: PluginHost, user: str) -> list[Offered]:
    """Return the tools this step of the turn offers (``model``: the turn's model entry,
    ``user``: its owner); raise TurnFailed when the turn cannot run as asked."""
    return select_tools(
        host,
        turn.generation or {},
        turn.model,
        bool(model.get("tools")),
        enabled=lambda: enabled_tools(host, user),
        roles=list(turn.roles or []),
    )


def resolve_call(call: ToolCall) -> Offered | None:
    """Return the tool a stored call names, from the owner stored with it; None when the step
    did not offer it (no owner stored), or its plugin or tool source no longer provides it."""
    if call.plugin is None and call.source is None:
        return None
    host = get_host()
    if call.source is not None:
        source = next((s for s in host.tool_sources.sources if s.id == call.source), None)
        listed = [] if source is None else source.list_tools()
        tool = next((t for t in listed if t.name == call.name), None)
        return None if tool is None else Offered(tool, True, source=call.source)
    tool = host.find_tool(call.name)
    if tool is None or host.owner(call.name) != call.plugin:
        return None
    return Offered(tool, call.untrusted or tool.untrusted, plugin=call.plugin)


def is_untrusted_name(turn_offers: list[Offered], host: PluginHost):
    """Return a predicate: is a stored result of this tool name untrusted when replayed?

    Tools offered as untrusted in this turn (tool sources' among them), tools that are not
    registered any more, and registered tools marked untrusted (in ``host``) are untrusted.
    """
    offered_untrusted = {o.tool.name for o in turn_offers if o.untrusted}

    def untrusted(name: str) -> bool:
        if name in offered_untrusted:
            return True
        tool = host.find_tool(name)
        return True if tool is None else tool.untrusted

    return untrusted
