/* The chat page: one conversation's shown branch, the composer, and a live reply while it streams.
 *
 * The conversation comes from GET /api/conversations/<id> (every branch); LookoutChatTree picks
 * the path to show. A running turn is followed over its events (LookoutChatStream) and drawn
 * from them; when it ends the conversation is read again, so what stays on screen is what was
 * stored. The open conversation is in the address (#c=<id>), so a reload comes back to it.
 */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;
  var Parts = LookoutChatParts;
  var MODEL_KEY = "lookout.model";
  var STORED_AFTER_STOP_MS = 2000;
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
    attachments: [], failures: {}, streamed: {}, editing: null, frame: null, loads: 0,
    view: { loadedImages: new Set(), openCalls: new Set() },
  };

  function showError(text) { ui.error.textContent = text || ""; ui.error.hidden = !text; }

  var sidebar = LookoutChatSidebar.create({
    list: $("conversation-list"), status: $("sidebar-status"), onError: showError,
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

  // Models ------------------------------------------------------------------------------------

  function loadModels() {
    return api.request("GET", "/api/models").then(function (result) {
      if (!result.ok) { showError(api.errorMessage(result)); state.models = []; return; }
      state.models = result.data.models;
      var saved = localStorage.getItem(MODEL_KEY);
      ui.picker.textContent = "";
      state.models.forEach(function (model) {
        ui.picker.appendChild(el("option", { value: model.id,
          text: model.id + (model.tools ? "" : " (no tools)") }));
      });
      if (state.models.some(function (m) { return m.id === saved; })) ui.picker.value = saved;
    });
  }

  ui.picker.addEventListener("change", function () { localStorage.setItem(MODEL_KEY, ui.picker.value); });

  // Drawing -----------------------------------------------------------------------------------

  function drawTitle() {
    var title = state.conversation ? LookoutChatSidebar.titleOf(state.conversation) : "New chat";
    ui.title.textContent = title;
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
        notice.appendChild(el("p", {}, [el("a", { href: page.getAttribute("data-admin-url"),
          text: "Add a provider in the admin area" }), "."]));
      }
      ui.empty.appendChild(notice);
    } else if (!sidebar.conversations().length && !state.conversation) {
      ui.empty.appendChild(el("div", { class: "welcome" }, [
        el("h2", { text: "Welcome, " + page.getAttribute("data-user") + "!" }),
        el("p", { text: "Ask a question below. Lookout can search and read the web to answer, " +
          "and lists the pages it used under each reply." }),
      ]));
    } else {
      ui.empty.appendChild(el("p", { class: "muted", text: "Write a message below to start." }));
    }
  }

  function drawComposer() {
    var running = !!state.live, noModel = !state.models || !state.models.length;
    ui.send.hidden = running;
    ui.stop.hidden = !running;
    var uploading = state.attachments.some(function (a) { return !a.id; });
    ui.send.disabled = noModel || uploading;
    ui.picker.disabled = noModel;
  }

  function branchSwitch(entry) {
    var count = entry.siblings.length, at = entry.position;
    function go(step) {
      return function () {
        state.chosen[entry.message.parentId || LookoutChatTree.ROOT] = entry.siblings[at + step].id;
        draw();
      };
    }
    return el("span", { class: "branch-switch", role: "group", "aria-label": "Versions" }, [
      el("button", { type: "button", "aria-label": "Previous version", disabled: at === 0,
        text: "‹", onclick: go(-1) }),
      el("span", { class: "branch-position", text: (at + 1) + "/" + count }),
      el("button", { type: "button", "aria-label": "Next version", disabled: at === count - 1,
        text: "›", onclick: go(1) }),
    ]);
  }

  function action(text, onclick, extra) {
    return el("button", Object.assign({ type: "button", class: "message-action", text: text,
      onclick: onclick }, extra || {}));
  }

  function failure(message, userMessageId) {
    var text = state.failures[message ? message.id : userMessageId] ||
      state.failures[userMessageId] || "This reply failed.";
    return el("div", { class: "reply-error", role: "alert" }, [
      el("p", { text: text }),
      action("Try again", function () { regenerate(userMessageId); }, { class: "message-action retry" }),
    ]);
  }

  function messageItem(entry) {
    var message = entry.message, isUser = message.role === "user";
    var live = state.live && state.live.assistantMessageId === message.id ? state.live : null;
    var status = live ? live.status : message.status;
    var item = el("li", { class: "message message-" + message.role, "data-id": message.id,
      "data-status": status });
    var meta = el("div", { class: "message-meta" }, [
      el("span", { class: "role", text: isUser ? "You" : "Lookout" })]);
    if (entry.siblings.length > 1) meta.appendChild(branchSwitch(entry));
    if (status === "cancelled") meta.appendChild(el("span", { class: "badge-stopped", text: "Stopped" }));
    item.appendChild(meta);
    if (isUser && state.editing === message.id) {
      item.appendChild(editForm(message));
      return item;
    }
    if (isUser) {
      item.appendChild(Parts.userBody(message.parts));
      if (message.parentId && !state.live) {
        item.appendChild(el("div", { class: "message-actions" }, [
          action("Edit", function () { state.editing = message.id; draw(); },
            { "aria-label": "Edit this message" })]));
      }
      return item;
    }
    var holder = el("div", { class: "reply", "aria-live": live ? "polite" : null,
      "aria-busy": live ? "true" : null });
    // A stopped reply's text is stored a moment after the stop: until then, show what streamed.
    var parts = live ? live.parts : message.parts.length ? message.parts : state.streamed[message.id] || [];
    holder.appendChild(Parts.assistantBody(parts, state.view));
    if (live) state.liveBody = holder;
    item.appendChild(holder);
    if (status === "running" || status === "queued") {
      item.appendChild(el("p", { class: "writing muted", text: "Writing…" }));
    } else if (status === "failed") {
      item.appendChild(failure(message, message.parentId));
    } else if (!state.live) {
      item.appendChild(el("div", { class: "message-actions" }, [
        action("Regenerate", function () { regenerate(message.parentId); },
          { "aria-label": "Regenerate this reply" })]));
    }
    return item;
  }

  // The reply of a turn whose assistant message the worker has not created yet, or none at all.
  function pendingItem(userMessageId) {
    var live = state.live && state.live.userMessageId === userMessageId ? state.live : null;
    var item = el("li", { class: "message message-assistant", "data-status": live ? live.status : "none" });
    item.appendChild(el("div", { class: "message-meta" }, [el("span", { class: "role", text: "Lookout" })]));
    if (live) {
      var holder = el("div", { class: "reply", "aria-live": "polite", "aria-busy": "true" });
      holder.appendChild(Parts.assistantBody(live.parts, state.view));
      state.liveBody = holder;
      item.appendChild(holder);
      item.appendChild(el("p", { class: "writing muted", text: live.status === "queued" ?
        "Waiting for a worker…" : "Writing…" }));
    } else {
      item.appendChild(failure(null, userMessageId));
    }
    return item;
  }

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
    shown.forEach(function (entry) { ui.messages.appendChild(messageItem(entry)); });
    var leaf = shown.length ? shown[shown.length - 1].message : null;
    if (leaf && leaf.role === "user" && state.editing !== leaf.id) ui.messages.appendChild(pendingItem(leaf.id));
    if (follow) ui.log.scrollTop = ui.log.scrollHeight;
  }

  /** Redraw only the live reply, once per frame, so a stream does not rebuild the page. */
  function drawLive() {
    if (state.frame) return;
    state.frame = requestAnimationFrame(function () {
      state.frame = null;
      if (!state.liveBody || !state.liveBody.isConnected) { draw(); return; }
      var follow = nearBottom();
      state.liveBody.textContent = "";
      state.liveBody.appendChild(Parts.assistantBody(state.live.parts, state.view));
      if (follow) ui.log.scrollTop = ui.log.scrollHeight;
    });
  }

  function editForm(message) {
    var text = message.parts.filter(function (p) { return p.type === "text"; })
      .map(function (p) { return p.text; }).join("\n");
    var box = el("textarea", { class: "edit-input", rows: 3, "aria-label": "Edited message" });
    box.value = text;
    var form = el("form", { class: "edit-form" }, [box, el("div", { class: "message-actions" }, [
      el("button", { type: "submit", class: "send", text: "Send edit" }),
      action("Cancel", function () { state.editing = null; draw(); }),
    ])]);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!box.value.trim()) { showError("Write the new message before sending it."); return; }
      startTurn({ content: box.value, parentMessageId: message.parentId }).then(function (ok) {
        if (ok) state.editing = null;
      });
    });
    setTimeout(function () { box.focus(); }, 0);
    return form;
  }

  // Conversations -----------------------------------------------------------------------------

  function stopFollowing() {
    if (state.follower) state.follower.close();
    state.follower = null;
    state.live = null;
  }

  function startNewChat() {
    stopFollowing();
    state.conversation = null;
    state.chosen = {};
    history.replaceState(null, "", location.pathname + location.search);
    sidebar.setCurrent(null);
    draw();
    ui.input.focus();
  }

  /** Read the conversation again; keep following its open turn, or attach to one. */
  function loadConversation(id, scroll) {
    var seq = ++state.loads;
    return api.request("GET", "/api/conversations/" + encodeURIComponent(id)).then(function (result) {
      if (seq !== state.loads) return;  // a later read is on its way; this one may be stale
      if (!result.ok) { showError(api.errorMessage(result)); startNewChat(); return; }
      if (state.conversation && state.conversation.id !== id) stopFollowing();
      state.conversation = result.data;
      sidebar.setCurrent(id);
      var live = state.live;
      if (live && live.assistantMessageId && !result.data.messages.some(function (m) {
        return m.id === live.assistantMessageId; })) {
        addMessage(live.assistantMessageId, live.userMessageId);
      }
      draw(scroll);
      if (result.data.openTurnId && !state.live) attach(result.data.openTurnId);
    });
  }

  function reloadIfOpen(id) {
    if (state.conversation && state.conversation.id === id && !state.live) loadConversation(id);
  }

  function addMessage(id, parentId) {
    state.conversation.messages.push({ id: id, parentId: parentId, role: "assistant",
      status: "running", parts: [], createdAt: new Date().toISOString() });
  }

  function openFromAddress() {
    var match = /^#c=(.+)$/.exec(location.hash);
    if (!match) { if (state.conversation) startNewChat(); else draw(); return; }
    if (state.conversation && state.conversation.id === match[1]) return;
    stopFollowing();
    state.chosen = {};
    state.editing = null;
    loadConversation(match[1], true);
  }

  // Turns -------------------------------------------------------------------------------------

  function onEvent(name, data) {
    var live = state.live, parts = live.parts, last = parts[parts.length - 1];
    if (name === "turn.started") {
      live.status = "running";
      live.assistantMessageId = data.assistantMessageId;
      if (state.conversation && !state.conversation.messages.some(function (m) { return m.id === data.assistantMessageId; })) {
        addMessage(data.assistantMessageId, live.userMessageId);
      }
      draw();
      return;
    }
    if (name === "text.delta") {
      if (last && last.type === "text") last.text += data.text;
      else parts.push({ type: "text", text: data.text });
    } else if (name === "tool.started") {
      parts.push({ type: "tool-call", id: data.callId, name: data.name, input: data.input });
    } else if (name === "tool.finished") {
      parts.push({ type: "tool-result", callId: data.callId, name: data.name, outcome: data.outcome,
        output: data.output, error: data.error });
    } else if (name === "source.added") {
      parts.push({ type: "source", url: data.url, title: data.title });
    }
    drawLive();
  }

  function onEnd(turn, status, data) {
    var live = state.live;
    if (!live || live.turnId !== turn.id) return;
    live.status = status;
    var settle = Promise.resolve(data.error);
    if (status === "failed" && !data.error) {
      settle = api.request("GET", "/api/turns/" + turn.id).then(function (r) { return r.ok ? r.data.error : null; });
    }
    settle.then(function (error) {
      if (status === "failed") {
        var text = error || "This reply failed.";
        state.failures[live.userMessageId] = text;
        if (live.assistantMessageId) state.failures[live.assistantMessageId] = text;
      } else if (status === "cancelled" && !live.assistantMessageId) {
        state.failures[live.userMessageId] = "Stopped before Lookout replied.";
      }
      if (live.assistantMessageId) state.streamed[live.assistantMessageId] = live.parts;
      state.follower = null;
      state.live = null;
      var id = turn.conversationId;
      if (state.conversation && state.conversation.id === id) {
        loadConversation(id).then(function () {
          if (status === "cancelled") setTimeout(function () { reloadIfOpen(id); }, STORED_AFTER_STOP_MS);
        });
      }
      sidebar.load();
    });
  }

  /** Follow a turn's events; `turn` needs id, conversationId and userMessageId. */
  function follow(turn, eventsUrl) {
    if (state.follower) state.follower.close();
    state.live = { turnId: turn.id, userMessageId: turn.userMessageId, status: turn.status || "queued",
      assistantMessageId: turn.assistantMessageId || null, parts: [] };
    state.follower = LookoutChatStream.follow(eventsUrl || "/api/turns/" + turn.id + "/events",
      onEvent, function (status, data) { onEnd(turn, status, data); });
  }

  function attach(turnId) {
    api.request("GET", "/api/turns/" + encodeURIComponent(turnId)).then(function (result) {
      if (!result.ok || state.live || !state.conversation ||
        result.data.conversationId !== state.conversation.id) return;
      follow(result.data);
      draw();
    });
  }

  function ensureConversation() {
    if (state.conversation) return Promise.resolve(state.conversation.id);
    return api.request("POST", "/api/conversations", {}).then(function (result) {
      if (!result.ok) { showError(api.errorMessage(result)); return null; }
      state.conversation = result.data;
      history.replaceState(null, "", "#c=" + result.data.id);
      return result.data.id;
    });
  }

  /** Start a turn with body (content/parentMessageId/attachments); resolve to whether it did. */
  function startTurn(body) {
    showError("");
    if (!ui.picker.value) { showError("Pick a model first."); return Promise.resolve(false); }
    body.model = ui.picker.value;
    return ensureConversation().then(function (id) {
      if (!id) return false;
      return api.request("POST", "/api/conversations/" + encodeURIComponent(id) + "/turns", body)
        .then(function (result) {
          if (!result.ok) { showError(api.errorMessage(result)); return false; }
          state.chosen = {};
          follow(result.data.turn, result.data.eventsUrl);
          loadConversation(id, true);
          sidebar.load();
          return true;
        });
    });
  }

  function regenerate(userMessageId) {
    startTurn({ parentMessageId: userMessageId });
  }

  function leafId() {
    if (!state.conversation) return null;
    var shown = LookoutChatTree.path(state.conversation.messages, state.chosen);
    return shown.length ? shown[shown.length - 1].message.id : null;
  }

  ui.form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (state.live || ui.send.disabled) return;
    var content = ui.input.value;
    if (!content.trim()) {
      showError(state.attachments.length ? "Write a message to go with the file." : "");
      return;
    }
    var body = { content: content, attachments: state.attachments.map(function (a) { return a.id; }) };
    var parent = leafId();
    if (parent) body.parentMessageId = parent;
    ui.send.disabled = true;
    startTurn(body).then(function (ok) {
      if (ok) {
        ui.input.value = "";
        ui.input.style.height = "";
        state.attachments = [];
        drawChips();
      }
      drawComposer();
    });
  });

  ui.input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.form.requestSubmit();
    }
  });
  ui.input.addEventListener("input", function () {
    ui.input.style.height = "auto";
    ui.input.style.height = Math.min(ui.input.scrollHeight, 240) + "px";
  });

  ui.stop.addEventListener("click", function () {
    var live = state.live;
    if (!live) return;
    ui.stop.disabled = true;
    api.request("POST", "/api/turns/" + live.turnId + "/cancel").then(function (result) {
      ui.stop.disabled = false;
      if (!result.ok && result.status !== 409) showError(api.errorMessage(result));
    });
  });

  // Attachments -------------------------------------------------------------------------------

  function drawChips() {
    ui.chips.textContent = "";
    state.attachments.forEach(function (file) {
      ui.chips.appendChild(el("span", { class: "file-chip" + (file.id ? "" : " uploading") }, [
        "📎 " + file.filename + (file.id ? "" : " (uploading…)"),
        file.id ? el("button", { type: "button", class: "chip-remove", text: "×",
          "aria-label": "Remove " + file.filename, onclick: function () {
            state.attachments = state.attachments.filter(function (a) { return a !== file; });
            drawChips();
          } }) : null,
      ]));
    });
    drawComposer();
  }

  function upload(file) {
    var entry = { id: null, filename: file.name };
    state.attachments.push(entry);
    drawChips();
    var form = new FormData();
    form.append("file", file);
    var token = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
    fetch("/api/uploads", { method: "POST", body: form, credentials: "same-origin",
      headers: { "X-CSRFToken": token, "Accept": "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (data) {
          return { ok: response.ok, status: response.status, data: data };
        });
      }, function () { return { ok: false, status: 0, data: null }; })
      .then(function (result) {
        if (result.ok) entry.id = result.data.id;
        else {
          state.attachments = state.attachments.filter(function (a) { return a !== entry; });
          showError(api.errorMessage(result));
        }
        drawChips();
      });
  }

  ui.attach.addEventListener("click", function () { ui.file.click(); });
  ui.file.addEventListener("change", function () {
    Array.prototype.forEach.call(ui.file.files, upload);
    ui.file.value = "";
  });

  // Start -------------------------------------------------------------------------------------

  $("new-chat").addEventListener("click", startNewChat);
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

  Promise.all([loadModels(), sidebar.load()]).then(function () {
    openFromAddress();
    page.setAttribute("data-ready", "true");
  });
})();
