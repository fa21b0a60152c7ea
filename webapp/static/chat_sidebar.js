/* The chat page's list of conversations: newest first, open, rename in place, delete. */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;

  function titleOf(conversation) { return conversation.title || "Untitled conversation"; }

  /**
   * Return the sidebar controller: {load(), setCurrent(id), conversations()}.
   * options: {list, status, onDeleted(id), onRenamed(conversation), onError(text)}.
   */
  function create(options) {
    var conversations = [], current = null, loads = 0;

    function say(text) {
      options.status.textContent = text;
      options.status.hidden = !text;
    }

    function renameForm(item, conversation) {
      var input = el("input", { type: "text", value: conversation.title, maxlength: 200,
        "aria-label": "New title for " + titleOf(conversation) });
      var form = el("form", { class: "rename-form" }, [
        input,
        el("button", { type: "submit", text: "Save" }),
        el("button", { type: "button", text: "Cancel", onclick: draw }),
      ]);
      input.addEventListener("keydown", function (event) { if (event.key === "Escape") draw(); });
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var url = "/api/conversations/" + encodeURIComponent(conversation.id);
        api.request("PATCH", url, { title: input.value }).then(function (result) {
          if (!result.ok) { options.onError(api.errorMessage(result)); return; }
          conversation.title = result.data.title;
          draw();
          options.onRenamed(conversation);
        });
      });
      item.textContent = "";
      item.appendChild(form);
      input.focus();
      input.select();
    }

    function remove(conversation) {
      if (!root.confirm("Delete “" + titleOf(conversation) + "” and all its messages?")) return;
      var url = "/api/conversations/" + encodeURIComponent(conversation.id);
      api.request("DELETE", url).then(function (result) {
        if (!result.ok) { options.onError(api.errorMessage(result)); return; }
        conversations = conversations.filter(function (c) { return c.id !== conversation.id; });
        draw();
        options.onDeleted(conversation.id);
      });
    }

    function entry(conversation) {
      var item = el("li", { class: "conversation", "data-id": conversation.id });
      var open = el("a", { href: "#c=" + conversation.id, class: "conversation-link",
        text: titleOf(conversation) });
      if (conversation.id === current) open.setAttribute("aria-current", "page");
      item.appendChild(open);
      item.appendChild(el("div", { class: "conversation-actions" }, [
        el("button", { type: "button", class: "rename", text: "Rename",
          "aria-label": "Rename " + titleOf(conversation),
          onclick: function () { renameForm(item, conversation); } }),
        el("button", { type: "button", class: "delete", text: "Delete",
          "aria-label": "Delete " + titleOf(conversation),
          onclick: function () { remove(conversation); } }),
      ]));
      return item;
    }

    function draw() {
      options.list.textContent = "";
      conversations.forEach(function (c) { options.list.appendChild(entry(c)); });
      say(conversations.length ? "" : "No conversations yet.");
    }

    return {
      /** Fetch the list again (newest first, as the API sends it) and draw it. */
      load: function () {
        var seq = ++loads;
        return api.request("GET", "/api/conversations").then(function (result) {
          if (seq !== loads) return conversations;  // a later read will draw
          if (!result.ok) { say(api.errorMessage(result)); return conversations; }
          conversations = result.data.conversations;
          draw();
          return conversations;
        });
      },
      /** Mark the open conversation. */
      setCurrent: function (id) { current = id; draw(); },
      conversations: function () { return conversations; },
    };
  }

  root.LookoutChatSidebar = { create: create, titleOf: titleOf };
})(window);
