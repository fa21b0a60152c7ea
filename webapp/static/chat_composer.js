/* The chat page's composer: the message box (Enter sends, Shift+Enter starts a new line, and what
 * is being written outlives a reload and signing in again, in this tab only), and Send and Stop
 * in turn, handing the keyboard's focus to the box as either hides. */
(function (root) {
  "use strict";

  var DRAFT_KEY = "lookout.draft";

  /**
   * Return {draw(running, noModel), focus()}; options: {form, input, send, stop, uploads,
   * showError(text), onSend(body) resolving to whether the turn started, onStop()}. draw shows
   * Send, or Stop while a reply is written, and enables Send when there is something to send.
   */
  function create(options) {
    var input = options.input, send = options.send, stop = options.stop;
    var running = false, noModel = true, sending = false;

    function keepDraft() {
      try { sessionStorage.setItem(DRAFT_KEY, input.value); } catch (e) { /* storage off */ }
    }

    function draw(isRunning, hasNoModel) {
      if (arguments.length) { running = isRunning; noModel = hasNoModel; }
      // Hiding the focused button drops the focus to the page at once; someone on Stop when the
      // reply ends keeps their place in the box instead.
      var onStop = document.activeElement === stop;
      send.hidden = running;
      stop.hidden = !running;
      if (onStop && !running) input.focus();
      send.disabled = noModel || options.uploads.busy() || sending || !input.value.trim();
    }

    options.form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (running) return;
      if (document.activeElement === send) input.focus();  // Send hides while the reply runs
      var content = input.value;
      if (!content.trim()) {
        options.showError(options.uploads.count() ? "Write a message to go with the file." : "");
        return;
      }
      if (send.disabled) return;
      sending = true;
      draw();
      options.onSend({ content: content, attachments: options.uploads.ids() }).then(function (ok) {
        sending = false;
        if (ok) {
          input.value = "";
          input.style.height = "";
          keepDraft();
          options.uploads.clear();
        }
        draw();
      });
    });

    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        options.form.requestSubmit();
      }
    });
    input.addEventListener("input", function () {
      keepDraft();
      draw();
      input.style.height = "auto";
      input.style.height = Math.min(input.scrollHeight, 240) + "px";
    });
    stop.addEventListener("click", function () {
      input.focus();  // Stop hides once the turn ends; the next message is written here
      options.onStop();
    });
    try { input.value = sessionStorage.getItem(DRAFT_KEY) || ""; } catch (e) { /* storage off */ }

    return { draw: draw, focus: function () { input.focus(); } };
  }

  root.LookoutChatComposer = { create: create };
})(window);
