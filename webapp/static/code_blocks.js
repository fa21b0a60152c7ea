/* A reply's code block: its language as a label, a Copy button, and syntax highlighting by the
 * vendored highlight.js (vendor/highlight/) when the page loaded it and knows the language.
 *
 * Only a named language is highlighted (guessing one is slow and often wrong); highlight.js
 * escapes the text it marks up, so model text still never becomes markup.
 */
(function (root) {
  "use strict";

  // Names models often write that highlight.js spells otherwise.
  var ALIASES = { py: "python", js: "javascript", ts: "typescript", sh: "bash", zsh: "bash",
    shell: "bash", console: "bash", yml: "yaml", html: "xml", "c++": "cpp", rs: "rust" };

  // A streaming reply is drawn again on every frame; its finished blocks do not change, so
  // their highlighting is kept rather than redone (the last few, by language and text).
  var KEPT = 16;
  var kept = new Map();

  function highlighted(language, text) {
    var key = language + "\n" + text;
    if (!kept.has(key)) {
      if (kept.size >= KEPT) kept.delete(kept.keys().next().value);
      kept.set(key, root.hljs.highlight(text, { language: language, ignoreIllegals: true }).value);
    }
    return kept.get(key);
  }

  function knownLanguage(language) {
    var hljs = root.hljs, name = (language || "").toLowerCase();
    name = ALIASES[name] || name;
    return hljs && name && hljs.getLanguage(name) ? name : null;
  }

  /** Return the element of a code block: header (label, Copy) and the highlighted code. */
  function block(language, text) {
    var wrap = document.createElement("div");
    wrap.className = "code-block";
    var head = document.createElement("div");
    head.className = "code-head";
    var label = document.createElement("span");
    label.className = "code-language";
    label.textContent = language || "text";
    head.appendChild(label);
    head.appendChild(LookoutClipboard.button("Copy", "Copy the " + (language || "text") + " code",
      function () { return text; }, "copy copy-code"));
    var pre = document.createElement("pre");
    pre.className = "md-code";
    if (language) pre.setAttribute("data-language", language);
    var code = document.createElement("code");
    var known = knownLanguage(language);
    if (known) {
      code.className = "hljs language-" + known;
      code.innerHTML = highlighted(known, text);
    } else {
      code.textContent = text;
    }
    pre.appendChild(code);
    wrap.appendChild(head);
    wrap.appendChild(pre);
    return wrap;
  }

  root.LookoutCodeBlocks = { block: block };
})(window);
