/* The chat page: one conversation's shown branch, the composer (chat_composer.js), and a live reply
 * while it streams.
 *
 * The conversation comes from GET /api/conversations/<id> (every branch); LookoutChatTree picks
 * the path to show. A running turn is followed over its events and drawn from them
 * (LookoutChatLive); when it ends the conversation is read again, so what stays on screen is
 * what was stored. The open conversation is in the address (#c=<id>), so a reload comes back to it.
 */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;
  var Parts = LookoutChatParts;
  var page = document.getElementById("chat");
  var $ = function (id) { return document.getElementById(id); };
  var ui = {
    log: $("chat-log"), messages: $("messages"), empty: $("chat-empty"), title: $("chat-title"),
    form: $("composer"), input: $("message-input"), picker: $("model-picker"), send: $("send"),
    stop: $("stop"), attach: $("attach"), file: $("file-input"), chips: $("attachment-chips"),
    error: $("chat-error"), sidebar: $("chat-sidebar"), toggle: $("toggle-sidebar"),
  };
  var state = {
    models: null, conversation: null, chosen: {}, live: null, follower: null, liveBody: null,
    failures: {}, streamed: {}, editing: null, frame: null, loads: 0,
    view: { loadedImages: new Set(), openCalls: new Set(), openThinking: new Set() },
  };

  function showError(text) { ui.error.textContent = text || ""; ui.error.hidden = !text; }

  var sidebar = LookoutChatSidebar.create({
    list: $("conversation-list"), search: $("conversation-search"), status: $("sidebar-status"),
    onError: showError,
    onRenamed: function (c) {
      if (state.conversation && state.conversation.id === c.id) {
        state.conversation.title = c.title;
        drawTitle();
      }
    },
    onDeleted: function (id) {
      if (state.conversation && state.conversation.id === id) startNewChat();
      else drawEmpty();
    },
  });

  var uploads = LookoutChatUploads.create({
    chips: ui.chips, input: ui.file, button: ui.attach, dropTarget: ui.form, showError: showError,
    onChange: function () { drawComposer(); },
  });

  var composer = LookoutChatComposer.create({
    form: ui.form, input: ui.input, send: ui.send, stop: ui.stop, uploads: uploads,
    place: addressedId(), showError: showError,
    onSend: function (body) {
      var parent = leafId();
      if (parent) body.parentMessageId = parent;
      var generation = tools.generation(models.current());  // the Tools menu's choice
      if (generation) body.generation = generation;
      return startTurn(body);
    },
    onStop: function () {
      var live = state.live;
      if (!live) return;
      ui.stop.disabled = true;
      api.request("POST", "/api/turns/" + live.turnId + "/cancel").then(function (result) {
        ui.stop.disabled = false;
        if (!result.ok && result.status !== 409) showError(api.errorMessage(result));
      });
    },
  });

  // Models and tools (chat_models.js, chat_tools.js) -------------------------------------------

  var models = LookoutChatModels.create({
    picker: ui.picker, notice: $("model-notice"), showError: showError,
    providersUrl: page.getAttribute("data-admin") === "true" ? page.getAttribute("data-providers-url") : null,
    onChange: function () { state.models = models.list(); drawComposer(); },
  });
  var tools = LookoutChatTools.create({
    line: $("composer-tools"), menu: $("tools-menu"),
    settingsUrl: page.getAttribute("data-settings-url"),
  });

  // Drawing -----------------------------------------------------------------------------------

  var pageTitle = document.title;

  /** The conversation's title in the heading and in the browser's tab and history. */
  function drawTitle() {
    var title = state.conversation ? LookoutChatSidebar.titleOf(state.conversation) : "New chat";
    ui.title.textContent = title;
    document.title = state.conversation ? title + " · " + page.getAttribute("data-app-name")
      : pageTitle;
  }

  function drawEmpty() {
    ui.empty.textContent = "";
    var hasMessages = state.conversation && state.conversation.messages.length;
    ui.empty.hidden = !!hasMessages;
    if (hasMessages) return;
    if (state.models && !state.models.length) {
      var notice = el("div", { class: "notice", role: "status" }, [
        el("p", { text: "No model is set up yet, so Lookout cannot answer. An administrator " +
          "needs to add a model provider." }),
      ]);
      if (page.getAttribute("data-admin") === "true") {
        notice.appendChild(el("p", {}, [el("a", { href: page.getAttribute("data-providers-url"),
          text: "Add a provider in Admin → Providers" }), "."]));
      }
      ui.empty.appendChild(notice);
    } else if (!sidebar.conversations().length && !state.conversation) {
      ui.empty.appendChild(el("div", { class: "welcome" }, [
        el("h2", { text: "Welcome, " + page.getAttribute("data-user") + "!" }),
        tools.welcome(),
      ]));
    } else {
      ui.empty.appendChild(el("p", { class: "muted", text: "Write a message below to start." }));
    }
  }

  function drawComposer() {
    var noModel = !state.models || !state.models.length;
    composer.draw(!!state.live, noModel);
    ui.picker.disabled = noModel;
    tools.draw(models.current());
  }

  var messages = LookoutChatMessages.create({
    state: state, showError: showError,
    draw: function () { draw(); },
    regenerate: function (userMessageId) { regenerate(userMessageId); },
    startTurn: function (body) { return startTurn(body); },
    continueReply: function (message) { continueReply(message); },
    ask: function (content, parentMessageId) { ask(content, parentMessageId); },
  });

  function nearBottom() { return ui.log.scrollHeight - ui.log.scrollTop - ui.log.clientHeight < 120; }

  /** Draw the whole shown branch again. */
  function draw(scroll) {
    var follow = scroll || nearBottom();
    state.liveBody = null;
    ui.messages.textContent = "";
    drawTitle();
    drawEmpty();
    drawComposer();
    if (!state.conversation) return;
    var shown = LookoutChatTree.path(state.conversation.messages, state.chosen);
    shown.forEach(function (entry) { ui.messages.appendChild(messages.item(entry)); });
    var leaf = shown.length ? shown[shown.length - 1].message : null;
    if (leaf && leaf.role === "user" && state.editing !== leaf.id) ui.messages.appendChild(messages.pending(leaf.id));
    if (follow) ui.log.scrollTop = ui.log.scrollHeight;
  }

  /** Redraw only the live reply, once per frame, so a stream does not rebuild the page. */
  function drawLive() {
    if (state.frame) return;
    state.frame = requestAnimationFrame(function () {
      state.frame = null;
      if (!state.live) return;  // the turn ended before this frame: its end draws the page
      if (!state.liveBody || !state.liveBody.isConnected) { draw(); return; }
      var follow = nearBottom();
      state.liveBody.textContent = "";
      state.liveBody.appendChild(Parts.assistantBody(state.live.parts, state.view, true));
      if (follow) ui.log.scrollTop = ui.log.scrollHeight;
    });
  }

  // Conversations -----------------------------------------------------------------------------

  function stopFollowing() {
    if (state.follower) state.follower.close();
    state.follower = null;
    state.live = null;
  }

  function startNewChat() {
    stopFollowing();
    state.loads++;  // a read of the conversation left, still on its way, must not bring it back
    composer.showDraftOf("");
    state.conversation = null;
    state.chosen = {};
    history.replaceState(null, "", location.pathname + location.search);
    sidebar.setCurrent(null);
    models.useConversation(null);
    draw();
    ui.input.focus();
  }

  /** Read the conversation again; keep following its open turn, or attach to one. */
  function loadConversation(id, scroll) {
    var seq = ++state.loads;
    return api.request("GET", "/api/conversations/" + encodeURIComponent(id)).then(function (result) {
      if (seq !== state.loads) return;  // a later read is on its way; this one may be stale
      if (!result.ok) { showError(api.errorMessage(result)); startNewChat(); return; }
      var opened = !state.conversation || state.conversation.id !== id;
      if (opened) showError("");  // an error about another conversation is not this one's
      if (state.conversation && state.conversation.id !== id) stopFollowing();
      state.conversation = result.data;
      result.data.messages.forEach(function (m) {  // the stored reply wins over what streamed
        if (m.parts.length) delete state.streamed[m.id];
      });
      (result.data.failedTurns || []).forEach(function (turn) {  // reasons survive a reload
        state.failures[turn.userMessageId] = turn.error;
        if (turn.assistantMessageId) state.failures[turn.assistantMessageId] = turn.error;
      });
      sidebar.setCurrent(id);
      if (opened && result.data.model) models.useConversation(result.data.model);
      // A followed turn this read no longer finds open has ended, and the messages (read after
      // the open turn) hold its stored ending: draw that, not its events replayed from the start.
      if (state.live && result.data.openTurnId !== state.live.turnId) {
        stopFollowing();
        sidebar.load();
      }
      var live = state.live;
      if (live && live.assistantMessageId && !result.data.messages.some(function (m) {
        return m.id === live.assistantMessageId; })) {
        addMessage(live.assistantMessageId, live.userMessageId);
      }
      draw(scroll);
      if (result.data.openTurnId && !state.live) turns.attach(result.data.openTurnId);
    });
  }

  function reloadIfOpen(id) {
    if (state.conversation && state.conversation.id === id && !state.live) loadConversation(id);
  }

  function addMessage(id, parentId) {
    state.conversation.messages.push({ id: id, parentId: parentId, role: "assistant",
      status: "running", parts: [], createdAt: new Date().toISOString() });
  }

  /** The id of the conversation the address (#c=<id>) opens; "" for a new chat. */
  function addressedId() {
    var match = /^#c=(.+)$/.exec(location.hash);
    return match ? match[1] : "";
  }

  function openFromAddress() {
    var id = addressedId();
    if (!id) { if (state.conversation) startNewChat(); else draw(); return; }
    if (state.conversation && state.conversation.id === id) return;
    stopFollowing();
    composer.showDraftOf(id);
    state.chosen = {};
    state.editing = null;
    loadConversation(id, true);
  }

  // Turns (a running one is followed by chat_live.js) -----------------------------------------

  var turns = LookoutChatLive.create({
    state: state, draw: draw, drawLive: drawLive, addMessage: addMessage,
    loadConversation: loadConversation, reloadIfOpen: reloadIfOpen,
    reloadSidebar: function () { sidebar.load(); },
  });

  /**
   * Start a turn with body (content/parentMessageId/attachments); resolve to whether it did.
   * A first message starts its conversation in the same request (POST /api/turns), so a
   * message the server refuses leaves no empty conversation behind.
   */
  function startTurn(body) {
    showError("");
    if (!ui.picker.value) { showError("Pick a model first."); return Promise.resolve(false); }
    if (models.problem()) { showError(models.problem()); return Promise.resolve(false); }
    body.model = ui.picker.value;
    var id = state.conversation ? state.conversation.id : null;
    var url = id ? "/api/conversations/" + encodeURIComponent(id) + "/turns" : "/api/turns";
    return api.request("POST", url, body).then(function (result) {
      if (!result.ok) {
        showError(result.status === 401 ? "You are signed out, so this message was not sent. " +
          "Reload the page to sign in again; what you wrote will still be here." :
          api.errorMessage(result));
        var fields = (result.data && result.data.error && result.data.error.fields) || {};
        if (fields.model) models.load();  // a model removed since the list was read
        return false;
      }
      var turn = result.data.turn;
      if (!id) {
        id = turn.conversationId;
        history.replaceState(null, "", "#c=" + id);
        composer.adopt(id);
      }
      state.chosen = {};
      turns.follow(turn, result.data.eventsUrl);
      loadConversation(id, true);
      sidebar.load();
      return true;
    });
  }

  /** Continue a stopped or cut-off reply: the model writes on at its end, in the same reply. */
  function continueReply(message) {
    showError("");
    if (models.problem()) { showError(models.problem()); return; }
    var id = state.conversation.id, url = "/api/messages/" + encodeURIComponent(message.id) + "/continue";
    api.request("POST", url, ui.picker.value ? { model: ui.picker.value } : {}).then(function (result) {
      if (!result.ok) {
        showError(api.errorMessage(result));
        var fields = (result.data && result.data.error && result.data.error.fields) || {};
        if (fields.model) models.load();
        return;
      }
      turns.follow(result.data.turn, result.data.eventsUrl);
      draw();
      loadConversation(id);
    });
  }

  /** Send a follow-up question as the next message after the reply `parentMessageId`. */
  function ask(content, parentMessageId) {
    if (state.live) return;
    var body = { content: content, parentMessageId: parentMessageId };
    var generation = tools.generation(models.current());  // the Tools menu's choice, as sending does
    if (generation) body.generation = generation;
    startTurn(body);
  }

  function regenerate(userMessageId) {
    startTurn({ parentMessageId: userMessageId });
  }

  function leafId() {
    if (!state.conversation) return null;
    var shown = LookoutChatTree.path(state.conversation.messages, state.chosen);
    return shown.length ? shown[shown.length - 1].message.id : null;
  }

  // Start -------------------------------------------------------------------------------------

  /** New chat, as the person asked for it: an error about the chat they leave goes with it. */
  function newChatAsked() { showError(""); startNewChat(); }
  $("new-chat").addEventListener("click", newChatAsked);
  $("new-chat-head").addEventListener("click", newChatAsked);  // a phone's, beside the title
  function showSidebar(open) {
    ui.sidebar.classList.toggle("open", open);
    ui.toggle.setAttribute("aria-expanded", open ? "true" : "false");
  }
  ui.toggle.addEventListener("click", function () { showSidebar(!ui.sidebar.classList.contains("open")); });
  $("close-sidebar").addEventListener("click", function () { showSidebar(false); ui.toggle.focus(); });
  ui.sidebar.addEventListener("click", function (event) {
    if (event.target.closest(".conversation-link, .new-chat")) showSidebar(false);
  });
  ui.sidebar.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && ui.sidebar.classList.contains("open")) { showSidebar(false); ui.toggle.focus(); }
  });
  window.addEventListener("hashchange", openFromAddress);

  Promise.all([models.load(), tools.load(), sidebar.load()]).then(function () {
    openFromAddress();
    // Ready to type, as the sign-in page is; not on a touch screen, whose keyboard would cover it.
    var untouched = document.activeElement === document.body || !document.activeElement;
    if (untouched && window.matchMedia("(pointer: fine)").matches) ui.input.focus();
    page.setAttribute("data-ready", "true");
  });
})();
