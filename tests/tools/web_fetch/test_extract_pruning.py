"""Content preservation: page structures of real platforms whose article the pruning once removed.

Each page names the words that must be in the output and the furniture that must not.
"""

import pytest

from tools.web_fetch.class_names import name_tokens, names_furniture
from tools.web_fetch.extract import extract

SENTENCES = [
    "The council voted on Tuesday to buy renewable energy credits for every municipal building.",
    "Officials said the credits would cover the library, the pool and the two fire stations.",
    "Residents who spoke at the meeting asked whether the money could go to solar panels instead.",
    "The mayor answered that panels on the old roofs would need repairs the budget cannot cover.",
    "A second vote on the roofs is planned for the spring, after engineers inspect each building.",
]
ARTICLE = "".join(f"<p>{sentence}</p>" for sentence in SENTENCES)
SIDEBAR = (
    '<div class="sidebar"><h3>Popular</h3><ul><li><a href="/a">Ten best parks</a></li>'
    '<li><a href="/b">Where to eat tonight</a></li><li><a href="/c">Traffic news</a></li>'
    "</ul></div>"
)
COMMENTS = (
    '<div id="comments"><h3>3 comments</h3><p>Reader Bob says this is a waste of money and the '
    "council should resign.</p></div>"
)


def page(body: str, title: str = "Council buys energy credits") -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def read(html: str) -> str:
    return extract(html, "https://news.example/2024/credits").text


def assert_article_kept(text: str) -> None:
    for sentence in SENTENCES:
        assert sentence in text


@pytest.mark.parametrize(
    "container",
    [
        # TypePad names the entry by its author.
        '<div class="entry-author-jsmith entry-type-post entry" id="entry-6a00d8341c">{}</div>',
        # WordPress post classes name the author, every tag and the category.
        '<article class="post-1291 post type-post status-publish format-standard hentry '
        'category-news tag-renewable-energy-credits author-admin">{}</article>',
        '<div class="share_wrapper"><div class="post-body">{}</div></div>',
        '<div class="article-body no-share">{}</div>',
        '<div class="js-tagsearch-file content">{}</div>',
    ],
)
def test_article_container_named_like_furniture_is_kept(container):
    """Regression: the class/id rule matched words inside the article container's own names."""
    html = page(
        '<div id="header-bar"><a href="/">News</a></div>'
        + container.format(f"<h1>Council buys energy credits</h1>{ARTICLE}")
        + SIDEBAR
        + COMMENTS
    )

    text = read(html)

    assert_article_kept(text)
    assert "Where to eat tonight" not in text
    assert "Reader Bob" not in text


def test_asides_captions_and_tables_inside_the_article_are_kept():
    """Regression: 'shareholder', 'authority', 'modalities', 'credit-terms' counted as clutter."""
    html = page(
        '<div class="layout"><article class="story">'
        + "".join(f"<p>{sentence}</p>" for sentence in SENTENCES[:3])
        + '<aside class="shareholder-note">Shareholders of the utility approved the sale in May.'
        "</aside>"
        '<figure class="modalities"><img src="/img/roof.jpg" alt="The library roof">'
        '<figcaption class="authority-caption">The library roof, photographed by the city '
        "authority.</figcaption></figure>"
        '<table class="credit-terms"><tr><th>Building</th><th>Credits</th></tr>'
        "<tr><td>Library</td><td>120</td></tr><tr><td>Pool</td><td>300</td></tr></table>"
        + "".join(f"<p>{sentence}</p>" for sentence in SENTENCES[3:])
        + f"</article>{SIDEBAR}</div>"
    )

    text = read(html)

    assert_article_kept(text)
    assert "Shareholders of the utility approved the sale in May." in text
    assert "The library roof, photographed by the city authority." in text
    table_rows = text.replace(" ", "")
    assert "Building|Credits" in table_rows and "Library|120" in table_rows
    assert "Ten best parks" not in text


