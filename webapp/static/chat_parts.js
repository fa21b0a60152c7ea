/* A message's parts as page elements: Markdown text, compact tool cards, one Sources row.
 *
 * Reasoning shows in a folded "Thinking" section where the model thought it, as plain text, never
 * as the answer; how the reply used the web (its grounding) is one line above the Sources row;
 * follow-up questions are buttons under the reply (followUpButtons).
 *
 * Assistant text goes through LookoutMarkdown (no raw HTML, click-to-load images); web_search and
 * web_fetch have cards of their own (LookoutToolCards), other tools a generic one; tool input,
 * output and errors are shown as text only; sources become links only through the shared
 * LookoutLinks.isPresentableUrl rule, deduplicated by URL and counted after filtering, each
 * with its number; "[n]" markers in the text are chips linked to them (LookoutCitations).
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var Cards = LookoutToolCards;
  var MAX_OUTPUT_CHARS = 20000;
  var SUMMARY_CHARS = Cards.SUMMARY_CHARS;
  var shorten = Cards.shorten;
  var replies = 0;  // numbers each rendered reply, for the ids its chips link to
  var OUTCOMES = {
    running: "Running…", ok: "Done", error: "Failed", timeout: "Timed out",
    cancelled: "Stopped", refused: "Refused", skipped: "Skipped",
  };

  /** Return a one-line summary of a tool's input: its one string, or "key: value, ...". */
  function inputSummary(input) {
    if (input === null || typeof input !== "object") return shorten(JSON.stringify(input), SUMMARY_CHARS);
    var keys = Object.keys(input);
    if (keys.length === 1 && typeof input[keys[0]] === "string") return shorten(input[keys[0]], SUMMARY_CHARS);
    return shorten(keys.map(function (key) {
      var value = input[key];
      return key + ": " + (typeof value === "string" ? value : JSON.stringify(value));
    }).join(", "), SUMMARY_CHARS);
  }

  function outputText(result) {
    if (result.error) return String(result.error);
    var output = result.output;
    if (result.name === "web_fetch" && output && typeof output.content === "string") output = output.content;
    var text = typeof output === "string" ? output : JSON.stringify(output, null, 2);
    if (text === undefined) return "";
    if (text.length > MAX_OUTPUT_CHARS) {
      text = text.slice(0, MAX_OUTPUT_CHARS) + "\n… (" + (text.length - MAX_OUTPUT_CHARS) +
        " more characters)";
    }
    return text;
  }

  function headOf(call, result, sizes) {
    if (call.name === "web_search") return Cards.searchCard(call, result, OUTCOMES, inputSummary(call.input));
    if (call.name === "web_fetch") {
      var url = call.input && call.input.url;
      return Cards.readingCard(call, result, OUTCOMES, sizes && url ? sizes[url] : null);
    }
    var outcome = result ? result.outcome : "running";
    return [
      el("span", { class: "tool-name", text: call.name }),
      el("span", { class: "tool-summary", text: inputSummary(call.input) }),
      el("span", { class: "tool-outcome", text: OUTCOMES[outcome] || outcome }),
    ];
  }

  /**
   * Return the compact card of a tool call; `result` is its tool-result part, if any yet, and
   * `sizes` the part sizes of the pages read in the same reply (LookoutToolCards.partSizes).
   */
  function toolCard(call, result, openCalls, sizes) {
    var outcome = result ? result.outcome : "running";
    var card = el("div", { class: "tool-card", "data-call-id": call.id, "data-tool": call.name,
      "data-outcome": outcome });
    headOf(call, result, sizes).forEach(function (node) { card.appendChild(node); });
    if (call.name === "web_search") return card;
    if (result) {
      var details = el("details", { class: "tool-details" }, [
        el("summary", { text: result.error ? "Show the error" : "Show the output" }),
        el("pre", { class: "tool-output", text: outputText(result) }),
      ]);
      if (openCalls && openCalls.has(call.id)) details.open = true;
      details.addEventListener("toggle", function () {
        if (!openCalls) return;
        if (details.open) openCalls.add(call.id); else openCalls.delete(call.id);
      });
      card.appendChild(details);
    }
    return card;
  }

  /**
   * Return the Sources row of a reply's source parts, or null when none may be shown; each
   * source has its number, and the id "<prefix>-source-<number>" its chips link to.
   */
  function sourcesRow(parts, prefix) {
    var numbered = LookoutCitations.numberedSources(parts), shown = [];
    Object.keys(numbered).forEach(function (number) {
      var part = numbered[number];
      if (LookoutLinks.isPresentableUrl(part.url)) shown.push({ number: number, part: part });
    });
    if (!shown.length) return null;
    var list = el("ul", { class: "sources-list" }, shown.map(function (source) {
      var part = source.part;
      var anchor = el("a", { href: part.url, rel: "noopener noreferrer nofollow", target: "_blank",
        title: part.url, text: part.title || Cards.hostOf(part.url) });
      return el("li", { id: prefix ? prefix + "-source-" + source.number : null,
        "data-number": source.number }, [el("span", { class: "source-number", text: source.number }), anchor]);
    }));
    return el("div", { class: "sources", role: "group", "aria-label": "Sources" }, [
      el("span", { class: "sources-label", text: "Sources (" + shown.length + ")" }), list,
    ]);
  }

  /**
   * Return the folded section of a step's reasoning; `key` names it in view.openThinking, which
   * keeps it open across re-renders once the user opened it; `live` while it is still streaming.
   */
  function thinkingSection(part, key, view, live) {
    var details = el("details", { class: "thinking", "data-live": live ? "true" : null }, [
      el("summary", { text: live ? "Thinking…" : "Thinking" }),
      el("div", { class: "thinking-text", text: part.text }),
    ]);
    var open = view.openThinking;
    if (open && open.has(key)) details.open = true;
    details.addEventListener("toggle", function () {
      if (!open) return;
      if (details.open) open.add(key); else open.delete(key);
    });
    return details;
  }

  /** Return the line saying how a reply used the web, or null without one. */
  function groundingLine(grounding) {
    if (!grounding || !grounding.summary) return null;
    return el("p", { class: "grounding", "data-failed": grounding.failed ? "true" : null,
      text: grounding.summary });
  }

  /**
   * Return the follow-up questions of a reply as buttons that call onAsk(question), or null when
   * it has none.
   */
  function followUpButtons(parts, onAsk) {
    var part = parts.filter(function (p) { return p.type === "follow-ups"; })[0];
    var questions = part && Array.isArray(part.questions) ? part.questions : [];
    questions = questions.filter(function (q) { return typeof q === "string" && q; }).slice(0, 3);
    if (!questions.length) return null;
    return el("div", { class: "follow-ups", role: "group", "aria-label": "Follow-up questions" },
      questions.map(function (question) {
        return el("button", { type: "button", class: "follow-up", text: question,
          onclick: function () { onAsk(question); } });
      }));
  }

  /**
   * Return the body of an assistant message from its parts, in order. view: {loadedImages,
   * openCalls, openThinking} keep what the user opened across re-renders; `streaming` when the
   * reply is still being written (its last text's open bold or code shows as such, not as raw
   * markers); `grounding` the stored reply's (message.grounding), shown above its sources.
   */
  function assistantBody(parts, view, streaming, grounding) {
    view = view || {};
    var body = el("div", { class: "message-body" });
    var results = {};
    parts.forEach(function (part) { if (part.type === "tool-result") results[part.callId] = part; });
    var called = {}, sizes = Cards.partSizes(parts);
    var prefix = "reply-" + (++replies), numbered = LookoutCitations.numberedSources(parts);
    parts.forEach(function (part, index) {
      if (part.type === "reasoning" && part.text) {
        // Keyed by place and opening words: stable while it streams, apart between replies.
        var key = index + ":" + part.text.slice(0, 32);
        body.appendChild(thinkingSection(part, key, view, streaming && index === parts.length - 1));
      } else if (part.type === "text" && part.text) {
        var text = el("div", { class: "markdown" });
        var written = streaming && index === parts.length - 1 ? LookoutMarkdown.settle(part.text) : part.text;
        text.appendChild(LookoutMarkdown.render(written, view.loadedImages,
          LookoutCitations.citer(part, numbered, prefix)));
        body.appendChild(text);
      } else if (part.type === "tool-call") {
        called[part.id] = true;
        body.appendChild(toolCard(part, results[part.id], view.openCalls, sizes));
      } else if (part.type === "tool-result" && !called[part.callId]) {
        body.appendChild(toolCard({ id: part.callId, name: part.name, input: {} }, part, view.openCalls, sizes));
      }
    });
    var line = groundingLine(grounding);
    if (line) body.appendChild(line);
    var sources = sourcesRow(parts, prefix);
    if (sources) body.appendChild(sources);
    return body;
  }

  /** Return the body of a user message: its text as typed, and its attachments as chips. */
  function userBody(parts) {
    var body = el("div", { class: "message-body" });
    parts.forEach(function (part) {
      if (part.type === "text") body.appendChild(el("p", { class: "user-text", text: part.text }));
      if (part.type === "attachment") {
        body.appendChild(el("span", { class: "file-chip" }, [LookoutIcons.icon("paperclip"), part.filename]));
      }
    });
    return body;
  }

  root.LookoutChatParts = {
    assistantBody: assistantBody, userBody: userBody, toolCard: toolCard, sourcesRow: sourcesRow,
    inputSummary: inputSummary, followUpButtons: followUpButtons,
  };
})(window);
