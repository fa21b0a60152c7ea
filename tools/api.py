"""Lookout's plugin API, version 1: everything a plugin author needs to add tools and ingesters.

A search plugin tells the host of an engine's failed search with ``report_search_failure``
(why, in the words of ``SEARCH_FAILURE_REASONS``); the host hears it with ``on_search_failure``.

Errors raised through this API::

    Exception
    ├── ToolError            a sentence the model reads and reports (the turn goes on)
    │   └── ToolRefused      a guard or domain-list refusal (logged with outcome "refused")
    ├── Cancelled            the turn was cancelled or the call's deadline passed
    ├── RateLimited          a shared rate limit gave no slot in time (tools.rates)
    ├── QuotaUsed            the user's quota is used up (tools.quotas)
    ├── IngestError          an ingester could not read a file (broken, encrypted)
    └── PluginConfigError    invalid plugin options or user settings, with per-field messages
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Protocol, TypeVar

import marshmallow
import requests

from tools.cancellation import Cancelled, Signal
from tools.listeners import SEARCH_FAILURE_REASONS, on_search_failure, report_search_failure
from tools.quotas import Quotas, QuotaUsed
from tools.rates import RateLimit, RateLimited, Rates, UnlimitedRates
from tools.usage import Meter

__all__ = [
    "API_VERSION",
    "Audience",
    "Cancelled",
    "Citation",
    "Grounding",
    "IngestError",
    "IngestInput",
    "IngestResult",
    "Ingester",
    "IngesterRegistry",
    "Meter",
    "Plugin",
    "PluginConfigError",
    "PluginContext",
    "Parsers",
    "QuotaUsed",
    "Quotas",
    "RateLimit",
    "RateLimited",
    "Rates",
    "SEARCH_FAILURE_REASONS",
    "Signal",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRefused",
    "ToolRegistry",
    "ToolSource",
    "ToolSourceRegistry",
    "describe_errors",
    "flatten_errors",
    "normalise_mime_type",
    "on_search_failure",
    "report_search_failure",
    "validate_options",
]

API_VERSION = 1

SchemaClass = type[marshmallow.Schema]
# What a tool call does for an answer's grounding ("Searched 2 times, read 3 pages").
Grounding = Literal["search", "read"]
GROUNDING_KINDS: tuple[str, ...] = ("search", "read")
T = TypeVar("T")


class ToolError(Exception):
    """A failure the model can read: the message says what went wrong and what to do next."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ToolRefused(ToolError):
    """A refusal by the network guard or a domain list."""


class IngestError(Exception):
    """An ingester could not extract text from a file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PluginConfigError(Exception):
    """Invalid options or settings; ``fields`` maps a field name to its messages."""

    def __init__(self, message: str, fields: Mapping[str, list[str]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields: dict[str, list[str]] = {k: list(v) for k, v in (fields or {}).items()}


@dataclass(frozen=True)
class Citation:
    """A source link added to the reply; ``snippet``: what a search result showed of the page,
    for a source the call found but did not read (its citations are then checked against it)."""

    url: str
    title: str | None = None
    snippet: str | None = None


@dataclass
class ToolContext:
    """What a tool call gets from the turn that runs it.

    ``rates`` books calls to a provider against limits shared by every worker process (see
    ``tools.rates``); outside a host it limits nothing. ``quotas`` counts what the call spends
    of its user's daily quotas (see ``tools.quotas``); outside a host it counts nothing.
    ``meter`` collects what the call spent for the user's usage, and counts it against
    ``quotas`` too (``tools.usage.QUOTA_OF``).
    """

    user: str
    conversation: str
    roles: list[str]
    signal: Signal
    fetch: requests.Session
    cite: Callable[..., None]
    turn_cache: MutableMapping[str, Any]
    settings: dict[str, Any] = field(default_factory=dict)
    rates: Rates = field(default_factory=UnlimitedRates)
    meter: Meter = field(default_factory=Meter)
    quotas: Quotas = field(default_factory=Quotas)

    def __post_init__(self) -> None:
        """Point the meter at this call's quotas, so what it meters draws on them."""
        self.meter.quotas = self.quotas


@dataclass(frozen=True)
class Audience:
    """Who a tool is offered to: users holding one of ``roles`` (None: every user), and the
    sentence that tells an admin so (shown on the admin's plugins page)."""

    roles: tuple[str, ...] | None
    description: str

    def includes(self, roles: Sequence[str]) -> bool:
        """Return whether a user holding ``roles`` is offered the tool."""
        return self.roles is None or any(role in self.roles for role in roles)


