/* The chat page's list of conversations: newest first in date groups, searched by title as you
 * type, open, rename in place, delete. */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;

  function titleOf(conversation) { return conversation.title || "Untitled conversation"; }

  // Case and accents do not matter: "cafe" finds "Café".
  function fold(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }

  /** Return whether every word of the query is in the conversation's title. */
  function matches(conversation, query) {
    var title = fold(titleOf(conversation));
    return fold(query).split(/\s+/).every(function (word) { return title.indexOf(word) >= 0; });
  }

  /**
   * Return the sidebar controller: {load(), setCurrent(id), conversations()}.
   * options: {list, search, status, onDeleted(id), onRenamed(conversation), onError(text)}.
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
      var query = options.search.value.trim();
      var shown = query ? conversations.filter(function (c) { return matches(c, query); }) : conversations;
      options.list.textContent = "";
      LookoutChatDates.group(shown, function (c) { return c.updatedAt; }).forEach(function (group, n) {
        var id = "conversation-group-" + n;
        options.list.appendChild(el("section", { class: "conversation-group", "aria-labelledby": id }, [
          el("h3", { id: id, class: "group-label", text: group.label }),
          el("ul", { class: "conversation-list" }, group.items.map(entry)),
        ]));
      });
      if (!conversations.length) say("No conversations yet.");
      else if (!shown.length) say("No conversation title has “" + query + "” in it.");
      else say("");
    }

    options.search.addEventListener("input", draw);
    options.search.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && options.search.value) {
        event.stopPropagation();  // clear the search, not close the panel
        options.search.value = "";
        draw();
      }
    });

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
