"""The page's Markdown renderer (webapp/static/markdown.js) and message tree (chat_tree.js).

The parser and the tree are plain functions, checked in Node; rendering builds DOM nodes, checked
in Chromium, where no HTML in model text may become an element.
"""

from __future__ import annotations

import pytest

from tests.support.node import STATIC, run_node


def parse(text: str) -> list:
    return run_node("markdown.js", "parse", [[text]])[0]


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def test_html_in_the_text_stays_text():
    blocks = parse('<img src=x onerror="alert(1)"> <script>alert(2)</script>')
    assert blocks == [
        {
            "type": "paragraph",
            "children": [text('<img src=x onerror="alert(1)"> <script>alert(2)</script>')],
        }
    ]


def test_links_get_an_href_only_through_the_shared_link_rule():
    [paragraph] = parse(
        "[ok](https://example.com/a_(b)) [bad](javascript:alert(1)) [data](data:text/html,x) "
        "<https://auto.example/> and https://bare.example/path."
    )
    links = [n for n in paragraph["children"] if n["type"] == "link"]
    assert [(n["href"], n["children"]) for n in links] == [
        ("https://example.com/a_(b)", [text("ok")]),
        (None, [text("bad")]),
        (None, [text("data")]),
        ("https://auto.example/", [text("https://auto.example/")]),
        ("https://bare.example/path", [text("https://bare.example/path")]),
    ]
    assert paragraph["children"][-1] == text(".")


def test_images_are_nodes_to_load_on_click_and_only_for_http_urls():
    [paragraph] = parse("![a cat](https://img.example/cat.png?q=1) ![x](javascript:alert(1))")
    assert paragraph["children"] == [
        {"type": "image", "src": "https://img.example/cat.png?q=1", "alt": "a cat"},
        text(" "),
        text("[image: x]"),
    ]


def test_blocks_headings_lists_code_quotes_and_tables():
    blocks = parse(
        "# Title\n\n- one\n- **two**\n\n3. three\n4. four\n\n```python\nprint('<b>')\n```\n"
        "> quoted\n\n| a | b |\n|---|---|\n| 1 | `x|y` |\n\n---\nlast *line*\nnext"
    )
    assert [b["type"] for b in blocks] == [
        "heading",
        "list",
        "list",
        "code",
        "quote",
        "table",
        "rule",
        "paragraph",
    ]
    assert blocks[0] == {"type": "heading", "level": 1, "children": [text("Title")]}
    assert blocks[1]["items"][1] == [
        {"type": "paragraph", "children": [{"type": "strong", "children": [text("two")]}]}
    ]
    assert blocks[2]["ordered"] is True and blocks[2]["start"] == 3
    assert blocks[3] == {"type": "code", "language": "python", "text": "print('<b>')"}
    assert blocks[5]["rows"] == [[[text("1")], [{"type": "code", "text": "x|y"}]]]
    assert blocks[7]["children"] == [
        text("last "),
        {"type": "em", "children": [text("line")]},
        {"type": "break"},
        text("next"),
    ]


def item_texts(block: dict) -> list:
    """A list's items as their paragraphs' text, with nested lists as lists of the same."""
    shown = []
    for item in block["items"]:
        for child in item:
            if child["type"] == "paragraph":
                shown.append("".join(n.get("text", "\n") for n in child["children"]))
            elif child["type"] == "list":
                shown.append(item_texts(child))
    return shown


def test_lists_nest_by_the_indent_of_their_items_text():
    [bullets] = parse("- fruit\n  - apple\n  - pear\n    1. ripe\n- vegetables\n  - leek")
    assert item_texts(bullets) == ["fruit", ["apple", "pear", ["ripe"]], "vegetables", ["leek"]]
    [steps] = parse("1. Install\n   - with pip\n2. Run\n\n   It starts.\n3. Done")
    assert item_texts(steps) == ["Install", ["with pip"], "Run", "It starts.", "Done"]
    [ragged] = parse("- a\n    - four spaces in\n- b\nlazy line")
    assert item_texts(ragged) == ["a", ["four spaces in"], "b\nlazy line"]


def test_an_unclosed_fence_while_streaming_is_still_code():
    assert parse("Here:\n```\nlet x = 1") == [
        {"type": "paragraph", "children": [text("Here:")]},
        {"type": "code", "language": "", "text": "let x = 1"},
    ]


def test_underscores_inside_words_and_escapes_are_not_emphasis():
    [paragraph] = parse(r"snake_case_name and \*not em\* and `a*b*c`")
    assert paragraph["children"] == [
        text("snake_case_name and *not em* and "),
        {"type": "code", "text": "a*b*c"},
    ]


