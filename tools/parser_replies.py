"""What a parser process sends back: JSON the parent checks, never a pickle it would run.

A parser process may be running an attacker's code (a memory-safety bug in a C parser), so its
reply is read as data. A reply is one JSON object, length-prefixed by the pipe and at most
``reply_limit`` bytes::

    {"kind": "ready", "missing": [sentence, ...]}          once, after the sandbox is up
    {"kind": "ok", "value": ..., "leaving": bool, "peak_kb": int}
    {"kind": "error", "error": {"type": name, "message": str, "fields": {...}}, ...}
    {"kind": "memory", ...}                                 the job ran out of memory

An ``ok`` value is rebuilt as the job's declared return type: a dataclass whose fields are
strings, numbers, booleans or None (``Extracted``, ``IngestResult``), or plain JSON data. An
error is one of the few exception types named in ``_ERRORS``; any other becomes a
``RuntimeError`` naming it. ``read_reply`` raises ``BadReply`` for anything else.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tools.api import IngestError, PluginConfigError, ToolError, ToolRefused

_MESSAGE_CHARS = 10_000
_ERRORS: dict[str, type[Exception]] = {
    cls.__name__: cls for cls in (ToolError, ToolRefused, IngestError, PluginConfigError)
}
_PLAIN = (str, int, float, bool, type(None))


class BadReply(Exception):
    """A parser process sent something that is not a valid reply."""


@dataclass(frozen=True)
class Reply:
    """A checked reply: its kind, the rebuilt value or exception, and the process's state."""

    kind: str
    value: Any = None
    leaving: bool = False
    peak_kb: int = 0
    missing: tuple[str, ...] = ()


def reply_limit(max_chars: int) -> int:
    """Return the most bytes a reply may take: its text fields escaped, and room to spare."""
    return 16 * max_chars + (1 << 20)


def write_ok(value: Any, leaving: bool, peak_kb: int) -> bytes:
    """Return the reply for a job's result; raises TypeError when it is not plain data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return _dump({"kind": "ok", "value": value, "leaving": leaving, "peak_kb": peak_kb})


def write_error(exc: BaseException, leaving: bool, peak_kb: int) -> bytes:
    """Return the reply for what a job raised: its type's name, its message, its fields."""
    message = getattr(exc, "message", None)
    if not isinstance(message, str):
        message = str(exc)
    # A subclass (ParseTimeout, AddressNotAllowed) comes back as the nearest type known here.
    known = (c.__name__ for c in type(exc).__mro__ if _ERRORS.get(c.__name__) is c)
    name = next(known, type(exc).__name__)
    error = {"type": name, "message": message[:_MESSAGE_CHARS]}
    fields = getattr(exc, "fields", None)
    if isinstance(exc, PluginConfigError) and fields:
        error["fields"] = fields
    return _dump({"kind": "error", "error": error, "leaving": leaving, "peak_kb": peak_kb})


def write_memory(peak_kb: int) -> bytes:
    """Return the reply that says the job needed more memory than the limit."""
    return _dump({"kind": "memory", "leaving": True, "peak_kb": peak_kb})


def write_ready(missing: list[str]) -> bytes:
    """Return the first reply of a process: what its sandbox could not enforce."""
    return _dump({"kind": "ready", "missing": missing})


def _dump(reply: dict[str, Any]) -> bytes:
    return json.dumps(reply, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")


def read_reply(data: bytes, job: Callable[..., Any] | None = None) -> Reply:
    """Return the checked reply in ``data``; an ``ok`` value is rebuilt as ``job`` returns it."""
    try:
        reply = json.loads(data.decode("utf-8", "surrogatepass"))
    except ValueError as exc:
        raise BadReply(f"not JSON: {exc}") from exc
    if not isinstance(reply, dict):
        raise BadReply("not an object")
    kind = reply.get("kind")
    if kind == "ready":
        missing = reply.get("missing")
        if not isinstance(missing, list) or not all(isinstance(m, str) for m in missing):
            raise BadReply("its list of what the sandbox misses is not a list of sentences")
        return Reply("ready", missing=tuple(m[:_MESSAGE_CHARS] for m in missing))
    leaving, peak_kb = reply.get("leaving"), reply.get("peak_kb")
    if not isinstance(leaving, bool) or type(peak_kb) is not int:
        raise BadReply("its leaving flag or peak memory is missing")
    if kind == "ok":
        value = _rebuild(reply.get("value"), _return_type(job) if job else Any)
        return Reply("ok", value, leaving, peak_kb)
    if kind == "error":
        return Reply("error", _exception(reply.get("error")), leaving, peak_kb)
    if kind == "memory":
        return Reply("memory", None, True, peak_kb)
    raise BadReply(f"unknown kind {str(kind)[:40]!r}")


def _exception(error: Any) -> Exception:
    if not isinstance(error, dict):
        raise BadReply("its error is not an object")
    name, message = error.get("type"), error.get("message")
    if not isinstance(name, str) or not isinstance(message, str):
        raise BadReply("its error has no type or message")
    cls = _ERRORS.get(name)
    if cls is None:
        return RuntimeError(f"{name[:100]}: {message[:_MESSAGE_CHARS]}")
    if cls is PluginConfigError:
        fields = _rebuild(error.get("fields") or {}, dict[str, list[str]])
        return PluginConfigError(message, fields)
    return cls(message)


@lru_cache(maxsize=256)
def _return_type(job: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(job).get("return", Any)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: plain data only
        return Any


@lru_cache(maxsize=64)
def _fields_of(cls: type) -> tuple[frozenset[str], dict[str, Any]]:
    # A reply's dataclass is one of the few jobs' return types: its fields and their types,
    # resolved once per process rather than for every page.
    names = frozenset(f.name for f in dataclasses.fields(cls) if f.init)
    return names, typing.get_type_hints(cls)


def _rebuild(value: Any, expected: Any) -> Any:
    """Return ``value`` checked against (and, for a dataclass, built as) ``expected``."""
    if dataclasses.is_dataclass(expected) and isinstance(expected, type):
        if not isinstance(value, dict):
            raise BadReply(f"{expected.__name__} is not an object")
        names, hints = _fields_of(expected)
        if set(value) != names:
            raise BadReply(f"{expected.__name__} has other fields than {sorted(names)}")
        return expected(**{name: _rebuild(value[name], hints[name]) for name in names})
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(expected):
            try:
                return _rebuild(value, option)
            except BadReply:
                continue
        raise BadReply(f"a value is none of {expected}")
    if origin is list:
        (item,) = typing.get_args(expected)
        if not isinstance(value, list):
            raise BadReply("a list is not a list")
        return [_rebuild(v, item) for v in value]
    if origin is dict:
        _, item = typing.get_args(expected)
        if not isinstance(value, dict):
            raise BadReply("a mapping is not an object")
        return {k: _rebuild(v, item) for k, v in value.items()}
    if expected in _PLAIN:
        if type(value) is not expected and not (expected is float and type(value) is int):
            raise BadReply(f"a value is not {expected.__name__}")
        return value
    if expected is Any or expected is object:
        return value  # whatever json.loads made: str, numbers, lists, dicts, None
    raise BadReply(f"the job's return type {expected} cannot come back from a parser process")
