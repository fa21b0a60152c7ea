"""Tool names bounded before metrics, usage rows and log lines take them."""

from core.plugin_host import get_host
from core.tool_names import NAME_MAX, UNKNOWN, clean, tool_label


def test_control_characters_are_stripped_and_long_names_cut():
    assert clean("web\nfetch\x1b[31m\u2028") == "webfetch[31m"
    assert clean("a" * 500) == "a" * NAME_MAX
    assert clean("\n\t") == UNKNOWN


def test_an_installed_tool_keeps_its_name_and_any_other_is_unknown(app):
    with app.app_context():
        installed = get_host().tools()[0].name
        assert tool_label(installed) == installed
        assert tool_label("made_up_tool") == UNKNOWN
        assert tool_label(installed + "\n") == UNKNOWN
        assert tool_label(None) == UNKNOWN


def test_a_tool_sources_tool_is_counted_under_its_source(app):
    with app.app_context():
        assert tool_label("whatever\nthe source said", source="docs") == "source:docs"