@dataclass
class Tool:
    """A function the model can call.

    ``execute(input, ctx)`` gets input already validated by ``input_schema`` and returns
    JSON-serialisable output, or raises ``ToolError`` (or ``ToolRefused``, ``Cancelled``).
    ``grounding`` says what a call does for the answer's grounding summary: "search" (it
    looks things up), "read" (it reads a page or file), or None (neither).
    """

    name: str
    description: str
    input_schema: SchemaClass
    execute: Callable[[dict[str, Any], ToolContext], Any]
    default_enabled: bool = False
    user_toggle: bool = False
    untrusted: bool = False
    timeout_seconds: float = 30
    audience: Audience | None = None  # None: offered to every user
    grounding: Grounding | None = None

    def validate_input(self, raw: Any) -> dict[str, Any]:
        """Return the input loaded by ``input_schema``; raise ``ToolError`` naming bad fields."""
        if not isinstance(raw, dict):
            raise ToolError(f"The input for {self.name} must be a JSON object.")
        try:
            return input_loader(self.input_schema).load(raw)
        except marshmallow.ValidationError as exc:
            raise ToolError(
                f"The input for {self.name} is not valid: {describe_errors(exc.messages)}"
            ) from exc

    def json_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the input, as sent to the model: derived once per process
        for each input schema (a class, fixed once loaded): deriving it cost every step that
        offers tools as much CPU as the step's prompt. Callers must not change it."""
        from tools.schema import cached_json_schema

        return cached_json_schema(self.input_schema)


@lru_cache(maxsize=256)
def input_loader(schema: SchemaClass) -> marshmallow.Schema:
    """Return the one instance of an input schema that loads every call's input (a schema's
    ``load`` keeps nothing between calls; building ``web_fetch``'s cost three times its load).
    A plugin loaded again brings new classes, and so new instances."""
    return schema()


def describe_errors(messages: Any, prefix: str = "") -> str:
    """Return marshmallow's nested error messages as one readable sentence."""
    if isinstance(messages, dict):
        parts = [describe_errors(v, f"{prefix}{k}.") for k, v in messages.items()]
        return " ".join(parts)
    if isinstance(messages, list):
        text = " ".join(str(m) for m in messages if not isinstance(m, (dict, list)))
        nested = " ".join(describe_errors(m, prefix) for m in messages if isinstance(m, dict))
        label = prefix[:-1]
        return " ".join(p for p in (f"{label}: {text}" if text else "", nested) if p)
    return f"{prefix[:-1]}: {messages}"


@dataclass(frozen=True)
class IngestInput:
    """A file handed to an ingester."""

    data: bytes
    mime_type: str
    filename: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class IngestResult:
    """The text an ingester extracted."""

    text: str


@dataclass
class Ingester:
    """Turns files of the MIME types it accepts into text; the highest priority wins.

    ``ingest`` raises ``IngestError`` for a file it cannot read.
    """

    id: str
    priority: int
    accepts: Callable[[str], bool]
    ingest: Callable[[IngestInput], IngestResult]


class ToolSource(Protocol):
    """A source of tools defined elsewhere (a seam for MCP servers); always untrusted."""

    id: str

    def list_tools(self) -> list[Tool]:
        """Return the tools this source offers now."""
        ...


def normalise_mime_type(mime_type: str) -> str:
    """Return the bare, lower-cased MIME type without parameters."""
    return mime_type.split(";", 1)[0].strip().lower()


class ToolRegistry:
    """The tools a plugin registers in ``setup``."""

    def __init__(self) -> None:
        self.tools: list[Tool] = []

    def register(self, tool: Tool) -> None:
        """Add a tool (the host refuses duplicate names across plugins)."""
        if not isinstance(tool, Tool):
            raise TypeError("tools.register takes a tools.api.Tool")
        if any(existing.name == tool.name for existing in self.tools):
            raise PluginConfigError(f"The tool {tool.name} is registered twice.")
        self.tools.append(tool)


class ToolSourceRegistry:
    """The tool sources a plugin registers in ``setup``."""

    def __init__(self) -> None:
        self.sources: list[ToolSource] = []

    def register(self, source: ToolSource) -> None:
        """Add a tool source."""
        self.sources.append(source)


