"""The page's link rule (webapp/static/links.js) agrees with tools.citations on every case."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.node import STATIC, run_node
from tools.citations import is_presentable_url

ROOT = Path(__file__).resolve().parents[2]
LINKS_JS = STATIC / "links.js"
SHARED_CASES = json.loads((ROOT / "tests" / "data" / "url_cases.json").read_text())
# Spellings where a hand-written parser could part from urllib.parse.urlsplit; the expected
# answer is whatever Python says.
EDGE_URLS = [
    "https://[::1]/",
    "https://[::1",
    "https://a]b/",
    "https://[127.0.0.1]/",
    "https://[v1.x]/",
    "https://[vz.x]/",
    "https://[]/",
    "https://[::1]x/",
    "https://[1:2:3:4:5:6:7:8]/",
    "https://[1:2:3:4:5:6:7:8:9]/",
    "https://[::ffff:1.2.3.4]/",
    "https://[::ffff:1.2.3.04]/",
    "https://[fe80::1%eth0]/",
    "https://[fe80::1%]/",
    "https://[1::2::3]/",
    "https://[:1::]/",
    "https://[1::]/",
    "https://[::1]@/",
    "https://user:pw@example.com/",
    "https://user@/",
    "https://:80/",
    "https://example.com:99999/",
    "https://exa\u2100mple.com/",
    "https://ex%61mple.com",
    "HtTp://x",
    "http://x?y",
    "http://?x",
    "http://#x",
    "https:/example.com",
    "https:///example.com",
    "h ttps://x",
    "1http://x",
    "http+x://y",
    "https://exa mple.com",
    "https://example.com\u00a0",
    "https://example.com\x85",
    "\ufeffhttps://example.com",
    "https://\ufeffexample.com",
    "https://example.com/\u2028",
    "https://example.com/" + "a" * 2028,
    "https://example.com/" + "a" * 2029,
    "https://example.com/" + "\U0001f600" * 2028,
]
CASES = [(case["url"], case["presentable"]) for case in SHARED_CASES] + [
    (url, is_presentable_url(url)) for url in EDGE_URLS
]


def test_python_agrees_with_the_shared_cases():
    assert [is_presentable_url(case["url"]) for case in SHARED_CASES] == [
        case["presentable"] for case in SHARED_CASES
    ]


def test_the_page_rule_agrees_with_python_in_node():
    urls = [url for url, _ in CASES]
    answers = run_node("links.js", "isPresentableUrl", [[url] for url in urls])
    assert [(u, a) for u, a in zip(urls, answers, strict=True)] == CASES


def test_the_page_rule_agrees_with_python_in_chromium(page):
    page.add_script_tag(path=str(LINKS_JS))
    urls = [url for url, _ in CASES]
    answers = page.evaluate("urls => urls.map(LookoutLinks.isPresentableUrl)", urls)
    assert [(u, a) for u, a in zip(urls, answers, strict=True)] == CASES