def test_page_nested_inside_a_broken_navbar_is_still_read():
    """Regression: lxml's repair nested the whole page in an unclosed <header><nav>; all dropped."""
    html = (
        "<html><head><title>Council buys energy credits</title></head><body>"
        '<header><nav class="navbar"><ul><li><a href="/">Home</a><li><a href="/news">News</a>'
        f"<div class='container'><h1>Council buys energy credits</h1>{ARTICLE}</div>"
        "</body></html>"
    )

    assert_article_kept(read(html))


def test_post_that_exists_only_inside_noscript_is_read_from_there():
    """Regression: a Blogger post whose body is only inside <noscript> came out empty."""
    html = page(
        '<div class="blog-title"><a href="/">A small blog</a></div>'
        f'<noscript><div class="post-body entry-content">{ARTICLE}</div></noscript>'
        '<div id="loading">Loading...</div>'
    )

    assert_article_kept(read(html))


def test_post_that_exists_only_inside_a_text_template_is_read_from_there():
    """Regression: a post kept as markup text inside a <template> was lost."""
    escaped = ARTICLE.replace("<", "&lt;").replace(">", "&gt;")
    html = page(f'<div id="app"></div><template id="post">{escaped}</template>')

    text = read(html)

    assert_article_kept(text)
    assert "<p>" not in text


def test_noscript_text_beside_a_real_article_is_still_removed():
    html = page(
        f"<article>{ARTICLE}<noscript>Please enable JavaScript to view the comments."
        "</noscript></article>"
    )

    text = read(html)

    assert_article_kept(text)
    assert "enable JavaScript" not in text


def test_long_article_wins_over_the_short_block_readability_prefers():
    """Regression: readability chose an embedded press release over the post around it."""
    release = (
        '<blockquote class="press-release"><p><b>FOR IMMEDIATE RELEASE</b></p>'
        "<p>Green Power Inc., a leading supplier of certificates, today announced that the city, "
        "its newest customer, has signed a three-year agreement for renewable energy credits, "
        "covering all municipal buildings, starting in January, with options to extend.</p>"
        "</blockquote>"
    )
    sections = "".join(
        f"<div class='section'><h2>Part {n}</h2><p>{sentence}</p><p>{sentence}</p></div>"
        for n, sentence in enumerate(SENTENCES * 2, start=1)
    )
    html = page(f'<div class="post">{release}{sections}</div>{SIDEBAR}')

    assert_article_kept(read(html))


@pytest.mark.parametrize(
    "names, furniture",
    [
        ("share", True),
        ("social-share-buttons", True),
        ("shareButtons", True),
        ("related_posts", True),
        ("sr-only", True),
        ("adsbygoogle", False),
        ("ad-slot", True),
        ("cta-fandom-contributor", True),
        ("octal-digits", False),
        ("shareholder", False),
        ("authority", False),
        ("modalities", False),
        ("credit-terms", False),
        ("wp-caption-text", False),
        ("tag-renewable-energy-credits", False),
        ("entry-category-social_media entry-type-post entry", False),
        ("tag-advertising", False),
        ("author-admin", False),
        ("comment-author-kevin", True),
        ("tag-cloud", True),
        ("post-tags", True),
        ("js-tagsearch-file", False),
        ("header", False),
        ("download", False),
    ],
)
def test_class_names_match_furniture_by_whole_tokens(names, furniture):
    assert names_furniture(names) is furniture


def test_class_names_split_on_dashes_underscores_spaces_and_camel_case():
    assert name_tokens("post-body entry_content shareButtons") == [
        "post",
        "body",
        "entry",
        "content",
        "share",
        "buttons",
    ]


