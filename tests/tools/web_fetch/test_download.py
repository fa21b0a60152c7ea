"""web_fetch downloads: redirects by hand, the guard on every hop, headers, limits, errors."""

from __future__ import annotations

import pytest

from tools.api import ToolError, ToolRefused

ACCEPT = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, text/plain;q=0.8, */*;q=0.5"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_each_redirect_status_is_followed_by_hand(site, dns, web_fetch, status):
    site.route("/from", lambda h: h.redirect(status, "/to"))
    site.route("/to", lambda h: h.reply(200, "text/plain", b"arrived"))
    output = web_fetch()(site.url("/from"))
    assert output["url"] == site.url("/to")
    assert output["content"] == "arrived"
    assert site.paths() == ["/from", "/to"]


def test_a_chain_of_5_redirects_is_followed(site, dns, web_fetch):
    for n in range(5):
        site.route(f"/r{n}", lambda h, n=n: h.redirect(307, site.url(f"/r{n + 1}")))
    site.route("/r5", lambda h: h.reply(200, "text/plain", b"five hops"))
    assert web_fetch()(site.url("/r0"))["content"] == "five hops"


def test_a_redirect_to_a_private_address_is_refused(site, dns, web_fetch, caplog):
    dns["internal.example"] = "10.0.0.1"
    target = "http://internal.example/admin"
    site.route("/go", lambda h: h.redirect(302, target))
    with pytest.raises(ToolRefused) as refused:
        web_fetch()(site.url("/go"))
    assert refused.value.message == (
        f"Fetching {target} is not allowed: Lookout reads only public internet addresses."
    )
    assert "private network" in caplog.text
    assert "private network" not in refused.value.message


def test_a_redirect_to_a_url_with_credentials_is_refused_saying_why(site, dns, web_fetch):
    site.route("/go", lambda h: h.redirect(302, "http://admin:hunter2@example.com/"))
    with pytest.raises(ToolRefused) as refused:
        web_fetch()(site.url("/go"))
    assert refused.value.message.endswith("is not allowed: credentials (user@) in the URL.")


def test_a_redirect_to_loopback_by_address_is_refused(site, dns, web_fetch):
    target = f"http://127.0.0.1:{site.port}/"
    site.route("/go", lambda h: h.redirect(301, target))
    with pytest.raises(ToolRefused):
        web_fetch()(site.url("/go"))
    assert site.paths() == ["/go"]


def test_a_redirect_outside_the_allow_list_is_refused(site, dns, web_fetch):
    dns.update({"docs.example.com": "127.0.0.2", "elsewhere.org": "127.0.0.2"})
    site.route("/go", lambda h: h.redirect(308, site.url("/", host="elsewhere.org")))
    with pytest.raises(ToolRefused):
        web_fetch({"allowDomains": ["example.com"]})(site.url("/go", host="docs.example.com"))
    assert site.paths() == ["/go"]


def test_a_redirect_to_another_scheme_is_refused(site, dns, web_fetch):
    site.route("/go", lambda h: h.redirect(302, "file:///etc/passwd"))
    with pytest.raises(ToolRefused) as refused:
        web_fetch()(site.url("/go"))
    assert refused.value.message == (
        "Fetching file:///etc/passwd is not allowed: only http and https addresses are read."
    )


@pytest.mark.parametrize(
    "host", ["DOCS.Example.COM", "docs.example.com.", "Example.Com."], ids=["upper", "dot", "both"]
)
def test_hosts_are_lowercased_and_stripped_of_a_trailing_dot_before_the_lists(
    site, dns, web_fetch, host
):
    dns.update({name: "127.0.0.2" for name in ("docs.example.com", "example.com")})
    dns.update({name + ".": "127.0.0.2" for name in ("docs.example.com", "example.com")})
    site.route("/", lambda h: h.reply(200, "text/plain", b"hello"))
    with pytest.raises(ToolRefused):
        web_fetch({"denyDomains": ["example.com"]})(site.url("/", host=host))
    assert web_fetch({"allowDomains": ["example.com"]})(site.url("/", host=host))["content"] == (
        "hello"
    )


@pytest.mark.parametrize("entry", ["bücher.example", "xn--bcher-kva.example"])
def test_idn_hosts_match_entries_in_either_form(site, dns, web_fetch, entry):
    dns["xn--bcher-kva.example"] = "127.0.0.2"
    dns["shop.xn--bcher-kva.example"] = "127.0.0.2"
    site.route("/", lambda h: h.reply(200, "text/plain", b"books"))
    for host in ("BÜCHER.example", "shop.bücher.example", "xn--bcher-kva.example"):
        with pytest.raises(ToolRefused):
            web_fetch({"denyDomains": [entry]})(site.url("/", host=host))
        assert web_fetch({"allowDomains": [entry]})(site.url("/", host=host))["content"] == "books"


def test_a_domain_entry_never_matches_a_longer_name_ending_in_it(site, dns, web_fetch):
    dns["notexample.com"] = "127.0.0.2"
    site.route("/", lambda h: h.reply(200, "text/plain", b"hello"))
    assert web_fetch({"denyDomains": ["example.com"]})(site.url("/", host="notexample.com"))
    with pytest.raises(ToolRefused):
        web_fetch({"allowDomains": ["example.com"]})(site.url("/", host="notexample.com"))


def test_every_request_sends_the_user_agent_and_accept_headers(site, dns, web_fetch):
    site.route("/from", lambda h: h.redirect(302, "/to"))
    site.route("/to", lambda h: h.reply(200, "text/plain", b"ok"))
    web_fetch()(site.url("/from"))
    for _, headers in site.requests:
        assert headers["User-Agent"] == "Lookout (+http://localhost:5000)"
        assert headers["Accept"] == ACCEPT


def test_an_http_error_after_a_redirect_names_the_url_that_failed(site, dns, web_fetch):
    site.route("/from", lambda h: h.redirect(302, "/missing"))
    with pytest.raises(ToolError) as error:
        web_fetch()(site.url("/from"))
    assert error.value.message == f"Fetching {site.url('/missing')} failed (HTTP 404)."


def test_a_file_without_a_length_over_max_file_bytes_is_refused_after_reading_past_the_limit(
    site, dns, web_fetch
):
    from tools.pdf import PdfIngester

    site.route("/stream.pdf", lambda h: h.stream("application/pdf", b"%" * 4096, None))
    with pytest.raises(ToolError) as error:
        web_fetch({"maxFileBytes": 50_000}, ingesters=(PdfIngester(),))(site.url("/stream.pdf"))
    assert "is larger than the 0.05 MB limit for files." in error.value.message
    assert site.client_gone.wait(5)


def test_a_broken_pdf_is_a_tool_error_with_the_ingesters_message(site, dns, web_fetch):
    from tools.pdf import PdfIngester

    site.route("/bad.pdf", lambda h: h.reply(200, "application/pdf", b"%PDF-1.4 not really"))
    with pytest.raises(ToolError) as error:
        web_fetch(ingesters=(PdfIngester(),))(site.url("/bad.pdf"))
    assert error.value.message == (
        f"The PDF {site.url('/bad.pdf')} could not be read: it is damaged or not a PDF."
    )


def test_a_name_that_does_not_resolve_is_a_clear_error(dns, web_fetch):
    with pytest.raises(ToolError) as error:
        web_fetch()("http://no-such-host.example/")
    assert error.value.message == (
        "Fetching http://no-such-host.example/ failed: its host name could not be found. "
        "Check the URL."
    )


def test_a_refused_connection_is_a_clear_error(site, dns, web_fetch):
    url = site.url("/")
    site.stop()  # nothing listens on the port any more
    with pytest.raises(ToolError) as error:
        web_fetch()(url)
    assert error.value.message == (
        f"Fetching {url} failed: the site could not be reached. Try again later."
    )


def test_a_page_is_decoded_with_its_meta_charset_when_content_type_has_none(site, dns, web_fetch):
    page = "<html><head><meta charset='windows-1252'><title>Café</title></head>"
    page += "<body><p>Crème brûlée at the café, served warm.</p></body></html>"
    site.route("/menu", lambda h: h.reply(200, "text/html", page.encode("cp1252")))
    output = web_fetch()(site.url("/menu"))
    assert output["title"] == "Café"
    assert "Crème brûlée" in output["content"]
