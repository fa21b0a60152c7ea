"""Cited answers end to end (issue 27): a real worker runs a search and reads an article, the
fake model cites them right, wrongly and with a number no source has; the prompt, the API's
citation objects and the chat's chips and cards, in Chromium, light, dark and on a phone."""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import unquote

import pytest
from playwright.sync_api import expect

from tests.support.chat_page import (
    WAIT_MS,
    last_reply,
    open_chat,
    send,
    sign_in,
    themed_page,
    wait_status,
)
from tests.support.fake_model import Reply
from tests.support.sites import Site
from tests.support.turns import stored_conversation
from tests.workers.turn_plugins import ARTICLES

pytestmark = [pytest.mark.chromium, pytest.mark.integration]

ARTICLE = "https://article.example/eddystone"
ANSWER = (
    "The current Eddystone tower was completed in 1882 [3]. "
    "It was designed by Robert Stevenson [3]. "
    "The tower is 60 metres tall [3]. "
    "Lighthouse A was built in 1902 on the north cape [1]. "
    "Nobody knows why [9]. In code, write `x[3]`."
)
STATUSES = ["supported", "not_found", "partly", "snippet_only", "no_such_source"]


@pytest.fixture(scope="module")
def site():
    """A loopback SearXNG whose results carry snippets: this module's own (chat_server's)."""
    with Site() as server:
        results = {
            "results": [
                {
                    "title": "Lighthouse A",
                    "url": "https://a.example/light",
                    "content": "Lighthouse A was built in 1902 on the north cape.",
                },
                {"title": "House B", "url": "https://b.example/house", "content": "B"},
            ]
        }
        server.serve("/search", "application/json", json.dumps(results).encode())
        yield server


@pytest.fixture(autouse=True)
def article_on(user):
    """Switch on the "article" tool (off by default) for the test's user."""
    _person, chat = user
    answer = chat.call("PUT", "/api/plugins/turn_plugins/tools/article", json={"enabled": True})
    assert answer.status_code == 200, answer.text


def script_cited_answer(fake_model, answer: Reply) -> None:
    fake_model.script(
        Reply.tool_calls([("web_search", {"query": "lighthouses"})]),
        Reply.tool_calls([("article", {"text": "eddystone"})]),
        answer,
    )


def ask(page, chat_server, person, model_id, fake_model) -> None:
    script_cited_answer(fake_model, Reply.text(ANSWER))
    open_chat(page, chat_server, person, model_id)
    send(page, "Tell me about lighthouses, with sources")
    wait_status(page, "completed")


def stored_reply(chat) -> dict:
    conversation = chat.call("GET", "/api/conversations").json()["conversations"][0]
    messages = chat.conversation(conversation["id"])["messages"]
    return next(m for m in messages if m["role"] == "assistant")


def test_the_model_is_shown_numbered_sources_inside_the_envelope_and_the_api_checks_each_marker(
    page, chat_server, user, fake_model, model_id
):
    person, chat = user
    ask(page, chat_server, person, model_id, fake_model)

    last = fake_model.chat_requests()[-1].json["messages"]
    assert "cite a claim" in last[0]["content"] and "[3]" in last[0]["content"]
    search, article = [m["content"] for m in last if m["role"] == "tool"]
    for content, lines in [
        (search, ["Source [1]: Lighthouse A, https://a.example/light", "Source [2]: House B"]),
        (article, [f"Source [3]: Eddystone Lighthouse, {ARTICLE}"]),
    ]:
        opened, closed = content.index("<untrusted_tool_output"), content.index("</untrusted")
        assert all(opened < content.index(line) < closed for line in lines), content

    parts = stored_reply(chat)["parts"]
    sources = [(p["number"], p["url"]) for p in parts if p["type"] == "source"]
    assert sources == [
        (1, "https://a.example/light"),
        (2, "https://b.example/house"),
        (3, ARTICLE),
    ]
    [text] = [p for p in parts if p["type"] == "text"]
    citations = text["citations"]
    numbers = [3, 3, 3, 1, 9]
    assert [(c["number"], c["status"]) for c in citations] == list(
        zip(numbers, STATUSES, strict=True)
    )
    supported, wrong_name, wrong_number, snippet, invented = citations
    read = ARTICLES["eddystone"][1]
    passage = supported["passage"]
    assert read[passage["start"] : passage["end"]] == passage["text"]
    assert "completed in 1882" in passage["text"]
    assert supported["url"] == ARTICLE and supported["title"] == "Eddystone Lighthouse"
    assert supported["readAt"] and invented["readAt"] is None
    assert ANSWER[slice(*supported["marker"])] == "[3]"
    assert ANSWER[slice(*supported["sentence"])].startswith("The current Eddystone tower")
    assert wrong_number["missing"] == ["60"] and wrong_number["passage"]
    assert "Robert Stevenson" in wrong_name["missing"]
    assert snippet["passage"]["text"] == "Lighthouse A was built in 1902 on the north cape."
    assert invented["url"] is None and invented["passage"] is None


