/* The cards of the tools people know by what they do: a web search ("Searched the web", the
 * query, the result count and the engine that answered) and reading a page ("Reading
 * example.com — part 1 of 3", its title).
 *
 * readingPart(output, sizes) and searchOutcome(output) are plain functions, usable from Node
 * (require) for tests; the cards themselves need the page (window.LookoutToolCards).
 */
(function (root) {
  "use strict";

  var SUMMARY_CHARS = 100;

  function shorten(text, limit) {
    text = String(text).replace(/\s+/g, " ").trim();
    return text.length > limit ? text.slice(0, limit - 1) + "…" : text;
  }

  function hostOf(url) {
    try { return new URL(url).host || String(url); } catch (e) { return String(url); }
  }

  /**
   * Return {part, of} for a web_fetch output ({offset, nextOffset, totalCharacters, content}),
   * or {part: null, from} for a last part whose part size nothing tells. `size` is the length of
   * the longest part of the same page the reply read, if any. A part ends at a line break in
   * the second half of the longest size, so the numbers are the nearest whole parts.
   */
  function readingPart(output, size) {
    var offset = output.offset || 0, total = output.totalCharacters;
    var next = typeof output.nextOffset === "number" ? output.nextOffset : total;
    if (offset === 0 && next >= total) return { part: 1, of: 1 };
    if (next < total || offset === 0) size = Math.max(size || 0, next - offset);
    if (!size) return { part: null, from: offset };
    var part = Math.round(offset / size) + 1;
    return { part: part, of: part + Math.max(next < total ? 1 : 0, Math.round((total - next) / size)) };
  }

  function outcomeOf(result, outcomes, running) {
    if (!result) return running;
    return result.outcome === "ok" ? outcomes.ok : outcomes[result.outcome] || result.outcome;
  }

  /**
   * Return what a web_search output says: "3 results from Brave", and after a fallback "3
   * results from DuckDuckGo, the fallback: Brave's rate limit was reached." (outputs stored
   * before engines were named say only the count).
   */
  function searchOutcome(output) {
    var count = output && Array.isArray(output.results) ? output.results.length : 0;
    var text = count === 1 ? "1 result" : count + " results";
    if (!output || typeof output.engineName !== "string") return text;
    text += " from " + output.engineName;
    if (typeof output.fallbackFrom === "string") {
      text += ", the fallback";
      if (typeof output.fallbackReason === "string") text += ": " + output.fallbackReason;
    }
    return text;
  }

  /** Return the pieces of a web_search card: what was searched and how many results came. */
  function searchCard(call, result, outcomes, summary) {
    var el = LookoutForms.element;
    var query = call.input && typeof call.input.query === "string" ? call.input.query : summary;
    var outcome;
    if (result && result.outcome === "ok") {
      outcome = searchOutcome(result.output);
    } else {
      outcome = result && result.error ? result.error : outcomeOf(result, outcomes, "Searching…");
    }
    return [
      el("span", { class: "tool-name", text: "Searched the web" }),
      el("span", { class: "tool-summary", text: "“" + shorten(query, SUMMARY_CHARS) + "”" }),
      el("span", { class: "tool-outcome", text: outcome }),
    ];
  }

  /**
   * Return the pieces of a web_fetch card: which site, which part, the page's title. `size` is
   * a part's length seen in another read of the same page in this reply, if any.
   */
  function readingCard(call, result, outcomes, size) {
    var el = LookoutForms.element;
    var output = result && result.outcome === "ok" && result.output ? result.output : null;
    var url = (output && output.url) || (call.input && call.input.url) || "";
    var heading = "Reading " + hostOf(url);
    if (output && typeof output.totalCharacters === "number") {
      var at = readingPart(output, size);
      if (at.part === null) heading += " — the rest, from character " + at.from.toLocaleString("en");
      else if (at.of > 1) heading += " — part " + at.part + " of " + at.of;
    }
    var title = output && output.title ? output.title : shorten(url, SUMMARY_CHARS);
    var pieces = [
      el("span", { class: "tool-name", text: heading }),
      el("span", { class: "tool-summary", title: url, text: shorten(title, SUMMARY_CHARS) }),
      el("span", { class: "tool-outcome", text: outcomeOf(result, outcomes, outcomes.running) }),
    ];
    // A page cut at the size limit says so on its card, as it does at the head of its text.
    if (output && typeof output.note === "string") {
      pieces.push(el("span", { class: "tool-note", text: output.note }));
    }
    return pieces;
  }

  /** Return the longest part of each page read in these parts, by URL, for readingCard. */
  function partSizes(parts) {
    var sizes = {};
    parts.forEach(function (part) {
      var output = part.type === "tool-result" && part.name === "web_fetch" ? part.output : null;
      if (!output || typeof output.nextOffset !== "number") return;
      sizes[output.url] = Math.max(sizes[output.url] || 0, output.nextOffset - (output.offset || 0));
    });
    return sizes;
  }

  var api = { readingPart: readingPart, searchOutcome: searchOutcome };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    api.searchCard = searchCard;
    api.readingCard = readingCard;
    api.partSizes = partSizes;
    api.hostOf = hostOf;
    api.shorten = shorten;
    api.SUMMARY_CHARS = SUMMARY_CHARS;
    root.LookoutToolCards = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