def test_sections_whose_anchor_ids_are_headings_are_kept():
    """Regression: Sphinx's id="sharing-with-a-single-developer" read as a sharing bar, and
    readability's own substring weights dropped "related-work-and-prior-art"."""
    sections = "".join(
        f'<div class="section" id="{slug}"><h2>{slug.replace("-", " ")}</h2><p>{sentence}</p></div>'
        for slug, sentence in zip(
            (
                "sharing-with-a-single-developer",
                "related-work-and-prior-art",
                "how-to-share-it-with-others",
            ),
            SENTENCES,
            strict=False,
        )
    )
    html = page(f'{SIDEBAR}<div class="body" role="main"><h1>Guide</h1>{sections}</div>')

    text = read(html)

    for sentence in SENTENCES[:3]:
        assert sentence in text


def test_article_named_by_its_author_is_kept_when_its_comments_are_longer():
    """Regression: a WordPress <article class="... author-sarah ..."> inside <main> with a longer
    comment thread lost both, and the page read as its footer. The page declares itself an
    article, as WordPress's SEO plugins write it: its comments are not read."""
    comments = "".join(
        f'<li class="comment"><p>Reader {n} wrote: {SENTENCES[n % 5]} {SENTENCES[n % 4]}</p></li>'
        for n in range(8)
    )
    html = page(
        '<main class="content"><article class="entry author-sarah post-67202 tag-jobs">'
        f"<h1>Council buys energy credits</h1>{ARTICLE}</article>"
        f'<div class="comments-area" id="comments"><ol>{comments}</ol></div></main>'
        "<footer>%d bloggers like this:</footer>"
    ).replace("<title>", '<meta property="og:type" content="article"><title>')

    text = read(html)

    assert_article_kept(text)
    assert "Reader 3 wrote" not in text


def test_an_open_thread_shorter_than_its_typical_comment_is_read_with_its_comments():
    """Regression (SB Nation, 2012): a sports blog's "open thread" declares itself an article,
    but its post is two lines that open the discussion, shorter than the typical comment under
    it; the comments are the page, and were not read. An article at least as long as its
    typical comment keeps its comments out (the test above)."""
    prompt = "Practice starts at 10:30. Post what you see from camp here."
    comments = "".join(
        f'<li class="comment"><p>Reader {n} wrote: {SENTENCES[n % 5]} {SENTENCES[n % 4]}</p></li>'
        for n in range(8)
    )
    html = page(
        f'<main><article class="entry"><h1>Training camp open thread</h1><p>{prompt}</p>'
        f'</article><div class="comments-area" id="comments"><ol>{comments}</ol></div></main>'
        "<footer>%d bloggers like this:</footer>",
        title="Training camp open thread",
    ).replace("<title>", '<meta property="og:type" content="article"><title>')

    text = read(html)

    assert text.index(prompt) < text.index("Reader 0 wrote")
    assert "Reader 7 wrote" in text
    assert "bloggers like this" not in text


def test_a_short_description_is_read_above_an_unnamed_comment_list_far_longer_than_it():
    """Regression (a video tutorial's page, 2012): the density pass found the comment list
    itself (``id="comments_displayed"``, its replies unnamed divs), which as the main block
    was protected, and readability read the comments alone: the video's description was lost.
    A main block named as comments is a thread whose posts are its children: the description
    is read, then the replies."""
    lines = ["Use a Z-pass render to combine 2D stock footage", "Use most 3D programs, like C4D"]
    description = "".join(f"&bull; {line}<br>" for line in lines)
    replies = "".join(
        f"<div><div><b>Viewer {n}</b></div><div>10/{n + 1}/2012</div>"
        f"<div>{SENTENCES[n % 5]} {SENTENCES[(n + 1) % 5]}</div></div>"
        for n in range(12)
    )
    html = page(
        '<div class="tutorial"><div class="title">133. Depth Compositing</div>'
        f'<div class="description">{description}</div></div><div class="page"><div class="left">'
        f'<h3>Comments</h3><div id="comments_displayed">{replies}</div></div>{SIDEBAR}</div>',
        title="Depth Compositing",
    )

    text = read(html)

    for line in lines:
        assert line in text
    assert text.index(lines[1]) < text.index("Viewer 0")
    assert "Viewer 11" in text
    assert "Ten best parks" not in text


