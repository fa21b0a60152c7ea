/* One message of the shown branch as a list item: its body, version switch, status and actions.
 *
 * A user message offers Edit (a new branch from the message before it, or a new first message
 * with parentMessageId null); a reply offers Copy and Regenerate, or, when it is incomplete
 * (failed or stopped), its error, Try again and Continue; a reply being written is drawn from
 * the live turn's parts.
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var Parts = LookoutChatParts;

  /**
   * Return {item(entry), pending(userMessageId)}; ctx: {state, draw(), regenerate(userMessageId),
   * continueReply(message), startTurn(body) -> Promise<bool>, showError(text)}.
   */
  function create(ctx) {
    function branchSwitch(entry) {
      var count = entry.siblings.length, at = entry.position;
      function go(step) {
        return function () {
          ctx.state.chosen[entry.message.parentId || LookoutChatTree.ROOT] = entry.siblings[at + step].id;
          ctx.draw();
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

    // The reply's text as the model wrote it (Markdown), its markers kept and its numbered
    // sources after it as Markdown links; no tool cards.
    function copyReply(parts) {
      var text = function () { return LookoutCitations.copyText(parts); };
      if (!text()) return null;
      return LookoutClipboard.button("Copy", "Copy this reply", text, "message-action copy");
    }

    // The newest reply of the conversation, on whichever branch: the only one Continue takes.
    function isNewestReply(message) {
      var replies = ctx.state.conversation.messages.filter(function (m) { return m.role === "assistant"; });
      return replies.length > 0 && replies[replies.length - 1].id === message.id;
    }

    // An incomplete reply (failed or stopped) can be asked again, or, when some of it was
    // written and it is the newest, continued: the model writes on at the end of this reply.
    function incompleteActions(message, userMessageId, parts) {
      var written = parts.some(function (p) {
        return p.type === "text" ? !!p.text.trim() : p.type === "tool-result";
      });
      return [
        copyReply(parts),
        action("Try again", function () { ctx.regenerate(userMessageId); },
          { class: "message-action retry" }),
        message && written && isNewestReply(message) ? action("Continue", function () {
          ctx.continueReply(message);
        }, { "aria-label": "Continue this reply from where it stopped" }) : null,
      ];
    }

    function failure(message, userMessageId, parts) {
      var text = ctx.state.failures[message ? message.id : userMessageId] ||
        ctx.state.failures[userMessageId] || "This reply failed.";
      return el("div", { class: "reply-error", role: "alert" }, [
        el("p", { text: text }),
        el("div", { class: "message-actions" }, incompleteActions(message, userMessageId, parts || [])),
      ]);
    }

    function messageItem(entry) {
      var message = entry.message, isUser = message.role === "user";
      var live = ctx.state.live && ctx.state.live.assistantMessageId === message.id ? ctx.state.live : null;
      var status = live ? live.status : message.status;
      var item = el("li", { class: "message message-" + message.role, "data-id": message.id,
        "data-status": status });
      var meta = el("div", { class: "message-meta" }, [
        el("span", { class: "role", text: isUser ? "You" : "Lookout" })]);
      if (entry.siblings.length > 1) meta.appendChild(branchSwitch(entry));
      if (status === "cancelled") meta.appendChild(el("span", { class: "badge-stopped", text: "Stopped" }));
      item.appendChild(meta);
      if (isUser && ctx.state.editing === message.id) {
        item.appendChild(editForm(message));
        return item;
      }
      if (isUser) {
        item.appendChild(Parts.userBody(message.parts));
        if (!ctx.state.live) {
          item.appendChild(el("div", { class: "message-actions" }, [
            action("Edit", function () { ctx.state.editing = message.id; ctx.draw(); },
              { "aria-label": "Edit this message" })]));
        }
        return item;
      }
      var holder = el("div", { class: "reply", "aria-live": live ? "polite" : null,
        "aria-busy": live ? "true" : null });
      // A stopped reply's text is stored a moment after the stop: until then, show what streamed.
      var parts = live ? live.parts : message.parts.length ? message.parts : ctx.state.streamed[message.id] || [];
      holder.appendChild(Parts.assistantBody(parts, ctx.state.view, !!live, live ? null : message.grounding));
      if (live) ctx.state.liveBody = holder;
      item.appendChild(holder);
      if (status === "running" || status === "queued") {
        item.appendChild(el("p", { class: "writing muted", text: "Writing…" }));
      } else if (status === "failed") {
        item.appendChild(failure(message, message.parentId, parts));
      } else if (status !== "completed" && !ctx.state.live) {
        item.appendChild(el("div", { class: "message-actions" },
          incompleteActions(message, message.parentId, parts)));
      } else if (!ctx.state.live) {
        item.appendChild(el("div", { class: "message-actions" }, [
          copyReply(parts),
          action("Regenerate", function () { ctx.regenerate(message.parentId); },
            { "aria-label": "Regenerate this reply" })]));
        var answered = ctx.state.conversation.messages.some(function (m) { return m.parentId === message.id; });
        var followUps = answered ? null : Parts.followUpButtons(parts, function (question) {
          ctx.ask(question, message.id);
        });
        if (followUps) item.appendChild(followUps);
      }
      return item;
    }

    // The reply of a turn whose assistant message the worker has not created yet, or none at all.
    function pendingItem(userMessageId) {
      var live = ctx.state.live && ctx.state.live.userMessageId === userMessageId ? ctx.state.live : null;
      var item = el("li", { class: "message message-assistant", "data-status": live ? live.status : "none" });
      item.appendChild(el("div", { class: "message-meta" }, [el("span", { class: "role", text: "Lookout" })]));
      if (live) {
        var holder = el("div", { class: "reply", "aria-live": "polite", "aria-busy": "true" });
        holder.appendChild(Parts.assistantBody(live.parts, ctx.state.view, true));
        ctx.state.liveBody = holder;
        item.appendChild(holder);
        item.appendChild(el("p", { class: "writing muted", text: live.status !== "queued" ?
          "Writing…" : !live.queuedLong ? "Waiting for a worker…" : "Still waiting for a " +
          "worker: every one is busy, or none is running. Wait, or press Stop to give up (your " +
          "message stays); an administrator can see the workers in Admin → Health." }));
      } else {
        item.appendChild(failure(null, userMessageId));
      }
      return item;
    }

    function editForm(message) {
      var text = message.parts.filter(function (p) { return p.type === "text"; })
        .map(function (p) { return p.text; }).join("\n");
      var box = el("textarea", { class: "edit-input", rows: 3, "aria-label": "Edited message" });
      box.value = text;
      var form = el("form", { class: "edit-form" }, [box, el("div", { class: "message-actions" }, [
        el("button", { type: "submit", class: "send", text: "Send edit" }),
        action("Cancel", function () { ctx.state.editing = null; ctx.draw(); }),
      ])]);
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        if (!box.value.trim()) { ctx.showError("Write the new message before sending it."); return; }
        ctx.startTurn({ content: box.value, parentMessageId: message.parentId || null }).then(function (ok) {
          if (ok) ctx.state.editing = null;
        });
      });
      setTimeout(function () { box.focus(); }, 0);
      return form;
    }

    return { item: messageItem, pending: pendingItem };
  }

  root.LookoutChatMessages = { create: create };
})(window);
