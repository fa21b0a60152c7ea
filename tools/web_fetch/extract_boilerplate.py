"""Removes page furniture (controls, side matter, sharing, comments, link lists) before readability.

Every rule is structural, the same on every site: readability then scores a smaller tree, which
is both faster and less likely to keep furniture that sits inside the article's container. No
rule may remove the main text block found by density (``main_block``), a block holding a large
share of the page's text, or an ancestor of either; inside the main block, asides, figures,
captions and tables are the article's own and stay.
"""

from __future__ import annotations

from lxml.html import HtmlElement

from tools.web_fetch.class_names import names_comments, names_furniture
from tools.web_fetch.images import keep_image
from tools.web_fetch.main_block import TextSizes, measure

# Controls and embedded media, never the article's prose; pictures are judged by ``images``.
_CONTROL_TAGS = frozenset(
    {
        "button",
        "select",
        "textarea",
        "input",
        "label",
        "svg",
        "canvas",
        "video",
        "audio",
        "object",
        "embed",
        "dialog",
        "menu",
    }
)
# Inside the main block these are the article's own: a pull quote, a chart, a table of figures.
_SHELTER_TAGS = frozenset({"aside", "figure", "figcaption", "table"})
# What readability's last cleaning may drop; inside the main block's data tables these stay.
_READABILITY_CLEANS = _SHELTER_TAGS | {"ul", "ol", "dl", "div", "section"}
# The page says these hold content, whatever their names (WordPress names an article's author).
_CONTENT_TAGS = frozenset({"main", "article"})
# Blocks whose text is mostly link text are menus, link lists and teasers.
_LINK_LIST_TAGS = frozenset({"p", "ul", "ol", "dl", "table", "div", "section"})
_MAX_LINK_DENSITY = 0.6
_MIN_LINK_LIST_CHARS = 25
_NAMED_CONTENT_SHARE = 0.8
# A ``<dialog>`` by its ARIA role: a cookie-consent panel, a sign-up or log-in box.
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})


def remove_controls(body: HtmlElement) -> None:
    """Remove form controls, embedded media and dialogs, whose text (a month's days in a date
    picker, a menu's options, a consent panel's cookie policy) is never the page's prose and
    would mislead the search for the main text block.

    A dialog that holds an ``article`` or ``main`` element is where the page shows its content,
    and stays: a dialog is removed by what it is, never at the cost of the article.
    """
    for element in list(body.iter(*_CONTROL_TAGS)):
        _drop(element)
    for element in body.xpath("descendant::*[@role]"):
        if _is_dialog(element) and not element.xpath("descendant::*[self::article or self::main]"):
            _drop(element)


def _is_dialog(element: HtmlElement) -> bool:
    # The first of the role's tokens is the role (the others are fallbacks for older readers).
    roles = element.get("role", "").split()
    return bool(roles) and roles[0].lower() in _DIALOG_ROLES


def remove_boilerplate(
    body: HtmlElement,
    main: HtmlElement,
    protected: set[HtmlElement],
    thread: bool = False,
    link_lists: bool = True,
) -> list[HtmlElement]:
    """Remove from ``body`` the controls, side matter and link lists that are not content.

    With ``thread``, names inside the main block are not read as furniture (a forum's replies
    are named comments). Returns the asides, figures and tables of the main block kept as its
    own.
    """
    inside = set(main.iterdescendants())
    own = _sheltered(main) if main is not body else set()
    sheltered = own | inside if thread else own
    for element in list(body.iterdescendants()):
        tag = element.tag
        if tag == "img" or tag == "picture":
            if not (element in inside and keep_image(element)):
                _drop(element)
        elif element in protected or element in sheltered:
            continue
        elif tag not in _CONTENT_TAGS and names_furniture(
            element.get("class", ""), element.get("id", "")
        ):
            _drop(element)
    # Links left without text once their pictures are gone would read as "[](url)".
    for link in body.xpath("descendant::a[not(normalize-space()) and not(descendant::img)]"):
        _drop(link)
    # A data table's cells (a wiki's infobox row listing a company's products) are content,
    # whatever their share of link text; layout tables, which have no header cells, are not.
    data = _data_tables(own)
    if link_lists:
        _remove_link_lists(body, protected | data)
    return [
        e
        for e in own
        if (e.tag in _SHELTER_TAGS or e in data and e.tag in _READABILITY_CLEANS)
        and e.getparent() is not None
    ]


def thread_posts(
    main: HtmlElement, protected: set[HtmlElement], sizes: TextSizes
) -> list[HtmlElement]:
    """Return the posts (outermost elements named as comments, replies, ...) of a main block
    made mostly of them, the children of a main block named as comments, or an empty list.

    On a forum every reply is named a comment, and the replies are the page; under an article
    they are not (the caller weighs the post against the typical reply).
    """
    if names_comments(main.get("class", ""), main.get("id", "")):
        # The density found the comment list itself (its replies unnamed): they are its posts.
        return [child for child in main if sizes.total.get(child, 0)]
    named = [
        element
        for element in main.xpath("descendant::*[@class or @id]")
        if element not in protected
        and names_furniture(element.get("class", ""), element.get("id", ""))
    ]
    inside = {descendant for element in named for descendant in element.iterdescendants()}
    posts = [element for element in named if element not in inside]
    covered = sum(sizes.total.get(element, 0) for element in posts)
    return posts if covered >= _NAMED_CONTENT_SHARE * sizes.total.get(main, 0) > 0 else []


def _data_tables(own: set[HtmlElement]) -> set[HtmlElement]:
    data: set[HtmlElement] = set()
    for table in own:
        if table.tag == "table" and table not in data and table.find(".//th") is not None:
            data.update(table.iter())
    return data


def _sheltered(main: HtmlElement) -> set[HtmlElement]:
    sheltered: set[HtmlElement] = set()
    for element in main.iterdescendants():
        if element.tag in _SHELTER_TAGS and element not in sheltered:
            sheltered.update(element.iter())
    return sheltered


def _remove_link_lists(body: HtmlElement, kept: set[HtmlElement]) -> None:
    # Innermost first, so that a container's density is judged after its menus are gone.
    def is_link_list(element: HtmlElement, chars: int, link_chars: int) -> bool:
        return (
            element.tag in _LINK_LIST_TAGS
            and element not in kept
            and link_chars > _MAX_LINK_DENSITY * chars
            # A paragraph that is all link ("Read more: ...") is a teaser whatever its length.
            and (element.tag == "p" or chars >= _MIN_LINK_LIST_CHARS)
        )

    measure(body, discard=is_link_list)


def _drop(element: HtmlElement) -> None:
    if element.getparent() is not None:
        element.drop_tree()
