"""The tools a stored turn offers: its generation, its model's capability, its user's switches."""

from __future__ import annotations

from webapp.models import Conversation, Provider, Turn
from webapp.models.providers import find_model
from webapp.plugins import enabled_tools, get_host
from workers.selection import Offered, TurnFailed, select_tools


def owner_id(turn: Turn) -> str:
    """Return the id of the user whose turn it is."""
    from webapp.extensions import db

    return db.session.get(Conversation, turn.conversation_id).owner_id


def get_turn_model(turn: Turn) -> tuple[Provider, dict]:
    """Return the turn's provider and model entry; raise TurnFailed when it is gone."""
    found = find_model(turn.model)
    if found is None:
        raise TurnFailed(
            f"The model {turn.model} is not available. Pick another model; an admin can add "
            "models in the provider settings."
        )
    return found


def offered_tools(turn: Turn, model: dict | None = None) -> list[Offered]:
    """Return the tools the turn offers; raise TurnFailed when it cannot run as asked.

    ``model`` is the turn's model entry, when the caller already has it.
    """
    if model is None:
        _provider, model = get_turn_model(turn)
    host = get_host()
    user = owner_id(turn)
    return select_tools(
        host,
        turn.generation or {},
        turn.model,
        bool(model.get("tools")),
        enabled=lambda: enabled_tools(host, user),
    )


def find_offered(turn: Turn, name: str) -> Offered | None:
    """Return the offered tool of that name, or None when the turn does not offer it."""
    return next((o for o in offered_tools(turn) if o.tool.name == name), None)


def is_untrusted_name(turn_offers: list[Offered]):
    """Return a predicate: is a stored result of this tool name untrusted when replayed?

    Tools offered as untrusted in this turn (tool sources' among them), tools that are not
    registered any more, and registered tools marked untrusted are untrusted.
    """
    host = get_host()
    offered_untrusted = {o.tool.name for o in turn_offers if o.untrusted}

    def untrusted(name: str) -> bool:
        if name in offered_untrusted:
            return True
        tool = host.find_tool(name)
        return True if tool is None else tool.untrusted

    return untrusted
