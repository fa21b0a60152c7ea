"""Chooses the tools a turn offers the model, exactly as the spec's tool switches say."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tools.api import Tool
from tools.host import PluginHost


class TurnFailed(Exception):
    """The turn cannot go on; the message is the reason the user reads."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Offered:
    """A tool offered in this turn, and whether its output is untrusted."""

    tool: Tool
    untrusted: bool
    plugin: str | None


def select_tools(
    host: PluginHost,
    generation: dict[str, Any],
    model_name: str,
    model_has_tools: bool,
    enabled: Callable[[], list[Tool]],
) -> list[Offered]:
    """Return the tools for the turn; raise TurnFailed for a name or capability the turn can't use.

    ``generation["tools"]`` present, even empty, is used as given; absent means the user's
    enabled tools, which are skipped without failing when the model cannot use tools. Tools
    from tool sources are used only when named, and always as untrusted.
    """
    if "tools" not in generation or generation["tools"] is None:
        if not model_has_tools:
            return []
        return [Offered(t, t.untrusted, host.owner(t.name)) for t in enabled()]
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
            offered.append(Offered(tool, tool.untrusted, host.owner(name)))
        elif name in sources:
            source, source_tool = sources[name]
            offered.append(Offered(source_tool, True, f"source:{source.id}"))
        else:
            raise TurnFailed(
                f"The tool {name} is not available. Check the name, or ask an admin whether "
                "its plugin is installed and configured."
            )
    return offered
