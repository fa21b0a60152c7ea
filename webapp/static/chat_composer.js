/* The chat page's composer: the message box (Enter sends, Shift+Enter starts a new line, and what
 * is being written is a draft of the conversation it is written in, kept through a reload and
 * signing in again, in this tab only), and Send and Stop in turn, handing the keyboard's focus to
 * the box as either hides. */
(function (root) {
  "use strict";

  var DRAFT_PREFIX = "lookout.draft:";  // + the conversation's id, or nothing for a new chat
  var OLD_DRAFT_KEY = "lookout.draft";  // one draft for the whole tab, before drafts had places

  function stored(place) {
    try { return sessionStorage.getItem(DRAFT_PREFIX + place) || ""; } catch (e) { return ""; }
  }

  function store(place, text) {
    try {
      if (text) sessionStorage.setItem(DRAFT_PREFIX + place, text);
      else sessionStorage.removeItem(DRAFT_PREFIX + place);
    } catch (e) { /* storage off */ }
  }

  /**
   * Return {draw(running, noModel), focus(), showDraftOf(place), adopt(place)}; options: {form,
   * input, send, stop, uploads, place (the conversation's id, "" for a new chat), showError(text),
   * onSend(body) resolving to whether the turn started, onStop()}. draw shows Send, or Stop while
   * a reply is written, and enables Send when there is something to send. showDraftOf(place)
   * shows that conversation's draft in the box (the one in the box stays with its own); adopt
   * (place) says the new chat became that conversation, so its draft goes with it.
   */
  function create(options) {
    var input = options.input, send = options.send, stop = options.stop;
    var running = false, noModel = true, sending = false;
    var place = options.place || "";

    function keepDraft() { store(place, input.value); }

    function fit() {
      input.style.height = "auto";
      input.style.height = Math.min(input.scrollHeight, 240) + "px";
    }

    function showDraftOf(next) {
      next = next || "";
      if (next === place) return;
      keepDraft();
      place = next;
      input.value = stored(place);
      input.style.height = "";
      if (input.value) fit();
      draw();
    }

    function adopt(next) {
      store(place, "");
      place = next || "";
      keepDraft();
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
      fit();
    });
    stop.addEventListener("click", function () {
      input.focus();  // Stop hides once the turn ends; the next message is written here
      options.onStop();
    });
    try {
      var old = sessionStorage.getItem(OLD_DRAFT_KEY);
      sessionStorage.removeItem(OLD_DRAFT_KEY);
      if (old && !stored(place)) store(place, old);
    } catch (e) { /* storage off */ }
    input.value = stored(place);
    if (input.value) fit();

    return {
      draw: draw, focus: function () { input.focus(); }, showDraftOf: showDraftOf, adopt: adopt,
    };
  }

  root.LookoutChatComposer = { create: create };
})(window);