def test_article_that_does_not_say_it_is_one_keeps_its_text_before_a_longer_thread():
    """Without a declaration, a main block made of comments may be a forum's replies: they are
    read, after the article, which must not be lost to them."""
    replies = [
        "I went to the meeting and the pool was the main worry of every parent there.",
        "The fire stations need new roofs more than they need cheaper electricity.",
        "Credits are an accounting trick; panels would have paid for themselves by now.",
    ]
    comments = "".join(
        f'<li class="comment"><p>Reader {n} wrote: {reply} {reply} {reply}</p></li>'
        for n, reply in enumerate(replies * 3)
    )
    html = page(
        f"<main><article><h1>Council buys energy credits</h1>{ARTICLE}</article>"
        f'<div class="comments-area" id="comments"><ol>{comments}</ol></div></main>'
    )

    text = read(html)

    assert_article_kept(text)
    assert text.index(SENTENCES[0]) < text.index(replies[0])


def _short_comments(count: int) -> str:
    return "".join(
        f'<div class="comment"><p>Reader {n} wrote: great post, thanks for sharing this.</p></div>'
        for n in range(count)
    )


def test_blog_post_classed_by_its_category_and_author_is_kept_above_its_comments():
    """Regression (TypePad): the post's class named its category, social_media, and the name
    rule read it as a social bar; its comments outweighed it, so nothing protected it and the
    page read as its comments."""
    post_class = "entry-category-social_media entry-author-kevin_dugan entry-type-post entry"
    html = page(
        f'<div id="alpha-inner"><h2 class="date-header">09/21/2012</h2>'
        f'<div class="{post_class}"><h3>Council buys energy credits</h3>'
        f'<div class="entry-body">{ARTICLE}</div></div>'
        f'<div id="comments" class="comments">{_short_comments(30)}</div></div>{SIDEBAR}'
    )

    assert_article_kept(read(html))


def test_article_many_times_longer_than_its_comments_is_read_without_them():
    """A page that does not say it is an article, whose main block is its comment thread:
    an article many times as long as the typical comment is not one post of a forum, and its
    comments are not read."""
    html = page(
        f'<div class="post"><h1>Council buys energy credits</h1>{ARTICLE}</div>'
        f'<div id="comments"><ol class="commentlist">{_short_comments(40)}</ol></div>{SIDEBAR}'
    )

    text = read(html)

    assert_article_kept(text)
    assert "Reader 3 wrote" not in text


@pytest.mark.parametrize(
    "body_attributes",
    ['class="post-body entry-content"', 'itemprop="articleBody"', 'class="e-content"'],
)
def test_a_short_post_in_the_body_the_page_declares_is_read_over_a_longer_sidebar(
    body_attributes,
):
    """Regression (Blogger): a two-paragraph post beside a sidebar of long teasers; readability
    chose the teasers. The page names its article's body, and that body is read."""
    teasers = "".join(
        f'<div class="widget"><h2>Popular post {n}</h2>'
        f"<p>{SENTENCES[n % 5]} {SENTENCES[(n + 1) % 5]} {SENTENCES[(n + 2) % 5]}</p></div>"
        for n in range(8)
    ).replace("council", "committee")
    post = "<p>Mrs Patel's class built a solar oven from cardboard, foil and an old window.</p>"
    post += (
        "<p>The students baked bread in it on Friday, a first for the school's science fair.</p>"
    )
    # A page cannot pass its teasers off as holding the body by copying Lookout's mark.
    teasers = teasers.replace('<div class="widget">', '<div class="widget" data-lookout-declared>')
    html = page(
        f'<div class="main"><div class="post hentry"><h3>Sun bread</h3>'
        f"<div {body_attributes}>{post}</div></div></div>"
        f'<div class="column-right">{teasers}</div>'
    )

    text = read(html)

    assert "solar oven from cardboard" in text
    assert "a first for the school's science fair" in text
    assert "committee voted" not in text