class IngesterRegistry:
    """Ingesters shared by every plugin: attachments and web_fetch pick one by MIME type."""

    def __init__(self, ingesters: Iterable[Ingester] = ()) -> None:
        self._ingesters: list[Ingester] = []
        for ingester in ingesters:
            self.register(ingester)

    def register(self, ingester: Ingester) -> None:
        """Add an ingester."""
        self._ingesters.append(ingester)
        self._ingesters.sort(key=lambda i: -i.priority)

    def find(self, mime_type: str) -> Ingester | None:
        """Return the highest-priority ingester accepting ``mime_type``, or None."""
        bare = normalise_mime_type(mime_type)
        return next((i for i in self._ingesters if i.accepts(bare)), None)

    def accepts(self, mime_type: str) -> bool:
        """Whether any registered ingester accepts the MIME type."""
        return self.find(mime_type) is not None

    def find_by_id(self, ingester_id: str) -> Ingester | None:
        """Return the registered ingester with that id, or None."""
        return next((i for i in self._ingesters if i.id == ingester_id), None)

    def ingest(self, file: IngestInput, signal: Signal | None = None) -> IngestResult | None:
        """Extract text with the ingester attachments would use; None when none accepts it.

        In the host, the ingester runs in a parser process under its limits, stopped when
        ``signal`` trips (raising ``Cancelled``); a file that needs more time or memory than
        the limits allow raises ``ToolError`` with a sentence. Raises what the ingester raises.
        """
        ingester = self.find(file.mime_type)
        return None if ingester is None else ingester.ingest(file)


class Parsers(Protocol):
    """``PluginContext.parsers``: runs CPU-bound work on untrusted bytes in a parser process.

    ``run(job, *args, signal=..., what=...)`` returns ``job(*args)``, computed in a process
    that the OS limits in CPU time and memory and that is killed when ``signal`` trips. ``job``
    must be a module-level function and its arguments picklable; its result comes back as JSON
    (plain data, or a dataclass of plain fields rebuilt as ``job``'s return type). Raises
    ``Cancelled`` when the signal trips, ``ToolError`` subclasses when a limit stops the job
    (the sentence names ``what``, such as the URL), and what ``job`` raised.
    """

    def run(self, job: Callable[..., T], *args: Any, signal: Signal, what: str) -> T:
        """Return ``job(*args)`` computed under the parser limits."""
        ...


@dataclass
class PluginContext:
    """What a plugin's ``setup`` gets: its validated options and the registries."""

    options: dict[str, Any]
    tools: ToolRegistry
    ingesters: IngesterRegistry
    tool_sources: ToolSourceRegistry
    logger: logging.Logger
    app_name: str
    public_url: str
    parsers: Parsers | None = None


@dataclass
class Plugin:
    """A plugin: an id (its module's last name), an options schema and a setup function.

    ``user_settings_schema`` is a Schema class, or a callable ``(options) -> Schema class | None``,
    or ``(options, roles) -> Schema class | None`` for settings that also depend on the roles of
    the user whose settings they are. ``catalog`` is an optional callable returning JSON for the
    admin pages.
    """

    id: str
    options_schema: SchemaClass
    setup: Callable[[PluginContext], None]
    user_settings_schema: SchemaClass | Callable[..., SchemaClass | None] | None = None
    catalog: Callable[[], Any] | None = None

    def settings_schema_for(
        self, options: dict[str, Any], roles: Sequence[str] = ()
    ) -> SchemaClass | None:
        """Return the user settings schema that applies under ``options`` to a user holding
        ``roles``, or None."""
        schema = self.user_settings_schema
        if schema is None:
            return None
        if isinstance(schema, type) and issubclass(schema, marshmallow.Schema):
            return schema
        if _takes_roles(schema):
            return schema(options, list(roles))
        return schema(options)


def _takes_roles(factory: Callable[..., Any]) -> bool:
    """Whether a settings schema factory takes the roles after the options."""
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    parameters = inspect.signature(factory).parameters.values()
    return sum(1 for p in parameters if p.kind in positional) >= 2


def validate_options(schema: SchemaClass, data: Any, what: str) -> dict[str, Any]:
    """Return ``data`` loaded by ``schema``; raise ``PluginConfigError`` with per-field messages."""
    if not isinstance(data, dict):
        raise PluginConfigError(f"The {what} must be a JSON object.")
    try:
        return schema().load(data)
    except marshmallow.ValidationError as exc:
        fields = flatten_errors(exc.messages)
        general = fields.pop("_schema", [])
        summary = " ".join(general) or f"The {what} are not valid: {describe_errors(exc.messages)}"
        if general:
            fields.setdefault("_schema", general)
        raise PluginConfigError(summary, fields) from exc


def flatten_errors(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """Return marshmallow's nested messages keyed by dotted field path (``models.0.name``)."""
    out: dict[str, list[str]] = {}
    if isinstance(messages, dict):
        for key, value in messages.items():
            out.update(flatten_errors(value, f"{prefix}{key}."))
        return out
    if isinstance(messages, list):
        strings = [str(m) for m in messages if not isinstance(m, (dict, list))]
        if strings:
            out[prefix[:-1]] = strings
        for item in messages:
            if isinstance(item, (dict, list)):
                out.update(flatten_errors(item, prefix))
        return out
    out[prefix[:-1]] = [str(messages)]
    return out
