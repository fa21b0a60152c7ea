"""Every page and the chat's states hold on a phone (390×844) and a desk (1280×900), light and
dark: no page wider than the screen, no text squeezed to a few characters a line, no control
out of reach (issue 25: search queries one character a line, the Users page's actions
off-screen, the tokens page wider than a phone). Screenshots of each go to the test's tmp_path.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import WAIT_MS, open_chat, send, token_for, wait_status
from tests.support.fake_model import Reply
from tests.support.layout import layout_faults
from tests.support.models import ask_for_follow_ups
from tests.support.pages import sign_in_page

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

SIZES = {"phone": (390, 844), "desk": (1280, 900)}
PAGES = {
    "settings": ("/settings", "#plugins[data-ready]"),
    "tokens": ("/settings/tokens", "main"),
    "admin": ("/admin/", "main"),
    "health": ("/admin/health", "main"),
    "plugins": ("/admin/plugins", "#plugins[data-ready]"),
    "providers": ("/admin/providers", "main"),
    "mcp-servers": ("/admin/mcp-servers", "#mcp-servers[data-ready]"),
    "users": ("/admin/users", "#users[data-ready]"),
    "usage": ("/admin/usage", "main"),
    "api-docs": ("/docs/api", "main"),
}


@pytest.fixture
def admin(chat_app, chat_server):
    """An administrator of the chat app (password "password")."""
    return token_for(chat_app, admin=True)[0]


@pytest.fixture(params=sorted(SIZES))
def sized(request, browser):
    """A page of the given size, light or dark: (page, label); closed after the test."""
    made = []

    def make(scheme: str):
        width, height = SIZES[request.param]
        context = browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=scheme
        )
        made.append(context)
        return context.new_page(), f"{request.param}-{scheme}"

    yield make
    for context in made:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_fits_the_screen(sized, scheme, chat_server, admin, tmp_path):
    page, label = sized(scheme)
    faults = {}
    page.goto(f"{chat_server.url}/sign-in")
    faults["sign-in"] = layout_faults(page)
    sign_in_page(page, chat_server.url, admin, "/", ready="#chat[data-ready]")
    faults["chat"] = layout_faults(page)
    for name, (path, ready) in PAGES.items():
        page.goto(f"{chat_server.url}{path}")
        page.wait_for_selector(ready, timeout=WAIT_MS)
        page.wait_for_load_state("networkidle")
        page.screenshot(path=str(tmp_path / f"{name}-{label}.png"), full_page=True)
        faults[name] = layout_faults(page)
    page.goto(f"{chat_server.url}/admin/users")
    page.locator("#users summary").first.click()  # the Limits form, opened
    page.wait_for_selector(".limits-form[data-ready]", timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / f"users-limits-{label}.png"), full_page=True)
    faults["users, limits open"] = layout_faults(page)
    assert {name: found for name, found in faults.items() if found} == {}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_chat_fits_the_screen_in_every_state(
    sized, scheme, chat_app, chat_server, user, fake_model, model_id, tmp_path
):
    page, label = sized(scheme)
    person, _chat = user
    faults = {}
    ask_for_follow_ups(chat_app, model_id)
    open_chat(page, chat_server, person, model_id)
    faults["empty"] = layout_faults(page)
    long_query = "lighthouse keepers of the northern coast and their logbooks " * 2
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": long_query})], reasoning="Search first. " * 9),
        Reply.text(
            "The keepers wrote **daily** logs [1].\n\n- wind [2]\n- tides\n\n" + "Word " * 80
            + "end [1][2].",
            reasoning="The results name logbooks; a_long_unbroken_identifier_" * 4,
        ),
        Reply.text("What did keepers write about storms at night on the northern coast?\n"
                   "Where are the logbooks kept today?\nWere keepers paid well?"),
    )  # fmt: skip
    send(page, "Tell me about lighthouse keepers and their logbooks")
    wait_status(page, "completed")
    for summary in page.locator("details.thinking summary").all():
        summary.click()  # open: the reasoning's text must fit too
    page.wait_for_selector(".follow-ups button")
    page.screenshot(path=str(tmp_path / f"tool-cards-{label}.png"), full_page=True)
    faults["tool cards, thinking, follow-ups"] = layout_faults(page)
    page.locator(".cite-chip").last.focus()  # a citation's card, opened at the line's end
    page.locator(".cite-card").last.wait_for()
    page.screenshot(path=str(tmp_path / f"citation-card-{label}.png"))
    faults["citation card"] = layout_faults(page)
    page.keyboard.press("Escape")
    fake_model.script(Reply.error(401))
    send(page, "Once more")
    wait_status(page, "failed")
    page.screenshot(path=str(tmp_path / f"failed-{label}.png"), full_page=True)
    faults["failed"] = layout_faults(page)
    fake_model.script(Reply.forever("tick ", 0.05), Reply.text("and the rest."))
    send(page, "Count")
    expect(page.locator(".reply[aria-busy] .markdown")).to_contain_text("tick", timeout=WAIT_MS)
    page.screenshot(path=str(tmp_path / f"streaming-{label}.png"), full_page=True)
    faults["streaming"] = layout_faults(page)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_status(page, "cancelled")
    page.screenshot(path=str(tmp_path / f"stopped-{label}.png"), full_page=True)
    faults["stopped"] = layout_faults(page)
    page.locator(".message-assistant").last.get_by_role("button", name="Continue").click()
    page.locator(".message-assistant", has_text="and the rest.").wait_for(timeout=WAIT_MS)
    wait_status(page, "completed")
    page.screenshot(path=str(tmp_path / f"continued-{label}.png"), full_page=True)
    faults["continued"] = layout_faults(page)
    # The header and the chat's own head leave the conversation the screen (issue 25: 120 px
    # of a phone's 844 went to them).
    log_top = page.evaluate("document.querySelector('.chat-log').getBoundingClientRect().top")
    assert log_top <= 110
    # New chat is one tap away on a phone too, not only inside the Conversations drawer.
    page.get_by_role("button", name="New chat").click()
    page.wait_for_function("() => !document.querySelector('.message-assistant')")
    assert page.locator("#chat-title").inner_text() == "New chat"
    assert {name: found for name, found in faults.items() if found} == {}