def test_a_declared_body_cut_in_parts_around_a_side_rail_is_read_whole():
    """Regression (Washington Post): only the story's first part was named entry-content, and
    readability chose the second; the parts are siblings of one class, and all are read."""
    lead = (
        "<p>ISLAMABAD: the school meets under a tree, and the teacher's chair has no cushion.</p>"
    )
    rail = '<div class="article-side-rail"><h3>More on this</h3><p>Photos of the valley.</p></div>'
    html = page(
        f'<div id="article_body"><div class="article_body entry-content">{lead}</div>{rail}'
        f'<div class="article_body">{ARTICLE}</div></div>{SIDEBAR}'
    )

    text = read(html)

    assert "the teacher's chair has no cushion" in text
    assert_article_kept(text)


def test_a_standfirst_beside_the_story_body_is_read_before_it():
    """Regression (Herald Sun): the standfirst sat in the story's header, a sibling of the body
    that readability and the density pass chose; it is prose between the headline and the
    body's first paragraph, and is read first. The blog's tagline under the site's name and the
    byline are not prose of the story: neither is read."""
    standfirst = (
        "A HIGH-powered team has been doing the rounds of councils, asking what the credits "
        "would cost them. Nobody had an answer."
    )
    html = page(
        '<div class="masthead"><p>Local news, every day, from the people who live here and '
        "care about it.</p></div>"
        '<div class="story"><div class="story-header"><h1>Council buys energy credits</h1>'
        f'<p class="standfirst">{standfirst}</p>'
        '<p class="byline">By Kim Lee | 4 May 2015 | 1:36pm | Updated 5 May 2015 at 8:13pm, '
        "with reporting by Sam Wu</p></div>"
        f'<div class="story-body">{ARTICLE}{ARTICLE}</div></div>{SIDEBAR}'
    )

    text = read(html)

    assert text.index(standfirst) < text.index(SENTENCES[0])
    assert_article_kept(text)
    assert "By Kim Lee" not in text
    assert "Local news, every day" not in text


def test_a_standfirst_in_the_headlines_row_of_the_layout_is_read_before_the_story():
    """Regression (OTRS magazine): the headline and the standfirst share the layout's first
    row, the story's body sits in a section rows below (six levels from the standfirst's
    nearest shared ancestor); the standfirst, the headline's neighbour, is read first."""
    standfirst = (
        "Older councils are often thought slow to change. Is that true, or do we have to "
        "change how we judge them?"
    )
    html = page(
        '<article><div class="container"><div class="row head"><div class="col">'
        '<div class="date">18/03/2019</div><h1>Council buys energy credits</h1>'
        f'<div class="big"><p>{standfirst}</p></div></div></div></div>'
        '<div class="slider"><img src="/a.jpg" alt="the council chamber"></div>'
        '<div class="bg"><section class="text"><div class="container"><div class="row">'
        f'<div class="col">{ARTICLE}{ARTICLE}</div></div></div></section></div></article>'
        f"{SIDEBAR}"
    )

    text = read(html)

    assert text.index(standfirst) < text.index(SENTENCES[0])
    assert_article_kept(text)


def test_an_articles_own_header_keeps_its_headline_for_the_standfirst_rule():
    """Regression (Investment Executive): the headline sat in the article's own <header>,
    outside the main block, and was removed as page furniture with the page's header; without
    a headline the story's opening paragraphs, in a row above the rest, were lost. A header
    whose nearest section is an <article> introduces that article: it stays in the tree."""
    opening = (
        "The fund is downgrading its outlook for the town's economy next year, citing the "
        "floods and the bridges' closure."
    )
    html = page(
        '<header class="site"><a href="/">The Example Gazette</a> <a href="/news">News</a>'
        "</header>"
        '<article><header class="article-header"><h1>Council buys energy credits</h1>'
        '<div class="byline">By Kim Lee</div></header>'
        f'<section class="article-body"><div class="row"><div class="col"><p>{opening}</p>'
        f'</div></div><div class="row"><div class="col wide">{ARTICLE}{ARTICLE}</div>'
        '<aside class="related"><h2>Related news</h2><a href="/r">Recession next year?</a>'
        "</aside></div></section></article>"
        f"{SIDEBAR}"
    )

    text = read(html)

    assert text.index(opening) < text.index(SENTENCES[0])
    assert_article_kept(text)
    assert "The Example Gazette" not in text


