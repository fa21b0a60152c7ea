/* A small, safe Markdown renderer for assistant text: model text never becomes HTML.
 *
 * parse(text) returns a tree of plain objects (blocks: paragraph, heading, code, list, quote,
 * rule, table; inlines: text, code, strong, em, del, link, image, break, cite); render(text) builds DOM
 * nodes from it with createElement and textContent only, so "<script>" or "<img onerror>" in the
 * text stay text. A link gets an href only when LookoutLinks.isPresentableUrl (the rule shared
 * with Python) accepts its URL; an image never loads by itself: it is a button showing the full
 * URL, replaced by the <img> when the user clicks it (the spec's "no silent exfiltration").
 *
 * A citation marker ("[3]", "[1, 2]", "[1-3]"; never in code, never a link's label) is a cite
 * node with its numbers; render(text, loaded, cite) draws it with cite(numbers, text), or as
 * the text it was without one.
 *
 * A page that loads code_blocks.js gets code blocks with a label, a Copy button and highlighting.
 *
 * Usable as a classic <script> after links.js (window.LookoutMarkdown) and from Node (parse only).
 */
(function (root) {
  "use strict";

  var links = typeof module === "object" && module.exports ? require("./links.js") : root.LookoutLinks;
  var FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
  var HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
  var RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
  var BULLET = /^ {0,3}([-*+])\s+(.*)$/;
  var ORDERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
  var QUOTE = /^ {0,3}>\s?(.*)$/;
  var TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
  var ESCAPABLE = "\\`*_{}[]()#+-.!|~<>\"'";
  var BARE_URL = /^https?:\/\/[^\s<>"]+/i;
  // The markers tools/claims/markers.py checks: a list of numbers, or a range of at most ten;
  // followed by "(" or ":" it is a link, not a marker.
  var CITE = /^\[(?:(\d{1,9}(?:[ \t]{0,3}[,;][ \t]{0,3}\d{1,9}){0,19})|(\d{1,9})[ \t]{0,3}[-\u2013\u2014][ \t]{0,3}(\d{1,9}))\](?![(:])/;
  var MAX_RANGE = 10;

  /** Return the numbers a marker names, each once; [] for a range that is not one. */
  function citeNumbers(match) {
    var numbers = [];
    if (match[1]) {
      match[1].split(/[,;]/).forEach(function (n) {
        n = parseInt(n, 10);
        if (numbers.indexOf(n) < 0) numbers.push(n);
      });
      return numbers;
    }
    var first = parseInt(match[2], 10), last = parseInt(match[3], 10);
    if (first >= last || last - first >= MAX_RANGE) return [];
    for (var n = first; n <= last; n++) numbers.push(n);
    return numbers;
  }

  function isBlank(line) { return /^\s*$/.test(line); }

  function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || BULLET.test(line) ||
      ORDERED.test(line) || QUOTE.test(line);
  }

  function closesFence(line, fence) {
    var text = line.trim();
    return text.length >= fence.length && text.split("").every(function (c) { return c === fence[0]; });
  }

  // A bare URL ends before trailing punctuation, and before a ")" it did not open itself.
  function trimUrl(url) {
    for (;;) {
      var last = url[url.length - 1];
      if (".,:;!?'\"]".indexOf(last) >= 0) { url = url.slice(0, -1); continue; }
      if (last === ")" && (url.match(/\(/g) || []).length < (url.match(/\)/g) || []).length) {
        url = url.slice(0, -1); continue;
      }
      return url;
    }
  }

  function splitRow(line) {
    var cells = [], current = "", inCode = false;
    var text = line.trim().replace(/^\|/, "");
    for (var i = 0; i < text.length; i++) {
      var ch = text[i];
      if (ch === "\\" && text[i + 1] === "|") { current += "|"; i++; continue; }
      if (ch === "`") inCode = !inCode;
      if (ch === "|" && !inCode) { cells.push(current.trim()); current = ""; continue; }
      current += ch;
    }
    if (current.trim() || !/\|\s*$/.test(text)) cells.push(current.trim());
    return cells;
  }

  /** Return the block tree of a Markdown text. */
  function parse(text) {
    var lines = String(text === undefined || text === null ? "" : text)
      .replace(/\r\n?/g, "\n").split("\n");
    return parseBlocks(lines);
  }

  function parseBlocks(lines) {
    var blocks = [], i = 0, match;
    while (i < lines.length) {
      var line = lines[i];
      if (isBlank(line)) { i++; continue; }
      if ((match = FENCE.exec(line))) {
        var fence = match[1], body = [];
        i++;
        while (i < lines.length && !closesFence(lines[i], fence)) { body.push(lines[i]); i++; }
        i++;  // the closing fence, or past the end when the fence is still open (streaming)
        blocks.push({ type: "code", language: match[2] || "", text: body.join("\n") });
      } else if ((match = HEADING.exec(line))) {
        blocks.push({ type: "heading", level: match[1].length, children: parseInline(match[2] || "") });
        i++;
      } else if (RULE.test(line)) {
        blocks.push({ type: "rule" });
        i++;
      } else if (QUOTE.test(line)) {
        var quoted = [];
        while (i < lines.length && (match = QUOTE.exec(lines[i]))) { quoted.push(match[1]); i++; }
        blocks.push({ type: "quote", children: parseBlocks(quoted) });
      } else if (BULLET.test(line) || ORDERED.test(line)) {
        i = parseList(lines, i, blocks);
      } else if (line.indexOf("|") >= 0 && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]) &&
          lines[i + 1].indexOf("-") >= 0) {
        var header = splitRow(line), rows = [];
        i += 2;
        while (i < lines.length && !isBlank(lines[i]) && lines[i].indexOf("|") >= 0) {
          rows.push(splitRow(lines[i]).slice(0, header.length).map(parseInline));
          i++;
        }
        blocks.push({ type: "table", header: header.map(parseInline), rows: rows });
      } else {
        var paragraph = [];
        while (i < lines.length && !isBlank(lines[i]) && (!paragraph.length || !startsBlock(lines[i]))) {
          paragraph.push(lines[i].trim());
          i++;
        }
        blocks.push({ type: "paragraph", children: parseInline(paragraph.join("\n")) });
      }
    }
    return blocks;
  }

  function indentOf(line) { return /^ */.exec(line)[0].length; }

  // A line indented at least as far as its item's text belongs to the item (a nested list,
  // a second paragraph); a marker indented less starts the next item.
  function parseList(lines, i, blocks) {
    var ordered = ORDERED.test(lines[i]);
    var pattern = ordered ? ORDERED : BULLET;
    var list = { type: "list", ordered: ordered, start: ordered ? Number(ORDERED.exec(lines[i])[1]) : 1,
      items: [] };
    var item = null, width = 0, match;
    while (i < lines.length) {
      var line = lines[i];
      if (item && !isBlank(line) && indentOf(line) >= width) {
        item.push(line.slice(width));
      } else if ((match = pattern.exec(line))) {
        item = [match[2]];
        width = line.length - match[2].length;
        list.items.push(item);
      } else if (isBlank(line)) {
        var next = lines[i + 1];
        if (next === undefined || !(pattern.test(next) || (!isBlank(next) && indentOf(next) >= width))) break;
        item.push("");
      } else if (!startsBlock(line)) {
        item.push(line.trim());  // a lazy continuation of the item's paragraph
      } else {
        break;
      }
      i++;
    }
    list.items = list.items.map(parseBlocks);
    blocks.push(list);
    return i;
  }

  // Inline parsing ------------------------------------------------------------------------------

  function findClosing(text, from, marker) {
    var at = text.indexOf(marker, from);
    while (at > 0 && text[at - 1] === "\\") at = text.indexOf(marker, at + 1);
    return at;
  }

  // The end of a "[...]" label starting at text[start] === "[", nesting brackets; -1 if open.
  function labelEnd(text, start) {
    var depth = 0;
    for (var i = start; i < text.length; i++) {
      if (text[i] === "\\") { i++; continue; }
      if (text[i] === "[") depth++;
      if (text[i] === "]" && --depth === 0) return i;
    }
    return -1;
  }

  // Parses "(url "title")" at text[start] === "("; returns {url, end} or null.
  function destination(text, start) {
    if (text[start] !== "(") return null;
    var depth = 0;
    for (var i = start; i < text.length; i++) {
      if (text[i] === "\\") { i++; continue; }
      if (text[i] === "(") depth++;
      if (text[i] === ")" && --depth === 0) {
        var inside = text.slice(start + 1, i).trim();
        var url = inside.replace(/\s+("[^"]*"|'[^']*')$/, "").trim();
        if (url[0] === "<" && url[url.length - 1] === ">") url = url.slice(1, -1);
        return { url: url, end: i + 1 };
      }
    }
    return null;
  }

  function link(children, url) {
    return { type: "link", href: links.isPresentableUrl(url) ? url : null, url: url, children: children };
  }

  /** Return the inline nodes of a text span. */
  function parseInline(text) {
    var nodes = [], buffer = "", i = 0;
    function flush() { if (buffer) { nodes.push({ type: "text", text: buffer }); buffer = ""; } }
    function emit(node, end) { flush(); nodes.push(node); i = end; }
    while (i < text.length) {
      var ch = text[i], rest = text.slice(i), match, end;
      if (ch === "\\" && i + 1 < text.length && ESCAPABLE.indexOf(text[i + 1]) >= 0) {
        buffer += text[i + 1]; i += 2; continue;
      }
      if (ch === "\n") { emit({ type: "break" }, i + 1); continue; }
      if (ch === "`") {
        var ticks = /^`+/.exec(rest)[0];
        end = text.indexOf(ticks, i + ticks.length);
        if (end > 0) {
          emit({ type: "code", text: text.slice(i + ticks.length, end).replace(/^ (.*) $/, "$1") },
            end + ticks.length);
          continue;
        }
        buffer += ticks; i += ticks.length; continue;
      }
      if ((ch === "!" && text[i + 1] === "[") || ch === "[") {
        var open = ch === "!" ? i + 1 : i, close = labelEnd(text, open);
        var target = close > 0 ? destination(text, close + 1) : null;
        if (target) {
          var label = text.slice(open + 1, close);
          if (ch === "!") {
            emit(links.isPresentableUrl(target.url)
              ? { type: "image", src: target.url, alt: label }
              : { type: "text", text: label ? "[image: " + label + "]" : "[image]" }, target.end);
          } else {
            emit(link(parseInline(label), target.url), target.end);
          }
          continue;
        }
        var numbers = ch === "[" && (match = CITE.exec(rest)) ? citeNumbers(match) : [];
        if (numbers.length) {
          emit({ type: "cite", numbers: numbers, text: match[0] }, i + match[0].length);
          continue;
        }
      }
      if (ch === "<" && (match = /^<(https?:\/\/[^\s<>]+)>/i.exec(rest))) {
        emit(link([{ type: "text", text: match[1] }], match[1]), i + match[0].length);
        continue;
      }
      if ((ch === "h" || ch === "H") && !/[A-Za-z0-9]$/.test(buffer) && (match = BARE_URL.exec(rest))) {
        var plain = trimUrl(match[0]);
        emit(link([{ type: "text", text: plain }], plain), i + plain.length);
        continue;
      }
      var marker = rest.slice(0, 2) === "**" || rest.slice(0, 2) === "__" || rest.slice(0, 2) === "~~"
        ? rest.slice(0, 2) : (ch === "*" || ch === "_" ? ch : "");
      if (marker && rest.length > marker.length && !/\s/.test(rest[marker.length]) &&
          !(ch === "_" && /[A-Za-z0-9]$/.test(buffer))) {
        end = findClosing(text, i + marker.length, marker);
        if (end > i + marker.length && !/\s/.test(text[end - 1]) &&
            !(ch === "_" && /[A-Za-z0-9]/.test(text[end + marker.length] || ""))) {
          var type = marker === "~~" ? "del" : marker.length === 2 ? "strong" : "em";
          emit({ type: type, children: parseInline(text.slice(i + marker.length, end)) },
            end + marker.length);
          continue;
        }
      }
      buffer += ch;
      i++;
    }
    flush();
    return nodes;
  }

  /**
   * Return a text still being written with the inline markers of its last block closed, so that
   * "the **dai" shows as bold while it streams instead of as raw asterisks; a marker with
   * nothing after it yet is left out, and a block holding a code fence is left as it is.
   */
  function settle(text) {
    var start = text.lastIndexOf("\n\n") + 1;
    var block = text.slice(start);
    if (/^ {0,3}(```|~~~)/m.test(block)) return text;
    block = block.replace(/(^|\s)(\*\*|__|~~)$/, "$1");
    var open = [], i = 0;
    while (i < block.length) {
      if (block[i] === "\\") { i += 2; continue; }
      if (block[i] === "`") {
        var ticks = /^`+/.exec(block.slice(i))[0], end = block.indexOf(ticks, i + ticks.length);
        if (end < 0) return text.slice(0, start) + block + ticks + open.reverse().join("");
        i = end + ticks.length;
        continue;
      }
      var pair = block.slice(i, i + 2);
      if (pair === "**" || pair === "__" || pair === "~~") {
        if (open[open.length - 1] === pair) open.pop();
        else if (i + 2 < block.length && !/\s/.test(block[i + 2])) open.push(pair);
        i += 2;
        continue;
      }
      i++;
    }
    return text.slice(0, start) + block + open.reverse().join("");
  }

  // Rendering (browsers only) -------------------------------------------------------------------

  var HEADING_TAG = { 1: "h3", 2: "h4", 3: "h5", 4: "h6", 5: "h6", 6: "h6" };

  function make(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function appendAll(parent, nodes, render) {
    nodes.forEach(function (node) { parent.appendChild(render(node)); });
    return parent;
  }

  // An image shows its full URL and loads only when clicked; `loaded` remembers the clicks.
  function imagePlaceholder(node, loaded) {
    if (loaded && loaded.has(node.src)) return loadedImage(node);
    var button = make("button", "md-image");
    button.type = "button";
    button.setAttribute("data-src", node.src);
    button.appendChild(make("span", "md-image-label", node.alt ? "Load image “" + node.alt + "” from" : "Load image from"));
    button.appendChild(document.createTextNode(" "));
    button.appendChild(make("span", "md-image-url", node.src));
    button.addEventListener("click", function () {
      if (loaded) loaded.add(node.src);
      button.replaceWith(loadedImage(node));
    });
    return button;
  }

  function loadedImage(node) {
    var image = make("img", "md-loaded-image");
    image.alt = node.alt || "";
    image.referrerPolicy = "no-referrer";
    image.src = node.src;
    return image;
  }

  // ctx: {loaded: the Set of clicked images, cite: draws a marker}.
  function renderInline(node, ctx) {
    var recurse = function (child) { return renderInline(child, ctx); };
    switch (node.type) {
      case "text": return document.createTextNode(node.text);
      case "break": return make("br");
      case "code": return make("code", "", node.text);
      case "strong": case "em": case "del":
        return appendAll(make(node.type), node.children, recurse);
      case "image": return imagePlaceholder(node, ctx.loaded);
      case "cite": return ctx.cite ? ctx.cite(node.numbers, node.text) : document.createTextNode(node.text);
      case "link":
        if (!node.href) return appendAll(make("span", "md-unlinked"), node.children, recurse);
        var anchor = appendAll(make("a"), node.children, recurse);
        anchor.href = node.href;
        anchor.rel = "noopener noreferrer nofollow";
        anchor.target = "_blank";
        return anchor;
      default: return document.createTextNode("");
    }
  }

  function renderBlock(node, ctx) {
    var inline = function (child) { return renderInline(child, ctx); };
    var block = function (child) { return renderBlock(child, ctx); };
    switch (node.type) {
      case "paragraph": return appendAll(make("p"), node.children, inline);
      case "heading": return appendAll(make(HEADING_TAG[node.level], "md-heading"), node.children, inline);
      case "rule": return make("hr");
      case "quote": return appendAll(make("blockquote"), node.children, block);
      case "code":
        if (root.LookoutCodeBlocks) return root.LookoutCodeBlocks.block(node.language, node.text);
        var pre = make("pre", "md-code");
        var code = make("code", "", node.text);
        if (node.language) pre.setAttribute("data-language", node.language);
        pre.appendChild(code);
        return pre;
      case "list":
        var list = make(node.ordered ? "ol" : "ul");
        if (node.ordered && node.start !== 1) list.start = node.start;
        node.items.forEach(function (blocks) {
          var item = make("li");
          // An item of one paragraph (and lists nested under it) renders its text without a <p>,
          // as tight lists do.
          var tight = blocks.length > 0 && blocks[0].type === "paragraph" &&
            blocks.slice(1).every(function (child) { return child.type === "list"; });
          if (tight) {
            appendAll(item, blocks[0].children, inline);
            appendAll(item, blocks.slice(1), block);
          } else {
            appendAll(item, blocks, block);
          }
          list.appendChild(item);
        });
        return list;
      case "table":
        var wrap = make("div", "md-table"), table = make("table"), head = make("tr");
        node.header.forEach(function (cell) { head.appendChild(appendAll(make("th"), cell, inline)); });
        table.appendChild(make("thead")).appendChild(head);
        var body = table.appendChild(make("tbody"));
        node.rows.forEach(function (row) {
          var tr = body.appendChild(make("tr"));
          row.forEach(function (cell) { tr.appendChild(appendAll(make("td"), cell, inline)); });
        });
        wrap.appendChild(table);
        return wrap;
      default: return document.createTextNode("");
    }
  }

  /**
   * Return a DocumentFragment of the text rendered; `loaded` (a Set) keeps clicked images;
   * `cite(numbers, text)`, when given, returns the node of a citation marker.
   */
  function render(text, loaded, cite) {
    var fragment = document.createDocumentFragment();
    var ctx = { loaded: loaded, cite: cite };
    parse(text).forEach(function (node) { fragment.appendChild(renderBlock(node, ctx)); });
    return fragment;
  }

  var api = { parse: parse, parseInline: parseInline, settle: settle, render: render };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.LookoutMarkdown = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
