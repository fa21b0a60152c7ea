"""Page types beyond articles: each keeps its content and drops its navigation.

The structures follow the markup of common platforms: a Sphinx/Read the Docs page with its
sidebar, a Stack Exchange-style question with three answers, a PunBB-style forum thread, a
MediaWiki article with an infobox, recipes as food blogs and recipe sites declare them, and a
news site's section front, whose every story is a card wrapped in its link.
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


INGREDIENTS = ["2 cups of flour", "1 teaspoon of salt", "3 eggs, beaten", "1 cup of milk"]
METHOD = (
    "<ol>"
    f"<li><p>{sentences(2, 'mixing the flour and the salt')}</p></li>"
    f"<li><p>{sentences(2, 'whisking the eggs into the milk')}</p></li>"
    "</ol>"
)
RELATED = (
    '<div class="more-recipes"><h3>You may also like</h3><ul>'
    '<li><a href="/pancakes">Pancakes for a crowd</a></li>'
    '<li><a href="/waffles">Crisp waffles</a></li></ul></div>'
)


def ingredient_list() -> str:
    return "<ul>" + "".join(f'<li class="ingredient">{item}</li>' for item in INGREDIENTS) + "</ul>"


def test_recipe_card_after_the_post_is_read_with_its_ingredients():
    """A food blog's story in its entry-content, the recipe card after it (schema.org Recipe
    microdata, as recipe plugins write it): readability and the declared body chose the story;
    the card the page declares is read after it, ingredients and method."""
    html = f"""<html><head><title>Crepes</title></head><body>
    <article class="post"><h1>Crepes</h1><div class="entry-content">
    <p>{sentences(6, "the crepes my grandmother made on Sundays")}</p></div>
    <div class="recipe-card" itemscope itemtype="https://schema.org/Recipe">
    <h2 itemprop="name">Crepes</h2><h3>Ingredients</h3>{ingredient_list()}
    <h3>Method</h3>{METHOD}</div></article>{RELATED}</body></html>"""

    text = read(html)

    assert text.index("grandmother") < text.index(INGREDIENTS[0])
    for item in INGREDIENTS:
        assert item in text
    assert sentences(2, "whisking the eggs into the milk") in text
    assert "Pancakes for a crowd" not in text


def test_recipe_page_keeps_its_ingredients_beside_the_method():
    """Regression (recipe.com, hRecipe): the ingredients sat in a row of their own beside the
    method, which readability and the density pass chose; the recipe the page declares holds
    both, and is read whole."""
    html = f"""<html><head><title>Crepes</title></head><body>
    <div class="recipe-detail hrecipe"><div class="row"><h1 class="fn">Crepes</h1></div>
    <div class="row"><div class="column">{ingredient_list()}</div></div>
    <div class="row"><div class="column instructions">{METHOD}</div></div></div>
    {RELATED}</body></html>"""

    text = read(html)

    for item in INGREDIENTS:
        assert item in text
    assert text.index(INGREDIENTS[-1]) < text.index("whisking")
    assert "Pancakes for a crowd" not in text


def test_a_round_up_of_recipes_reads_every_one():
    """A page of several recipes declares none of them as its own: all are read."""
    cards = "".join(
        f'<div itemscope itemtype="https://schema.org/Recipe"><h2>Crepes {n}</h2>'
        f"{ingredient_list()}{METHOD}</div>"
        for n in (1, 2)
    )
    html = f"""<html><head><title>Two crepes</title></head><body><main>
    <h1>Two crepes</h1><p>{sentences(3, "why two recipes are better than one")}</p>
    {cards}</main>{RELATED}</body></html>"""

    text = read(html)

    assert "Crepes 1" in text and "Crepes 2" in text
    assert text.count(INGREDIENTS[0]) == 2


def test_an_article_in_chinese_drops_its_sidebar_and_footer():
    """Regression: words were counted between spaces, and Chinese has none, so a Chinese
    article counted as a handful of words, was taken for a page the pruning had emptied, and
    was read again whole, menus, sidebar and footer included. In scripts written without
    spaces each letter counts as a word."""
    paragraphs = [
        "市议会周二投票决定为每一座市政建筑购买可再生能源证书。",
        "官员表示，这些证书将覆盖图书馆、游泳池和两个消防站的用电。",
        "在会议上发言的居民询问这笔钱是否可以改用于安装太阳能电池板。",
        "市长回答说，在旧屋顶上安装电池板需要预算无法承担的维修费用。",
    ]
    article = "".join(f"<p>{paragraph}{paragraph}</p>" for paragraph in paragraphs)
    sidebar = "".join(f"<li><a href='/s{n}'>十大最佳公园第{n}名推荐</a></li>" for n in range(8))
    html = f"""<html><head><title>市议会购买能源证书</title></head><body>
    <div class="wrap"><div class="story"><h1>市议会购买能源证书</h1>{article}</div>
    <div class="sidebar"><h3>热门</h3><ul>{sidebar}</ul></div></div>
    <div class="site-info"><p>版权所有 © 2024 示例新闻网。保留所有权利。联系我们。</p></div>
    </body></html>"""

    text = read(html)

    for paragraph in paragraphs:
        assert paragraph in text
    assert "十大最佳公园" not in text
    assert "版权所有" not in text


STORIES = [
    ("Twists in the tale of Peter's friend", "A life of Beatrix Potter shows the naturalist."),
    ("Beyond the realms of Moominland", "Jansson's winter stories, translated at last."),
    ("A servant to 192 masters", "Kofi Annan leaves the United Nations after ten years."),
    ("High-wire act for a bit player", "A novel follows a minor character of Jane Eyre."),
]
MENU = (
    '<div id="menu"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>'
    '<li><a href="/sport">Sport</a></li><li><a href="/books">Books</a></li></ul></div>'
)


def card(headline: str, standfirst: str) -> str:
    slug = headline.lower().replace(" ", "-")
    return f'<div class="row"><a href="/books/{slug}"><h3>{headline}</h3>{standfirst}</a></div>'


def test_a_section_front_of_story_cards_reads_every_story():
    """Regression: a section page whose stories are cards wrapped in their links (headline
    and standfirst inside the link) had no prose outside links; the link-list rule removed
    every card and the page was read as its menu headings."""
    cards = "".join(card(headline, standfirst) for headline, standfirst in STORIES)
    html = f"""<html><head><title>Books</title></head><body>{MENU}
    <p>Please note: your browser was unable to load the stylesheet that goes with this page.
    The page is still readable.</p>
    <div id="content"><h1>Books</h1><p>Tuesday, 26th December 2006</p><div id="main">{cards}</div>
    <div id="pagination">Books: page 1 of 5 <a href="?page=2">next page</a></div></div>
    <div id="footer">(c) 2006 The Paper</div></body></html>"""

    text = read(html)

    for headline, standfirst in STORIES:
        assert headline in text and standfirst in text


def test_an_article_keeps_out_the_story_cards_under_it():
    cards = "".join(card(headline, standfirst) for headline, standfirst in STORIES)
    html = f"""<html><head><title>Council buys energy credits</title></head><body>{MENU}
    <article><h1>Council buys energy credits</h1><p>{sentences(6, "the vote")}</p></article>
    <div class="more">{cards}</div></body></html>"""

    text = read(html)

    assert sentences(6, "the vote") in text
    assert not any(headline in text for headline, _ in STORIES)