def message(id, parent=None, role="user"):
    return {"id": id, "parentId": parent, "role": role}


def test_the_tree_shows_the_newest_branch_unless_another_was_chosen():
    messages = [
        message("u1"),
        message("a1", "u1", "assistant"),
        message("a2", "u1", "assistant"),  # a regenerate
        message("u2", "a1"),  # a follow-up on the first answer, newest of all
        message("a3", "u2", "assistant"),
    ]
    newest, picked = run_node("chat_tree.js", "path", [[messages, {}], [messages, {"u1": "a2"}]])
    assert [(e["message"]["id"], e["position"], len(e["siblings"])) for e in newest] == [
        ("u1", 0, 1),
        ("a1", 0, 2),
        ("u2", 0, 1),
        ("a3", 0, 1),
    ]
    assert [(e["message"]["id"], e["position"]) for e in picked] == [("u1", 0), ("a2", 1)]


@pytest.fixture
def rendered(page):
    """Return a function rendering Markdown in Chromium and returning the HTML made."""
    page.add_script_tag(path=str(STATIC / "links.js"))
    page.add_script_tag(path=str(STATIC / "markdown.js"))

    def render(source: str) -> str:
        return page.evaluate(
            "source => { const div = document.createElement('div'); div.id = 'out';"
            " div.appendChild(LookoutMarkdown.render(source)); document.body.appendChild(div);"
            " return div.innerHTML; }",
            source,
        )

    return render


def test_rendering_makes_no_element_from_html_in_the_text(page, rendered):
    html = rendered(
        '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>\n\n'
        "[x](javascript:window.pwned=3) **<b>bold</b>**"
    )
    assert page.locator("#out").locator("img, script, b, a").count() == 0
    assert "&lt;img src=x" in html and "&lt;script&gt;" in html
    assert page.evaluate("window.pwned") is None


def test_an_image_loads_only_after_a_click_that_showed_its_url(page, rendered):
    rendered("![chart](http://127.0.0.1:9/chart.png)")
    button = page.get_by_role("button", name="Load image “chart” from http://127.0.0.1:9/chart.png")
    assert page.locator("img").count() == 0
    button.click()
    image = page.locator("img")
    assert image.get_attribute("src") == "http://127.0.0.1:9/chart.png"
    assert image.get_attribute("alt") == "chart"
    assert image.get_attribute("referrerpolicy") == "no-referrer"


def test_a_nested_list_renders_inside_its_item_without_a_paragraph(rendered):
    html = rendered("- fruit\n  - apple\n  - pear\n- leek")
    assert html == "<ul><li>fruit<ul><li>apple</li><li>pear</li></ul></li><li>leek</li></ul>"


@pytest.mark.parametrize(
    ("streamed", "shown"),
    [
        ("The keepers wrote **dai", "The keepers wrote **dai**"),
        ("The keepers wrote **", "The keepers wrote "),
        ("**Done** and ~~gone", "**Done** and ~~gone~~"),
        ("Run `make te", "Run `make te`"),
        ("**bold `code", "**bold `code`**"),
        ("Two **words** done", "Two **words** done"),
        ("First **block**\n\nthen __und", "First **block**\n\nthen __und__"),
        ("```python\nx = '**'", "```python\nx = '**'"),
    ],
)
def test_a_reply_still_streaming_shows_its_open_bold_and_code_closed(streamed, shown):
    """Issue 25: raw ** showed while a bold word was still streaming."""
    assert run_node("markdown.js", "settle", [[streamed]])[0] == shown


def test_citation_markers_are_cite_nodes_outside_code_and_links_as_the_check_reads_them():
    """The grammar of tools/claims/markers.py: numbers, lists, short ranges; not code, links."""
    [paragraph] = parse(
        "A [3], B [1][2], C [1, 2; 4], D [2-4], E [1-20], F `x[5]`, [6](https://e.example/) "
        "and [7]: no."
    )
    cites = [(n["numbers"], n["text"]) for n in paragraph["children"] if n["type"] == "cite"]
    assert cites == [
        ([3], "[3]"),
        ([1], "[1]"),
        ([2], "[2]"),
        ([1, 2, 4], "[1, 2; 4]"),
        ([2, 3, 4], "[2-4]"),
    ]
    assert {"type": "code", "text": "x[5]"} in paragraph["children"]
    assert text(", E [1-20], F ") in paragraph["children"]
