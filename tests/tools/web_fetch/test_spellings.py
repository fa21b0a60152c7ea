"""Every spelling of a host meets the domain lists, and every malformed URL is a sentence.

Issue 10: the lists were matched on the undecoded host while urllib3 connects to the decoded
one, so http://exa%6dple.com/ was fetched with example.com denied; and malformed URLs ended
in a bare ValueError ("failed unexpectedly", a traceback in the log).
"""

from __future__ import annotations

import pytest

from tools.api import ToolError, ToolRefused
from tools.urls import request_host

SPELLINGS = ["exa%6dple.com", "example%2ecom", "EXAMPLE.com", "example.com.", "Ex%41mple.COM"]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_denied_host_is_refused_however_it_is_spelled(spelling, site, dns, web_fetch):
    site.route("/", lambda h: h.reply(200, "text/plain", b"secret"))
    dns["example.com"] = "127.0.0.2"
    url = f"http://{spelling}:{site.port}/"
    with pytest.raises(ToolRefused) as refused:
        web_fetch({"denyDomains": ["example.com"]})(url)
    assert refused.value.message == (
        f"Fetching {url} is not allowed: example.com is covered by the deny list entry example.com."
    )
    assert site.requests == []


@pytest.mark.parametrize("spelling", ["exa%6dple.com", "example%2ecom"])
def test_a_redirect_to_a_denied_host_spelled_with_escapes_is_refused(
    spelling, site, dns, web_fetch
):
    dns.update({"example.com": "127.0.0.2", "news.site": "127.0.0.2"})
    target = f"http://{spelling}:{site.port}/landing"
    site.route("/go", lambda h: h.redirect(302, target))
    site.route("/landing", lambda h: h.reply(200, "text/plain", b"secret"))
    with pytest.raises(ToolRefused):
        web_fetch({"denyDomains": ["example.com"]})(site.url("/go", host="news.site"))
    assert site.paths() == ["/go"]


def test_a_deny_rule_inside_an_allow_rule_holds_for_an_escaped_subdomain(site, dns, web_fetch):
    site.route("/", lambda h: h.reply(200, "text/plain", b"hello"))
    dns.update({"docs.example.com": "127.0.0.2", "www.example.com": "127.0.0.2"})
    run = web_fetch({"allowDomains": ["example.com"], "denyDomains": ["docs.example.com"]})
    with pytest.raises(ToolRefused):
        run(f"http://do%63s.example.com:{site.port}/")
    assert run(f"http://www.ex%61mple.com:{site.port}/")["content"] == "hello"


def test_an_allow_list_admits_an_escaped_spelling_of_an_allowed_host(site, dns, web_fetch):
    site.route("/", lambda h: h.reply(200, "text/plain", b"hello"))
    dns["example.com"] = "127.0.0.2"
    run = web_fetch({"allowDomains": ["example.com"]})
    assert run(f"http://exa%6dple.com:{site.port}/")["content"] == "hello"


@pytest.mark.parametrize(
    "url",
    ["http://[example.com]/", "http://[::1", "http://exa%20mple.com/", "http://a%2fb.com/"],
)
def test_a_malformed_url_is_a_sentence(url, web_fetch):
    with pytest.raises(ToolError) as error:
        web_fetch()(url)
    assert error.value.message == f"{url} is not a valid URL."


@pytest.mark.parametrize("location", ["http://[bad/x", "http://[example.com]/"])
def test_a_redirect_to_a_malformed_url_is_a_sentence(location, site, dns, web_fetch):
    site.route("/go", lambda h: h.redirect(302, location))
    with pytest.raises(ToolError) as error:
        web_fetch()(site.url("/go"))
    assert "not a valid URL" in error.value.message
    assert "unexpectedly" not in error.value.message


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://exa%6dple.com/", "example.com"),
        ("http://EXAMPLE.com./x", "example.com"),
        ("http://exämple.com/", "xn--exmple-cua.com"),
        ("http://[::1]:8080/", "::1"),
        ("http://127.0.0.1/", "127.0.0.1"),
    ],
)
def test_request_host_is_the_host_that_will_be_connected_to(url, host):
    assert request_host(url) == host


@pytest.mark.parametrize("url", ["http://[example.com]/", "http://a%00b.com/", "http://a%20b/"])
def test_request_host_refuses_a_host_no_connection_could_use(url):
    with pytest.raises(ValueError):
        request_host(url)
