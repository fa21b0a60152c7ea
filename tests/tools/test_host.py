"""The plugin host: loading by module path, statuses, tool ownership, enablement."""

import logging

import pytest

from tools.host import PluginHost, is_enabled, load_plugin

PKG = "tests.tools.sample_plugins"


def host(*names, stored=None):
    modules = [f"{PKG}.{n}" for n in names]
    return PluginHost(modules, "Lookout", "http://localhost:5000").load(stored or {})


def test_listed_plugins_start_with_empty_options_and_their_tools_are_recorded():
    h = host("alpha")
    assert h.plugins["alpha"].status == "active"
    assert [t.name for t in h.tools()] == ["shout", "whisper"]
    assert h.owner("whisper") == "alpha"
    assert h.find_tool("nope") is None


def test_a_second_tool_of_the_same_name_is_refused_and_reported(caplog):
    with caplog.at_level(logging.WARNING, logger="lookout.plugins"):
        h = host("alpha", "beta")
    assert h.plugins["beta"].status == "failed"
    assert "shout (registered by alpha)" in h.plugins["beta"].reason
    assert h.owner("shout") == "alpha"
    assert "beta" in caplog.text


def test_a_plugin_missing_required_options_needs_configuration_and_others_run():
    h = host("keyed", "alpha")
    keyed = h.plugins["keyed"]
    assert keyed.status == "needs-configuration"
    assert set(keyed.fields) == {"apiKey", "engine"}
    assert keyed.tools == [] and h.find_tool("keyed_search") is None
    assert h.plugins["alpha"].status == "active"


def test_stored_options_that_are_invalid_fail_the_plugin_with_the_reason():
    h = host("keyed", stored={"keyed": {"engine": "x"}})
    assert h.plugins["keyed"].status == "failed"
    assert h.plugins["keyed"].fields == {"apiKey": ["Missing data for required field."]}


def test_valid_stored_options_start_the_plugin():
    h = host("keyed", stored={"keyed": {"engine": "x", "apiKey": "k"}})
    assert h.plugins["keyed"].status == "active"
    assert h.find_tool("keyed_search").execute({}, None) == "x"


def test_a_plugin_whose_id_differs_from_its_module_name_is_refused():
    h = host("misnamed")
    assert h.plugins["misnamed"].status == "failed"
    assert "must be 'misnamed'" in h.plugins["misnamed"].reason
    with pytest.raises(Exception, match="could not be imported"):
        load_plugin(f"{PKG}.does_not_exist")


def test_a_plugin_whose_setup_crashes_fails_alone():
    h = host("crashing", "alpha")
    assert h.plugins["crashing"].status == "failed"
    assert "boom" in h.plugins["crashing"].reason
    assert h.plugins["alpha"].status == "active"


def test_ingesters_registered_by_a_later_plugin_serve_an_earlier_plugins_tool():
    h = host("reader", "pdfish")
    assert h.find_tool("read_pdf").execute({}, None) == "pdf text"
    assert h.ingesters.accepts("text/csv")


def test_tool_sources_are_listed_separately_from_registered_tools():
    h = host("sourced")
    assert h.tools() == []
    source, tool = h.source_tools()["remote_lookup"]
    assert source.id == "remote" and tool.name == "remote_lookup"


def test_a_stored_choice_counts_only_for_a_tool_with_user_toggle():
    h = host("alpha")
    shout, whisper = h.find_tool("shout"), h.find_tool("whisper")
    assert is_enabled(shout, None) is True
    assert is_enabled(shout, False) is True  # no user_toggle: the default decides
    assert is_enabled(whisper, None) is False
    assert is_enabled(whisper, True) is True
