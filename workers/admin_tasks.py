"""Tasks the admin area awaits: testing a provider's connection, its models and their tools,
and trying a plugin's tool with the options of its form (the plugins page's "Test search").

The web side never calls a model itself (DESIGN.md): `POST /api/admin/providers/<id>/test`
sends `broker.PROBE_PROVIDER` through webapp/queue.py and waits a few seconds for the answer;
`POST /api/admin/providers/test` sends `broker.PROBE_PROVIDER_SETTINGS` with a provider not saved
yet (its key sealed with the app's secrets key, so the queue never holds it in clear).
The test lists the models (with the context size a server reports), then asks each of the first
few for one tiny tool call, so that "Import models" ticks Tools only where a tool call worked.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from flask import current_app
from marshmallow import ValidationError

from core import broker, plugin_host
from core.extensions import db
from core.models import Provider, User
from core.models.encrypted import decrypt
from tools.api import IngesterRegistry, PluginConfigError, ToolError
from tools.host import start
from workers.celery_app import celery
from workers.context import make_trial_context
from workers.providers import (
    OpenAICompatibleProvider,
    ProviderError,
    ToolCallRequest,
    ToolSpec,
)

log = logging.getLogger(__name__)

# Below the web request's wait (15 s), so a slow provider is reported as slow, not as no worker.
TEST_TIMEOUT_SECONDS = 8.0
TEST_CONNECT_TIMEOUT_SECONDS = 4.0
# The whole test, listing and probes together, ends by then; models past it are not probed.
TEST_BUDGET_SECONDS = 12.0
PROBE_MODELS = 3
PROBE_MAX_TOKENS = 64
PROBE_TOOL = ToolSpec(
    "ping",
    "Answers pong. Call it when the user asks you to ping.",
    {"type": "object", "properties": {}, "additionalProperties": False},
)
PROBE_MESSAGES = [{"role": "user", "content": "Ping, please: call the ping tool."}]
# Where servers report a model's context size in their model list.
CONTEXT_KEYS = ("context_length", "max_model_len", "context_window", "max_context_length")


UNSEALED = (
    "The workers could not open the key the web app sent: give them the same SECRETS_KEY (or "
    "SECRET_KEY) as the web app, then test again."
)


def check_provider(provider: Provider) -> dict[str, Any]:
    """Return {"ok": True, "models": [...], "found": [...], "note"?} or {"ok": False, "error":
    sentence}; never the key."""
    started = time.monotonic()
    client = make_client(provider, TEST_TIMEOUT_SECONDS)
    with client:
        try:
            listed = client.describe_models()
        except ProviderError as error:
            return {"ok": False, "error": busy_sentence(provider, error)}
    found = sorted(
        ({"name": str(m["id"]), "contextTokens": context_of(m), "tools": None} for m in listed),
        key=lambda entry: entry["name"],
    )
    notes = probe_tools(provider, found, started)
    outcome: dict[str, Any] = {"ok": True, "models": [m["name"] for m in found], "found": found}
    if notes:
        outcome["note"] = " ".join(notes)
    return outcome


def make_client(provider: Provider, timeout: float) -> OpenAICompatibleProvider:
    """Return a client for one connection test, never retried."""
    return OpenAICompatibleProvider(
        name=provider.name,
        base_url=provider.base_url,
        api_key=provider.api_key or "",
        timeout=timeout,
        connect_timeout=min(TEST_CONNECT_TIMEOUT_SECONDS, timeout),
        max_retries=0,
    )


def busy_sentence(provider: Provider, error: ProviderError) -> str:
    """The error's sentence, or, for a server that took the request but did not answer in
    time, one that says it is busy rather than "did not answer"."""
    if not error.timed_out:
        return error.message
    return (
        f"The provider {provider.name} is reachable but busy: it did not answer within "
        f"{TEST_TIMEOUT_SECONDS:g} seconds (a model server often answers one request at a time). "
        "Test again when it is idle."
    )


def context_of(model: dict[str, Any]) -> int | None:
    """The context size a model-list entry reports, in tokens, or None."""
    meta = model.get("meta") if isinstance(model.get("meta"), dict) else {}
    for value in [
        *(model.get(k) for k in CONTEXT_KEYS),
        meta.get("n_ctx"),
        meta.get("n_ctx_train"),
    ]:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def probe_tools(provider: Provider, found: list[dict[str, Any]], started: float) -> list[str]:
    """Mark ``found`` models' ``tools`` by one tiny tool call each (the first PROBE_MODELS,
    while the test's time lasts); return the sentences the admin should read."""
    notes: list[str] = []
    for index, entry in enumerate(found):
        left = TEST_BUDGET_SECONDS - (time.monotonic() - started)
        if index >= PROBE_MODELS or left < 1:
            break
        try:
            entry["tools"] = tool_call_works(
                provider, entry["name"], min(left, TEST_TIMEOUT_SECONDS)
            )
        except ProviderError as error:  # busy: the other models would wait behind it too
            notes.append(busy_sentence(provider, error))
            break
    unknown = [entry["name"] for entry in found if entry["tools"] is None]
    return [*notes, check_sentence(unknown)] if unknown else notes