def test_a_post_headed_by_an_h4_is_read_with_the_press_release_it_quotes():
    """Regression (Engadget, 2012): the page has no h1 (the logo is an h3), the post's title is
    an h4 the page's <title> repeats, and its one paragraph of its own sits above the press
    release it quotes, which readability and the density pass choose. The heading the title
    repeats is the headline: the post's paragraph is read before the release."""
    own = (
        "Green Power has signed the city as a customer, the first town of its size to buy "
        "credits for every building. Now all the council needs is the money to pay for them."
    )
    release = "".join(f"<p>{sentence} {sentence}</p>" for sentence in SENTENCES * 2)
    html = page(
        '<div class="logo"><h3>The Example Gazette</h3></div>'
        '<div class="post"><h4 class="post-title">Council buys energy credits</h4>'
        '<div class="byline">By Kim Lee</div>'
        f'<div class="post-body"><p>{own}</p><div id="release"><div id="release-text">{release}'
        f"</div></div></div></div>{SIDEBAR}",
        title="Council buys energy credits -- The Example Gazette",
    )

    text = read(html)

    assert text.index(own) < text.index(SENTENCES[0])
    assert_article_kept(text)
    assert "Ten best parks" not in text


def test_a_date_picker_beside_a_review_does_not_pass_for_the_main_text():
    """Regression: the days and months of a booking form's selects outweighed a hotel review."""
    options = "".join(f"<option>{day}</option>" for day in range(1, 32))
    months = "".join(f"<option>{month} 2007</option>" for month in ("January", "February") * 6)
    booking = f"<form><label>Check-in</label><select>{options}</select><select>{months}</select>"
    html = page(
        f'<table><tr><td class="left">{booking * 3}</form></td>'
        f'<td class="center"><h1>Les Suites Taipei</h1>{ARTICLE}</td></tr></table>'
    )

    assert_article_kept(read(html))


COOKIE_POLICY = " ".join(
    f"<p>These cookies ({kind}) may be set through our site by our partners. They may be used to "
    "build a profile of your interests and show you relevant adverts on other sites. If you do "
    "not allow these cookies, you will experience less targeted advertising.</p>"
    for kind in ("targeting", "functional", "performance", "strictly necessary", "social")
)


@pytest.mark.parametrize(
    "dialog",
    [
        # OneTrust's preference centre, hidden by a class until the reader opens it.
        '<div id="onetrust-consent-sdk"><div id="onetrust-pc-sdk" class="otPcTab ot-hide" '
        'role="alertdialog" aria-modal="true"><h2>Your Privacy</h2>{}</div></div>',
        '<div class="overlay" role="dialog" aria-label="Privacy settings">{}</div>',
        '<div role="Dialog region">{}</div>',
    ],
)
def test_a_consent_dialog_longer_than_the_article_is_not_read_for_it(dialog):
    """Regression: a consent panel's cookie policy, longer than a short post, was read in its
    place: it held 45 % of the page's text, which protected it from the name rule."""
    html = page(
        '<div id="app-root"><main><article><h1>Council buys energy credits</h1>'
        f"{ARTICLE}</article></main></div>" + dialog.format(COOKIE_POLICY)
    )

    text = read(html)

    assert_article_kept(text)
    assert "cookies" not in text


def test_a_dialog_that_holds_the_pages_article_is_read():
    html = page(
        f'<div class="feed">{SIDEBAR}</div><div role="dialog" aria-modal="true">'
        f"<article><h1>Council buys energy credits</h1>{ARTICLE}</article></div>"
    )

    assert_article_kept(read(html))
