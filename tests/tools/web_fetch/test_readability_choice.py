"""readability's choice on structures where its own rules lost text: names read by substring,
and a long data table whose row group outscores the prose around it."""

import re

from tools.web_fetch.extract import extract

STORY = [
    "The committee met for the third time this spring to discuss the harbour's new sea wall.",
    "Engineers presented two designs, one of stone and one of steel sheet piling and concrete.",
    "The stone design costs more to build but lasts longer and needs less care in winter storms.",
    "Members asked how each design would affect the fishing boats that moor along the old quay.",
    "A decision is expected in June, once the harbour master has reported on the boats' needs.",
]


def read(body: str) -> str:
    html = f"<!doctype html><html><head><title>Harbour</title></head><body>{body}</body></html>"
    return extract(html, "https://harbour.example/news/wall").text


def test_footnotes_inside_the_article_are_kept():
    """readability removed any block whose class merely contains "foot" (div.footnotes)."""
    notes = "The first survey of the quay was made in 1887 by the county's harbour engineer."
    text = read(
        '<nav><a href="/">Home</a> <a href="/news">News</a></nav><article>'
        + "".join(f"<p>{sentence}</p>" for sentence in STORY)
        + f'<div class="footnotes"><ol><li><p>{notes}</p></li></ol></div></article>'
    )
    assert notes in text
    assert all(sentence in text for sentence in STORY)


def test_list_page_keeps_the_paragraphs_that_introduce_its_table():
    """A long table's row group outscored the page's introduction, which was left out."""
    intro = (
        "This list of lighthouses on the northern coast gives each light's name, the year it "
        "was first lit and what it is known for today."
    )
    rows = "".join(
        f"<tr><td><a href='/light/{n}'>Light {n}</a></td><td>{1850 + n}</td><td>The light on "
        f"the rocks at point {n} was rebuilt after a storm and is now kept by volunteers.</td></tr>"
        for n in range(40)
    )
    text = read(
        '<div id="content"><h1>List of northern lighthouses</h1>'
        f"<p>{intro}</p><p>For the lights of the southern coast, see the other list.</p>"
        f"<table><caption>Lighthouses</caption><tbody>{rows}</tbody></table></div>"
    )
    assert "For the lights of the southern coast, see the other list." in text
    assert "rebuilt after a storm and is now kept by volunteers" in text
    assert re.search(r"\|\s*1889\s*\|", text)  # the table is written as a Markdown table


def test_manual_keeps_every_section_of_the_chapter_short_ones_included():
    """readability chose the longest section and its long neighbour; the short Installation and
    Next steps sections, code and all, were left out of the chapter."""
    long_text = " ".join(STORY)
    sections = [
        ("Installation", "<p>Install the package with pip.</p><pre>pip install harbour</pre>"),
        ("Configuration", f"<p>{long_text}</p><p>{long_text}</p>"),
        ("Running the service", f"<p>{long_text}</p>"),
        ("Next steps", "<p>Read the chapter on tides next.</p>"),
    ]
    body = "".join(
        f'<div class="section" id="s{n}"><h2>{title}</h2>{text}</div>'
        for n, (title, text) in enumerate(sections)
    )
    text = read(
        '<div class="sidebar"><ul><li><a href="/a">Chapter one</a></li>'
        '<li><a href="/b">Chapter two</a></li></ul></div>'
        f'<div class="document"><div class="section" id="guide"><h1>Guide</h1>{body}</div></div>'
    )
    for title, _ in sections:
        assert f"## {title}" in text
    assert "pip install harbour" in text
    assert "Read the chapter on tides next." in text
    assert "Chapter two" not in text


def test_article_in_a_page_frame_full_of_widgets_is_read_without_them():
    """The text-density block was the page's frame (article, tweets, teasers); readability found
    the article in it, but held under half the frame's words, so the whole frame was read."""
    tweets = "".join(
        f'<div class="tw"><p>Budget vote number {n} tonight at the town hall, all welcome to '
        f'come along <a href="https://t.example/{n}">t.example/{n}</a> '
        f'<a href="https://x.example/council">@council</a></p></div>'
        for n in range(12)
    )
    article = "".join(f"<p>{sentence} {sentence}</p>" for sentence in STORY)
    text = read(
        '<div class="boxed"><div class="top"><a href="/">Harbour News</a></div>'
        f'<div class="main"><h1>Sea wall</h1>{article}</div>'
        f'<div class="side"><h3>Follow us</h3>{tweets}</div></div>'
    )
    assert all(sentence in text for sentence in STORY)
    assert "Budget vote number 3" not in text


def test_a_paragraph_opening_in_bold_beside_the_chosen_block_is_kept():
    """readability judged a sibling paragraph by the text before its first child: a list page's
    introduction opening "This <b>list of ...</b>" read as empty and was left out."""
    intro = (
        "This <b>list of <a href='/wiki/Lighthouse'>northern lighthouses</a></b> gives each "
        "light's name, the year it was first lit and what it is known for today."
    )
    rows = "".join(
        f"<tr><td>Light {n}</td><td>{1850 + n}</td><td>The light on the rocks at point {n} "
        "was rebuilt after a storm and is now kept by volunteers.</td></tr>"
        for n in range(40)
    )
    text = read(
        f'<div id="content"><p>{intro}</p><table><tbody>{rows}</tbody></table>'
        "<h2>See also</h2></div>"
    )
    assert "This **list of [northern lighthouses](https://harbour.example/wiki/Lighthouse)** " in (
        text
    )
    assert "gives each light's name, the year it was first lit" in text


def test_a_masthead_beside_the_chosen_block_is_not_read_as_a_paragraph():
    """Read whole, a sibling holding a heading (a printed page's masthead, which readability
    turns into a paragraph) would have joined the article."""
    text = read(
        '<div id="page"><div class="print-header"><span>https://harbour.example/news/wall</span>'
        "<h1>Harbour wall: U.S. engineers offer two designs</h1></div><div class='story'>"
        + "".join(f"<p>{sentence}</p>" for sentence in STORY * 2)
        + "</div></div>"
    )
    assert STORY[0] in text
    assert "https://harbour.example/news/wall" not in text


def test_nested_divs_are_written_out_once_at_most_to_find_readabilitys_paragraphs(monkeypatch):
    """readability wrote out every <div>'s children to search them for a block tag, each level
    of a nesting again: a story in 60 nested <div>s wrote out 83,268 characters in 73 writings."""
    import lxml.etree
    import readability.readability

    from tools.web_fetch import readability_choice

    written: list[int] = []

    def counted(real):
        def write(*args, **kwargs):
            out = real(*args, **kwargs)
            written.append(len(out))
            return out

        return write

    for module in (readability.readability, readability_choice):
        monkeypatch.setattr(module, "tostring", counted(lxml.etree.tostring), raising=False)
        monkeypatch.setattr(module, "tounicode", counted(lxml.etree.tounicode), raising=False)
    section = "".join(f"<p>{sentence}</p>" for sentence in STORY)
    text = read(
        "<div>" * 60
        + ("<div><span>A loose line of the story.</span></div>" + section) * 2
        + "</div>" * 60
    )

    assert STORY[0] in text and "A loose line of the story." in text
    assert sum(written) < 1_000, f"{len(written)} writings, {sum(written):,} characters"