def tool_call_works(provider: Provider, model: str, timeout: float) -> bool | None:
    """True when the model answered with a tool call, False when its server refused the tools
    (HTTP 400, 422 or 501), None when it answered in text. Raises ProviderError when the
    model did not answer in time."""
    with make_client(provider, timeout) as client:
        try:
            for event in client.stream(
                model, PROBE_MESSAGES, [PROBE_TOOL], max_tokens=PROBE_MAX_TOKENS
            ):
                if isinstance(event, ToolCallRequest):
                    return True
        except ProviderError as error:
            if error.timed_out:
                raise
            return False if error.status in (400, 422, 501) else None
    return None


def check_sentence(names: list[str]) -> str:
    """The sentence asking the admin to check the tools of models the test could not tell."""
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return (
        f"Lookout could not tell whether {shown} can call tools: Import leaves Tools unticked "
        "for them. Tick it for those whose documentation says they can."
    )


@celery.task(name=broker.PROBE_PROVIDER)
def probe_provider(provider_id: str) -> dict[str, Any]:
    """Return the outcome of testing the stored provider `provider_id`."""
    provider = db.session.get(Provider, provider_id)
    if provider is None:
        return {"ok": False, "error": "There is no such provider. Reload the page."}
    outcome = check_provider(provider)
    log.info(
        "provider connection test: provider=%s ok=%s models=%d",
        provider.name,
        outcome["ok"],
        len(outcome.get("models", [])),
    )
    return outcome


@celery.task(name=broker.PROBE_PROVIDER_SETTINGS)
def probe_provider_settings(name: str, base_url: str, sealed_key: str | None) -> dict[str, Any]:
    """Return the outcome of testing a provider not saved yet; ``sealed_key`` is its key as
    ``core.models.encrypted.encrypt`` sealed it, or None."""
    api_key = decrypt(sealed_key) if sealed_key else None
    if sealed_key and api_key is None:
        return {"ok": False, "error": UNSEALED}
    provider = Provider(name=name, base_url=base_url, api_key=api_key, models=[])
    outcome = check_provider(provider)
    log.info(
        "unsaved provider connection test: provider=%s ok=%s models=%d",
        name,
        outcome["ok"],
        len(outcome.get("models", [])),
    )
    return outcome


@celery.task(name=broker.TRY_PLUGIN_TOOL)
def try_plugin_tool(
    plugin_id: str, tool_name: str, sealed_options: str, input: dict[str, Any], user_id: str
) -> dict[str, Any]:
    """Return {"ok": True, "output": ...} or {"ok": False, "error": sentence} of running the
    tool ``tool_name`` once, as the admin ``user_id``, with the plugin set up from
    ``sealed_options`` (its options as the form holds them, sealed with the secrets key)."""
    opened = decrypt(sealed_options)
    state = plugin_host.get_host().plugins.get(plugin_id)
    user = db.session.get(User, user_id)
    if opened is None:
        return {"ok": False, "error": UNSEALED}
    if state is None or state.plugin is None or user is None:
        return {"ok": False, "error": f"There is no plugin {plugin_id} here. Reload the page."}
    config = current_app.config
    try:
        _options, tools = start(
            state.plugin,
            json.loads(opened),
            IngesterRegistry(),
            config["APP_NAME"],
            config["PUBLIC_URL"],
        )
    except PluginConfigError as error:
        return {"ok": False, "error": f"{error.message} Check the options, then test again."}
    tool = next((t for t in tools if t.name == tool_name), None)
    if tool is None:
        return {"ok": False, "error": f"These options offer no {tool_name} tool to test."}
    ctx = make_trial_context(user.id, list(user.roles or []), tool.timeout_seconds)
    try:
        output = tool.execute(tool.input_schema().load(input), ctx)
    except ValidationError as error:
        return {"ok": False, "error": f"The test's input is not valid: {error.messages}."}
    except ToolError as error:
        return {"ok": False, "error": error.message}
    finally:
        ctx.fetch.close()
    log.info("plugin tool trial: plugin=%s tool=%s ok=True", plugin_id, tool_name)
    return {"ok": True, "output": output}
