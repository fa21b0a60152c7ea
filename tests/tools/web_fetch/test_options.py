"""web_fetch options: the spec's defaults, entries that fail start-up, and how entries match."""

from __future__ import annotations

import pytest

from tools.api import PluginConfigError
from tools.testing import start_plugin
from tools.web_fetch import plugin
from tools.web_fetch.options import DomainRules, WebFetchOptions, entry_problem


def test_options_default_to_the_spec_values():
    assert WebFetchOptions().load({}) == {
        "allowDomains": [],
        "denyDomains": [],
        "userToggle": True,
        "maxCharacters": 20000,
        "maxBytes": 5_000_000,
        "maxFileBytes": 20_000_000,
        "timeoutSeconds": 20,
    }


def test_the_options_tell_the_tool_its_toggle_and_deadline():
    tool = start_plugin(plugin, {"userToggle": False, "timeoutSeconds": 40})["web_fetch"]
    assert tool.user_toggle is False
    assert tool.timeout_seconds == 45


@pytest.mark.parametrize(
    "entry",
    [
        "Example.com",
        "EXAMPLE.COM",
        "http://example.com",
        "example.com/",
        "example.com:8080",
        "example.com.",
        " example.com",
        "*.example.com",
        "exa mple.com",
        "user@example.com",
        "",
        "-bad.example",
        "a" * 64 + ".com",
    ],
)
def test_an_entry_that_is_not_a_lowercase_bare_host_name_fails_startup(entry):
    with pytest.raises(PluginConfigError) as failed:
        start_plugin(plugin, {"denyDomains": [entry]})
    assert failed.value.fields["denyDomains"] == [entry_problem(entry)]
    assert repr(entry) in failed.value.message


@pytest.mark.parametrize("entry", ["example.com", "localhost", "bücher.example", "xn--p1ai"])
def test_lowercase_host_names_are_valid_entries(entry):
    assert entry_problem(entry) is None


@pytest.mark.parametrize(
    "options",
    [{"maxCharacters": 0}, {"maxBytes": -1}, {"timeoutSeconds": 0}, {"userToggle": "maybe"}],
)
def test_out_of_range_limits_fail_startup(options):
    with pytest.raises(PluginConfigError) as failed:
        start_plugin(plugin, options)
    assert list(failed.value.fields) == list(options)


@pytest.mark.parametrize(
    ("host", "refused"),
    [
        ("example.com", True),
        ("docs.example.com", True),
        ("a.b.example.com", True),
        ("notexample.com", False),
        ("example.com.evil.net", False),
        ("EXAMPLE.com.", True),
        ("xn--bcher-kva.example", True),
        ("Bücher.Example", True),
        ("buecher.example", False),
    ],
)
def test_a_deny_entry_covers_its_host_and_subdomains_on_a_dot_boundary(host, refused):
    rules = DomainRules.from_lists([], ["example.com", "bücher.example"])
    assert (rules.refusal(host) is not None) is refused


def test_deny_is_checked_before_allow():
    rules = DomainRules.from_lists(["example.com"], ["private.example.com"])
    assert rules.refusal("www.example.com") is None
    assert "deny list" in rules.refusal("private.example.com")
    assert "allow list" in rules.refusal("example.org")


def test_empty_lists_refuse_nothing():
    assert DomainRules.from_lists([], []).refusal("anything.example") is None


def test_every_option_has_a_title_for_the_admin_form():
    from tools.schema import json_schema

    properties = json_schema(WebFetchOptions)["properties"]
    assert set(properties) == set(WebFetchOptions().load({}))
    assert all(field.get("title") for field in properties.values())
