"""Light and dark themes in Chromium: the system's by default, a remembered switch, and text
that stays readable (WCAG contrast of at least 4.5:1) on the main elements in both.

The colours are read from the computed styles, never from pixels; each test keeps screenshots in
its pytest tmp dir for a person to look at.
"""

from __future__ import annotations

import pytest

from tests.support.chat_page import open_chat, send, sign_in, themed_page, wait_status
from tests.support.fake_model import Reply
from tests.support.turns import stored_conversation

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

# The contrast of an element's text with the first opaque background behind it.
CONTRAST = """
element => {
  const rgb = text => text.match(/[\\d.]+/g).map(Number);
  const luminance = ([r, g, b]) => {
    const f = c => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let node = element, back = null;
  while (node && node.nodeType === 1) {
    const colour = rgb(getComputedStyle(node).backgroundColor);
    if (colour.length < 4 || colour[3] === 1) { back = colour; break; }
    node = node.parentElement;
  }
  back = back || [255, 255, 255];
  const fore = rgb(getComputedStyle(element).color);
  const [hi, lo] = [luminance(fore), luminance(back)].sort((a, b) => b - a);
  return {ratio: (hi + 0.05) / (lo + 0.05), back: luminance(back)};
}
"""
# What a person reads on the chat page: selector -> what it is.
MAIN_ELEMENTS = {
    ".brand": "the header's name",
    "nav a": "a header link",
    ".theme-picker": "the theme switch",
    ".sidebar-head h2": "the list's heading",
    ".group-label": "a date group",
    ".conversation-link": "a conversation",
    ".conversation-link[aria-current=page]": "the open conversation",
    ".chat-title": "the conversation's title",
    ".message-user .user-text": "the user's message",
    ".message-meta .role": "who wrote a message",
    ".markdown p": "reply text",
    ".markdown a": "a link in a reply",
    ".code-language": "a code block's language",
    ".code-block code": "code",
    ".hljs-keyword": "a highlighted keyword",
    ".hljs-string": "a highlighted string",
    ".hljs-comment": "a highlighted comment",
    ".tool-card .tool-name": "a tool card",
    ".tool-card .tool-outcome": "a tool card's outcome",
    ".sources-list a": "a source",
    ".message-action": "a reply's button",
    "#message-input": "the message box",
    ".send": "the Send button",
    ".model-label": "the Model label",
}
REPLY = (
    "See [the docs](https://example.com/docs).\n\n"
    '```python\ndef greet(name):\n    return "hi " + name  # say hi\n```'
)


def low_contrast(page) -> dict[str, float]:
    """Return the main elements on screen whose contrast is under 4.5:1, with their ratio."""
    low = {}
    for selector, name in MAIN_ELEMENTS.items():
        found = page.locator(selector)
        assert found.count(), f"{name} ({selector}) is not on the page"
        ratio = found.first.evaluate(CONTRAST)["ratio"]
        if ratio < 4.5:
            low[name] = round(ratio, 2)
    return low


def page_background(page) -> float:
    """The relative luminance of the page's background: near 0 dark, near 1 light."""
    return page.locator("body").evaluate(CONTRAST)["back"]


SIZES = {"desktop": {"width": 1100, "height": 900}, "phone": {"width": 380, "height": 740}}


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_chat_follows_the_system_theme_and_stays_readable(
    browser, chat_app, chat_server, user, fake_model, model_id, scheme, size, tmp_path
):
    person, _chat = user
    # A conversation whose reply failed, to open and read its error.
    stored_conversation(
        chat_app, person.id, "Failed one", [{"type": "text", "text": "Half"}], status="failed"
    )
    fake_model.script(Reply.tool_calls([("web_search", {"query": "greetings"})]), Reply.text(REPLY))
    with themed_page(browser, scheme, viewport=SIZES[size]) as page:
        open_chat(page, chat_server, person, model_id)
        send(page, "Greet")
        wait_status(page, "completed")
        page.get_by_label("Message", exact=True).fill("Next question")  # Send enabled
        assert (page_background(page) < 0.1) == (scheme == "dark")
        assert page.get_by_label("Theme").input_value() == "system"
        page.screenshot(path=str(tmp_path / f"chat-{size}-{scheme}.png"), full_page=True)
        if size == "phone":
            page.get_by_role("button", name="Conversations").click()
            page.screenshot(path=str(tmp_path / f"chat-{size}-{scheme}-list.png"))
        assert low_contrast(page) == {}
        page.get_by_role("link", name="Failed one").click()
        page.locator(".reply-error").wait_for()
        page.screenshot(path=str(tmp_path / f"chat-{size}-{scheme}-failed.png"))
        ratio = page.locator(".reply-error p").evaluate(CONTRAST)["ratio"]
        assert ratio >= 4.5, f"a failed reply's error: {ratio:.2f}"
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]


def test_the_theme_switch_overrides_the_system_and_is_remembered(
    browser, chat_server, user, tmp_path
):
    person, _chat = user
    with themed_page(browser, "dark") as page:
        sign_in(page, chat_server.url, person)
        assert page_background(page) < 0.1
        page.get_by_label("Theme").select_option("light")
        assert page_background(page) > 0.8
        page.screenshot(path=str(tmp_path / "switched-light.png"))
        page.goto(chat_server.url + "/settings")  # another page, same choice
        assert page.get_by_label("Theme").input_value() == "light"
        assert page_background(page) > 0.8
        page.reload()
        assert page_background(page) > 0.8
        page.get_by_label("Theme").select_option("system")
        assert page_background(page) < 0.1
        page.get_by_label("Theme").select_option("dark")
        page.emulate_media(color_scheme="light")  # the system changes; the choice holds
        assert page_background(page) < 0.1
        page.goto(chat_server.url + "/")
        assert page.get_by_label("Theme").input_value() == "dark"
        assert page_background(page) < 0.1


def test_the_settings_and_sign_in_pages_are_readable_in_the_dark(
    browser, chat_server, user, tmp_path
):
    person, _chat = user
    with themed_page(browser, "dark") as page:
        page.goto(chat_server.url + "/sign-in")
        labels = page.locator("form label")
        for element in [
            labels.first,
            page.get_by_role("button", name="Sign in"),
            page.locator("h1"),
        ]:
            assert element.evaluate(CONTRAST)["ratio"] >= 4.5
        page.screenshot(path=str(tmp_path / "sign-in-dark.png"))
        sign_in(page, chat_server.url, person)
        page.goto(chat_server.url + "/settings")
        page.wait_for_selector("#plugins[data-ready]")
        page.screenshot(path=str(tmp_path / "settings-dark.png"), full_page=True)
        for selector in ["h1", ".page-intro", ".plugin h2", ".tool label", "legend", ".save"]:
            assert page.locator(selector).first.evaluate(CONTRAST)["ratio"] >= 4.5, selector
