/* Copy buttons: copy a text to the clipboard and say so on the button for a moment.
 *
 * navigator.clipboard needs a secure context (HTTPS or localhost); on plain HTTP elsewhere the
 * text is copied through a selected, off-screen text box instead.
 */
(function (root) {
  "use strict";

  var SAID_MS = 1600;

  function copyBySelection(text) {
    var box = document.createElement("textarea");
    box.value = text;
    box.setAttribute("readonly", "");
    box.className = "visually-hidden";
    document.body.appendChild(box);
    box.select();
    var done = false;
    try { done = document.execCommand("copy"); } catch (e) { done = false; }
    box.remove();
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  /** Copy text; resolve when it is on the clipboard. */
  function copy(text) {
    if (navigator.clipboard && root.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return copyBySelection(text); });
    }
    return copyBySelection(text);
  }

  /**
   * Return a button copying textOf() when clicked; label is its visible text, name its
   * accessible name. It shows "Copied" (or "Copy failed") for a moment after a click.
   */
  function button(label, name, textOf, className) {
    var node = document.createElement("button");
    node.type = "button";
    node.className = className || "copy";
    node.setAttribute("aria-label", name);
    var text = document.createElement("span");
    text.textContent = label;
    node.appendChild(LookoutIcons.icon("copy"));
    node.appendChild(text);
    var timer = null;
    node.addEventListener("click", function () {
      copy(textOf()).then(function () { return "Copied"; }, function () { return "Copy failed"; })
        .then(function (said) {
          text.textContent = said;
          node.setAttribute("data-copied", said === "Copied" ? "true" : "false");
          clearTimeout(timer);
          timer = setTimeout(function () {
            text.textContent = label;
            node.removeAttribute("data-copied");
          }, SAID_MS);
        });
    });
    return node;
  }

  root.LookoutClipboard = { copy: copy, button: button };
})(window);
