"""The plugin API: signals, tool input validation, JSON Schema, ingesters."""

import math
import threading
import time

import pytest
from marshmallow import Schema, fields, validate

from tools.api import (
    Cancelled,
    Ingester,
    IngesterRegistry,
    IngestInput,
    IngestResult,
    Plugin,
    PluginConfigError,
    Signal,
    Tool,
    ToolError,
    validate_options,
)


class QueryInput(Schema):
    query = fields.String(
        required=True,
        validate=validate.Length(min=1, max=400),
        metadata={"description": "What to search for."},
    )
    limit = fields.Integer(load_default=5, validate=validate.Range(min=1, max=20))


def make_tool(**overrides):
    values = dict(name="echo", description="Echo.", input_schema=QueryInput, execute=lambda i, c: i)
    values.update(overrides)
    return Tool(**values)


def test_tool_defaults_are_off_and_trusted_with_a_30_second_deadline():
    tool = make_tool()
    assert (tool.default_enabled, tool.user_toggle, tool.untrusted) == (False, False, False)
    assert tool.timeout_seconds == 30


def test_tool_input_is_validated_before_execute_and_defaults_are_filled():
    assert make_tool().validate_input({"query": "cats"}) == {"query": "cats", "limit": 5}


def test_invalid_tool_input_is_a_tool_error_naming_the_field():
    with pytest.raises(ToolError, match="query"):
        make_tool().validate_input({"query": ""})
    with pytest.raises(ToolError, match="must be a JSON object"):
        make_tool().validate_input(["cats"])


def counted_schema() -> tuple[type[Schema], list[int]]:
    """Return a new input schema class (as a plugin loaded again brings) and the list its
    instances are counted into as they are built."""
    built: list[int] = []

    class CountedInput(QueryInput):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    return CountedInput, built


def test_an_input_schema_is_built_once_for_every_validation_of_its_class():
    """Issue 29: each validation built its schema again (three times its load's CPU)."""
    schema, built = counted_schema()
    tool = make_tool(input_schema=schema)
    for query in ("cats", "dogs", "owls"):
        assert tool.validate_input({"query": query}) == {"query": query, "limit": 5}
    for bad in ({"query": "", "limit": 0}, {"query": "cats", "limit": 0}):
        with pytest.raises(ToolError) as caught:
            tool.validate_input(bad)
        with pytest.raises(ToolError) as plain:
            make_tool().validate_input(bad)
        assert caught.value.message == plain.value.message  # each call's errors, its own
    assert len(built) == 1


def test_a_plugin_loaded_again_validates_with_its_new_schema_class():
    first, first_built = counted_schema()
    again, again_built = counted_schema()

    class Stricter(again):
        query = fields.String(required=True, validate=validate.Length(min=1, max=3))

    assert make_tool(input_schema=first).validate_input({"query": "cats"})["query"] == "cats"
    with pytest.raises(ToolError, match="query"):
        make_tool(input_schema=Stricter).validate_input({"query": "cats"})
    assert (len(first_built), len(again_built)) == (1, 1)


def test_json_schema_sent_to_the_model_is_derived_from_the_input_schema():
    assert make_tool().json_schema() == {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": 400,
                "description": "What to search for.",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def test_signal_without_deadline_has_infinite_time_until_cancelled():
    signal = Signal()
    assert signal.remaining() == math.inf and not signal.cancelled
    signal.cancel()
    assert signal.cancelled and signal.reason == "cancelled" and signal.remaining() == 0
    with pytest.raises(Cancelled):
        signal.raise_if_cancelled()


def test_signal_trips_at_its_deadline_and_reports_a_timeout():
    signal = Signal.after(0.05)
    assert 0 < signal.remaining() <= 0.05
    assert signal.timeout(15) <= 0.05
    assert signal.wait(5) is True
    assert signal.timed_out
    with pytest.raises(Cancelled):
        signal.timeout(15)


def test_on_cancel_callbacks_run_once_when_cancelled_from_another_thread():
    signal = Signal()
    calls = []
    signal.on_cancel(lambda: calls.append("a"))
    undo = signal.on_cancel(lambda: calls.append("b"))
    undo()
    threading.Thread(target=signal.cancel).start()
    assert signal.wait(5)
    time.sleep(0.01)
    signal.cancel()
    assert calls == ["a"]
    signal.on_cancel(lambda: calls.append("late"))
    assert calls == ["a", "late"]


def test_on_cancel_callbacks_run_at_the_deadline():
    signal = Signal.after(0.05)
    fired = threading.Event()
    signal.on_cancel(fired.set)
    assert fired.wait(2)


def ingester(id, priority, types, text):
    return Ingester(
        id=id,
        priority=priority,
        accepts=lambda mime: mime in types,
        ingest=lambda file: IngestResult(text=f"{text}:{file.filename}"),
    )


def test_ingest_uses_the_highest_priority_ingester_for_the_type():
    registry = IngesterRegistry()
    registry.register(ingester("pdf", 10, {"application/pdf"}, "plain"))
    registry.register(ingester("ocr", 50, {"application/pdf", "image/png"}, "ocr"))
    result = registry.ingest(IngestInput(b"%PDF", "Application/PDF; charset=x", "a.pdf"))
    assert result == IngestResult(text="ocr:a.pdf")


def test_ingest_returns_none_when_no_ingester_accepts_and_accepts_agrees():
    registry = IngesterRegistry([ingester("pdf", 10, {"application/pdf"}, "plain")])
    for mime in ("application/pdf", "image/png", "application/zip"):
        accepted = registry.accepts(mime)
        assert accepted == (registry.ingest(IngestInput(b"", mime)) is not None)
    assert registry.ingest(IngestInput(b"", "image/png")) is None


def test_invalid_options_raise_plugin_config_error_with_per_field_messages():
    with pytest.raises(PluginConfigError) as caught:
        validate_options(QueryInput, {"limit": 99}, "options of echo")
    assert set(caught.value.fields) == {"query", "limit"}
    assert "query" in caught.value.message


def test_a_settings_schema_factory_gets_the_users_roles_only_when_it_takes_them():
    class Settings(Schema):
        colour = fields.String()

    heard = []
    by_options = Plugin("a", Schema, lambda ctx: None, lambda options: heard.append(options))
    by_roles = Plugin("b", Schema, lambda ctx: None, lambda o, roles: heard.append(roles))
    by_options.settings_schema_for({"x": 1}, ["user"])
    by_roles.settings_schema_for({"x": 1}, ["user", "admin"])
    assert heard == [{"x": 1}, ["user", "admin"]]
    assert Plugin("c", Schema, lambda ctx: None, Settings).settings_schema_for({}) is Settings
