/* Citation markers in a reply: chips linked to their numbered source, each with a card.
 *
 * A marker "[n]" of a reply's text becomes a chip linking to source n in the Sources row; a
 * number no source has stays plain text, marked as such, never a link. Once the turn ended
 * its text part carries the checks (part.citations, core/turn/checks.py): each chip takes its
 * check in order, shows a status that is not colour alone (a sign and an outline), and opens a
 * card on hover, focus or tap: the source's title and site, when it was read, the passage
 * quoted, a link opening the page at that passage (a #:~:text= fragment) and a line for a
 * citation the text read does not support. Copying a reply keeps the markers and appends the
 * numbered sources as Markdown links.
 *
 * A classic <script> after forms.js and tool_cards.js (window.LookoutCitations); from Node, its
 * plain functions (copyText, passageUrl, statusLine, numberedSources).
 */
(function (root) {
  "use strict";

  var el = root.LookoutForms ? root.LookoutForms.element : null;
  var STATUS_LINES = {
    not_found: "Not found in what was read",
    snippet_only: "Only the search snippet was checked",
  };
  // A sign after the number, so a status never rests on colour alone.
  var STATUS_SIGNS = { partly: "~", not_found: "!", snippet_only: "*" };
  var STATUS_NAMES = {
    supported: "supported by what was read", partly: "partly supported",
    not_found: "not found in what was read", snippet_only: "checked against the search snippet only",
  };
  var FRAGMENT_WORDS = 6;
  var rendered = 0;
  // The card a tap pinned open; a tap anywhere else closes it (one listener for all chips).
  var pinned = null;
  if (typeof document !== "undefined") {
    document.addEventListener("click", function (event) {
      if (pinned && !pinned.wrap.contains(event.target)) pinned.close();
    });
  }

  /** Return the sources of a reply's parts by number: stored numbers, else order of arrival. */
  function numberedSources(parts) {
    var sources = {}, next = 1, seen = {};
    parts.forEach(function (part) {
      if (part.type !== "source" || seen[part.url]) return;
      seen[part.url] = true;
      var number = part.number || next;
      next = number + 1;
      sources[number] = part;
    });
    return sources;
  }

  /** Return the line a card shows for a citation the text read does not support, or "". */
  function statusLine(check) {
    if (!check) return "";
    if (check.status === "partly") {
      var missing = (check.missing || []).join(", ");
      return missing ? "Partly: the page does not mention " + missing
        : "Partly: the page supports only part of this";
    }
    return STATUS_LINES[check.status] || "";
  }

  // A text fragment's words are percent-encoded, and so are the "-", "," and "&" its syntax uses.
  function fragmentPart(words) {
    return encodeURIComponent(words.join(" ")).replace(/-/g, "%2D");
  }

  /** Return the URL opening `url` at `passage` (a #:~:text= fragment); `url` when none fits. */
  function passageUrl(url, passage) {
    var words = (passage || "").split(/\s+/).filter(Boolean);
    if (!words.length) return url;
    var base = url.split("#")[0];
    if (words.length <= 2 * FRAGMENT_WORDS) return base + "#:~:text=" + fragmentPart(words);
    return base + "#:~:text=" + fragmentPart(words.slice(0, FRAGMENT_WORDS)) + "," +
      fragmentPart(words.slice(-FRAGMENT_WORDS));
  }

  function readWhen(iso) {
    var date = iso ? new Date(iso) : null;
    if (!date || isNaN(date.getTime())) return "";
    return "Read " + date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  }

  function cardOf(source, check, id) {
    var url = source.url, passage = check && check.passage ? check.passage.text : "";
    var children = [
      el("span", { class: "cite-card-title", text: source.title || LookoutToolCards.hostOf(url) }),
      el("span", { class: "cite-card-site", text: LookoutToolCards.hostOf(url) }),
    ];
    var when = readWhen(check && check.readAt);
    if (when) children.push(el("span", { class: "cite-card-when", text: when }));
    var line = statusLine(check);
    if (line) children.push(el("span", { class: "cite-card-status", text: line }));
    if (passage) children.push(el("blockquote", { class: "cite-card-passage", text: passage }));
    children.push(el("a", { class: "cite-card-open", href: passageUrl(url, passage),
      rel: "noopener noreferrer nofollow", target: "_blank",
      text: passage ? "Open the page at this passage" : "Open the page" }));
    return el("span", { class: "cite-card", id: id, role: "tooltip", hidden: true }, children);
  }

  // Keep an open card inside the window: a chip near the right edge opens its card leftwards.
  function place(card) {
    card.style.left = "";
    var box = card.getBoundingClientRect(), room = document.documentElement.clientWidth - 8;
    if (box.right > room) card.style.left = Math.max(8 - box.left, room - box.right) + "px";
  }

  function goToSource(anchor) {
    var item = document.getElementById(anchor.getAttribute("href").slice(1));
    var link = item && item.querySelector("a");
    if (!link) return;
    item.scrollIntoView({ block: "nearest" });
    link.focus();
  }

  function chip(number, source, check, prefix) {
    var status = check ? check.status : "pending";
    var id = prefix + "-card-" + (++rendered);
    var label = "Source " + number + (check ? ": " + (STATUS_NAMES[status] || status) : "");
    var anchor = el("a", { class: "cite-chip", href: "#" + prefix + "-source-" + number,
      "data-number": String(number), "data-status": status, "aria-label": label,
      "aria-describedby": id }, [String(number)]);
    if (STATUS_SIGNS[status]) {
      anchor.appendChild(el("span", { class: "cite-sign", "aria-hidden": "true", text: STATUS_SIGNS[status] }));
    }
    var card = cardOf(source, check, id);
    var wrap = el("span", { class: "cite" }, [anchor, card]);
    var self = { wrap: wrap, close: function () { if (pinned === self) pinned = null; show(false); } };
    function show(open) {
      card.hidden = !open;
      wrap.classList.toggle("open", open);
      if (open) place(card);
    }
    function isPinned() { return pinned === self; }
    wrap.addEventListener("mouseenter", function () { show(true); });
    wrap.addEventListener("mouseleave", function () { if (!isPinned()) show(false); });
    anchor.addEventListener("focus", function () { show(true); });
    wrap.addEventListener("focusout", function (event) {
      if (!wrap.contains(event.relatedTarget) && !isPinned()) show(false);
    });
    // A tap on a phone has no hover: the first tap opens the card, the next goes to the source.
    // The page's address names the conversation, so going there never changes it.
    anchor.addEventListener("click", function (event) {
      event.preventDefault();
      if (isPinned()) { self.close(); goToSource(anchor); return; }
      if (pinned) pinned.close();
      pinned = self;
      show(true);
    });
    wrap.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { self.close(); anchor.focus(); }
    });
    return wrap;
  }

  function missingNumber(number) {
    return el("span", { class: "cite-missing", "data-number": String(number),
      title: "This reply has no source " + number }, [
      "[" + number + "]", el("span", { class: "visually-hidden", text: " (no such source)" }),
    ]);
  }

  /**
   * Return the function LookoutMarkdown.render draws a text part's markers with: each number a
   * chip taking the part's next check for that number. `prefix` names the reply's Sources row.
   */
  function citer(part, sources, prefix) {
    var queues = {};
    (part.citations || []).forEach(function (check) {
      (queues[check.number] = queues[check.number] || []).push(check);
    });
    return function (numbers) {
      var group = el("span", { class: "cite-group" });
      numbers.forEach(function (number) {
        var check = queues[number] && queues[number].shift();
        var source = sources[number];
        group.appendChild(source && LookoutLinks.isPresentableUrl(source.url)
          ? chip(number, source, check, prefix) : missingNumber(number));
      });
      return group;
    };
  }

  /**
   * Return a reply's text as copied: the markers kept, then the numbered sources as Markdown
   * links, as /v1/chat/completions writes them (webapp/openai_api/answers.py).
   */
  function copyText(parts) {
    var text = parts.filter(function (p) { return p.type === "text" && p.text; })
      .map(function (p) { return p.text.trim(); }).join("\n\n");
    var sources = numberedSources(parts), numbers = Object.keys(sources);
    if (!text || !numbers.length) return text;
    return text + "\n\nSources:\n" + numbers.map(function (n) {
      var source = sources[n];
      var title = (source.title || source.url).split(/\s+/).filter(Boolean).join(" ")
        .replace(/([\\\[\]])/g, "\\$1");
      var target = source.url.replace(/ /g, "%20").replace(/\(/g, "%28").replace(/\)/g, "%29");
      return n + ". [" + title + "](" + target + ")";
    }).join("\n");
  }

  var api = {
    numberedSources: numberedSources, citer: citer, copyText: copyText, passageUrl: passageUrl,
    statusLine: statusLine,
  };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.LookoutCitations = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