def test_chips_open_cards_with_the_passage_and_say_which_citations_the_page_does_not_support(
    page, chat_server, user, fake_model, model_id, tmp_path
):
    person, _chat = user
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ask(page, chat_server, person, model_id, fake_model)
    reply = last_reply(page)
    check_chips(page, reply)
    page.screenshot(path=str(tmp_path / "citations.png"))

    copy = reply.get_by_role("button", name="Copy this reply")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == (
        f"{ANSWER}\n\nSources:\n"
        "1. [Lighthouse A](https://a.example/light)\n"
        "2. [House B](https://b.example/house)\n"
        f"3. [Eddystone Lighthouse]({ARTICLE})"
    )

    page.reload()
    page.wait_for_selector("#chat[data-ready]")
    check_chips(page, last_reply(page))  # the same from what was stored


def check_chips(page, reply) -> None:
    """The chips of ANSWER: statuses, the card of each, and the marker no source has."""
    chips = reply.locator(".cite-chip")
    expect(chips).to_have_count(4)
    assert [c.get_attribute("data-status") for c in chips.all()] == STATUSES[:4]
    assert chips.all_inner_texts() == ["3", "3!", "3~", "1*"]  # a sign, not colour alone
    assert reply.locator("code").inner_text() == "x[3]"  # code is never a chip
    missing = reply.locator(".cite-missing")
    assert missing.inner_text().startswith("[9]") and missing.locator("a").count() == 0

    chips.first.hover()
    card = reply.locator(".cite-card").first
    expect(card).to_be_visible()
    assert card.locator(".cite-card-title").inner_text() == "Eddystone Lighthouse"
    assert card.locator(".cite-card-site").inner_text() == "article.example"
    assert card.locator(".cite-card-when").inner_text().startswith("Read ")
    assert "completed in 1882" in card.locator(".cite-card-passage").inner_text()
    assert card.locator(".cite-card-status").count() == 0
    href = card.get_by_role("link", name="Open the page at this passage").get_attribute("href")
    # The fragment names the passage quoted in the card: the page opens at it.
    assert href.startswith(ARTICLE + "#:~:text=") and "1882" in href, href
    # The comma between start and end is the fragment's own; the passage's commas are escaped.
    start, end = (unquote(word) for word in href.split("#:~:text=")[1].split(","))
    assert start.split()[0] == "The" and ARTICLES["eddystone"][1].find(end) > 0
    assert "-" not in href.split("#:~:text=")[1]  # the fragment's own syntax stays escaped

    chips.nth(1).focus()  # keyboard: focus opens the card, Escape closes it
    second = reply.locator(".cite-card").nth(1)
    expect(second).to_be_visible()
    assert second.locator(".cite-card-status").inner_text() == "Not found in what was read"
    page.keyboard.press("Escape")
    expect(second).to_be_hidden()
    third = reply.locator(".cite-card").nth(2)
    chips.nth(2).focus()
    assert third.locator(".cite-card-status").inner_text() == (
        "Partly: the page does not mention 60"
    )
    chips.nth(3).focus()
    assert reply.locator(".cite-card").nth(3).locator(".cite-card-status").inner_text() == (
        "Only the search snippet was checked"
    )
    assert chips.first.get_attribute("href") == "#" + (
        reply.locator(".sources-list li").nth(2).get_attribute("id")
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_tap_on_a_phone_opens_a_card_that_stays_on_screen(
    browser, chat_server, user, fake_model, model_id, scheme, tmp_path
):
    person, _chat = user
    with themed_page(
        browser, scheme, viewport={"width": 390, "height": 844}, has_touch=True
    ) as page:
        ask(page, chat_server, person, model_id, fake_model)
        chips = last_reply(page).locator(".cite-chip")
        address = page.url
        chips.nth(2).tap()
        card = last_reply(page).locator(".cite-card").nth(2)
        expect(card).to_be_visible()
        box = card.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        page.screenshot(path=str(tmp_path / f"citation-card-phone-{scheme}.png"))
        page.locator(".chat-title").tap()
        expect(card).to_be_hidden()
        chips.nth(2).tap()
        chips.nth(2).tap()  # the second tap goes to the source; the address stays the chat's
        expect(card).to_be_hidden()
        expect(last_reply(page).locator(".sources-list li").nth(2).locator("a")).to_be_focused()
        assert page.url == address


def test_markers_streamed_before_the_checks_are_chips_without_a_status(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    release = threading.Event()
    script_cited_answer(
        fake_model, Reply.text(ANSWER, chunks=2, pause_after=(1, 60), release=release)
    )
    open_chat(page, chat_server, person, model_id)
    send(page, "Tell me about lighthouses, with sources")
    try:
        chip = last_reply(page).locator(".cite-chip").first
        chip.wait_for(timeout=WAIT_MS)
        assert chip.get_attribute("data-status") == "pending"
    finally:
        release.set()
    wait_status(page, "completed")
    expect(last_reply(page).locator(".cite-chip").first).to_have_attribute(
        "data-status", "supported"
    )


def test_a_stored_reply_with_markers_but_no_checks_shows_plain_chips(
    page, chat_app, chat_server, user
):
    """Replies stored before citations were checked keep their markers as chips."""
    person, _chat = user
    parts = [
        {"type": "text", "text": "Old claim [1] and [2]."},
        {"type": "source", "url": "https://old.example/", "title": "Old"},
    ]
    conversation_id = stored_conversation(chat_app, person.id, "Older", parts)
    sign_in(page, chat_server.url, person, f"/#c={conversation_id}")
    chip = page.locator(".cite-chip")
    chip.wait_for()
    assert chip.get_attribute("data-status") == "pending" and chip.inner_text() == "1"
    assert re.match(r"\[2\]", page.locator(".cite-missing").inner_text())


def test_a_wrong_marker_is_marked_as_soon_as_the_turn_ends_without_a_reload(
    page, chat_server, user, fake_model, model_id
):
    person, _chat = user
    answer = "The current Eddystone tower was completed in 1882 [3]. It is 60 metres tall [3]."
    script_cited_answer(fake_model, Reply.text(answer, chunks=4))
    open_chat(page, chat_server, person, model_id)
    send(page, "How tall is the Eddystone tower?")
    chips = last_reply(page).locator(".cite-chip")
    expect(chips).to_have_count(2)
    wait_status(page, "completed")
    # Read at once, not waited for: the reply drawn at the end carries the checks.
    assert [c.get_attribute("data-status") for c in chips.all()] == ["supported", "partly"]
    assert chips.all_inner_texts() == ["3", "3~"]
    chips.nth(1).focus()
    card = last_reply(page).locator(".cite-card").nth(1)
    expect(card).to_be_visible()
    assert card.locator(".cite-card-status").inner_text() == "Partly: the page does not mention 60"
