"""Page types beyond articles: each keeps its content and drops its navigation.

The structures follow the markup of common platforms: a Sphinx/Read the Docs page with its
sidebar, a Stack Exchange-style question with three answers, a PunBB-style forum thread and a
MediaWiki article with an infobox.
"""

from tools.web_fetch.extract import extract


def sentences(count: int, topic: str) -> str:
    return " ".join(
        f"Sentence {n} about {topic} explains one more detail of the matter." for n in range(count)
    )


def read(html: str) -> str:
    return extract(html, "https://docs.example/en/latest/config.html").text


def test_documentation_page_keeps_its_body_and_code_and_drops_its_sidebar():
    html = f"""<html><head><title>Configuration</title></head><body>
    <div class="wy-nav-side"><div class="wy-menu wy-menu-vertical"><ul>
    <li class="toctree-l1"><a href="install.html">Installation guide for every platform</a></li>
    <li class="toctree-l1 current"><a href="config.html">Configuration reference</a></li>
    </ul></div></div>
    <section class="wy-nav-content-wrap"><div class="rst-content"><div role="main" class="document">
    <div class="section" id="configuration"><h1>Configuration</h1><p>{sentences(3, "settings")}</p>
    <div class="section" id="options"><h2>Options</h2><p>{sentences(2, "options")}</p>
    <pre>timeout = 30\nretries = 3</pre></div></div></div></div></section></body></html>"""

    text = read(html)

    assert "# Configuration" in text and "## Options" in text
    assert sentences(3, "settings") in text and sentences(2, "options") in text
    assert "    timeout = 30\n    retries = 3" in text
    assert "Installation guide" not in text


def test_question_page_keeps_the_question_and_every_answer():
    answer = (
        '<div class="answer" id="answer-{n}"><div class="s-prose js-post-body">{body}</div></div>'
    )
    html = f"""<html><head><title>How do I reverse a list?</title></head><body>
    <div id="left-sidebar"><nav><a href="/">Home</a> <a href="/questions">Questions</a></nav></div>
    <div id="mainbar"><div class="question"><div class="s-prose js-post-body">
    <p>{sentences(2, "reversing lists")}</p></div>
    <div class="post-taglist"><a class="post-tag" href="/t/python">python</a></div></div>
    <div id="answers">
    {answer.format(n=1, body=f"<p>Answer one: slice it.</p><p>{sentences(3, 'slicing')}</p>")}
    {answer.format(n=2, body="<p>Answer two: call the reversed builtin.</p>")}
    {answer.format(n=3, body="<p>Answer three: list.reverse works in place.</p>")}
    </div></div>
    <div id="sidebar"><h4>Related</h4><ul><li><a href="/q/1">How to sort a list</a></li>
    <li><a href="/q/2">How to copy a list</a></li></ul></div></body></html>"""

    text = read(html)

    assert sentences(2, "reversing lists") in text
    for kept in ("Answer one", "Answer two", "Answer three", sentences(3, "slicing")):
        assert kept in text
    assert "How to sort a list" not in text and "Questions" not in text


def test_forum_thread_keeps_every_post():
    post = (
        '<div class="blockpost"><div class="postleft"><strong>{who}</strong></div>'
        '<div class="postright"><div class="postmsg"><p>{body}</p></div></div></div>'
    )
    bodies = [
        "First post: my boiler makes a knocking noise every morning. " + sentences(1, "boilers"),
        "Second post: bleed the radiators first.",
        "Third post: check the pump pressure too. " + sentences(1, "pressure"),
    ]
    posts = "".join(
        post.format(who=who, body=body) for who, body in zip("abc", bodies, strict=True)
    )
    html = f"""<html><head><title>Boiler noise</title></head><body>
    <div id="brdheader"><a href="/">Forum home</a> <a href="/search">Search</a></div>
    <div id="brdmain">{posts}</div>
    <div id="brdfooter">Powered by a forum engine</div></body></html>"""

    text = read(html)

    for body in bodies:
        assert body in text
    assert "Forum home" not in text


def test_discussion_whose_replies_are_named_comments_keeps_the_post_and_every_reply():
    """Reddit names each reply a comment: on a page that is not an article they are the page."""
    replies = [
        "I think the most tragic story is that of grape, which tastes nothing like grapes.",
        "Vanilla in baking is like salt in cooking: you only notice it when it is missing.",
        "People call it plain because it is everywhere, not because it tastes of nothing.",
        "Real vanilla has hundreds of flavour compounds; the cheap extract has only one.",
    ]
    comments = "".join(
        f'<div class="Comment t1_{n}"><span>user{n} · 5y</span><p>{reply} '
        f"{sentences(1, 'vanilla')}</p></div>"
        for n, reply in enumerate(replies)
    )
    post = "Nobody ever gives vanilla credit, yet it is in almost every sweet thing we eat."
    html = f"""<html><head><title>Vanilla</title><meta property="og:type" content="website">
    </head><body><div class="header"><a href="/">reddit</a> <a href="/r/all">all</a></div>
    <div class="Post t3_1"><h1>Vanilla deserves more credit</h1><p>{post}</p></div>
    <div class="thread">{comments}</div>
    <div class="sidebar"><a href="/r/a">More posts like this</a></div></body></html>"""

    text = read(html)

    assert post in text
    for reply in replies:
        assert reply in text
    assert "More posts like this" not in text


def test_wiki_page_keeps_its_infobox_and_tables():
    html = f"""<html><head><title>River Test</title></head><body>
    <div id="mw-navigation"><ul><li><a href="/wiki/Main">Main page</a></li>
    <li><a href="/wiki/Random">Random article</a></li></ul></div>
    <div id="content" class="mw-body"><h1>River Test</h1><div class="mw-parser-output">
    <table class="infobox"><tr><th colspan="2">River Test</th></tr>
    <tr><th>Length</th><td>64 km</td></tr><tr><th>Source</th><td>Ashe</td></tr>
    <tr><th>Towns</th><td><ul><li><a href="/wiki/Overton">Overton</a></li>
    <li><a href="/wiki/Stockbridge">Stockbridge</a></li><li><a href="/wiki/Romsey">Romsey</a>
    </li></ul></td></tr></table>
    <p>{sentences(3, "the river")}</p><h2>Course</h2><p>{sentences(2, "the course")}</p>
    <table class="wikitable"><tr><th>Town</th><th>Population</th></tr>
    <tr><td><a href="/wiki/Romsey">Romsey</a></td><td>14,000</td></tr></table>
    </div></div></body></html>"""

    text = read(html)
    cells = text.replace(" ", "")

    assert "Length|64km" in cells and "Source|Ashe" in cells
    assert "[Stockbridge](https://docs.example/wiki/Stockbridge)" in text  # a row of links
    assert (
        "Town|Population" in cells and "[Romsey](https://docs.example/wiki/Romsey)|14,000" in cells
    )
    assert sentences(3, "the river") in text and "## Course" in text
    assert "Random article" not in text
