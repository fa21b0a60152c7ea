/* The admins' MCP servers page: each server's status and tools, adding, listing again, removing. */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var when = LookoutForms.when;
  var api = LookoutApi;
  var pages = LookoutListPage;
  var root = document.getElementById("mcp-servers");
  var listUrl = root.getAttribute("data-api");
  // A status in the words the admin reads.
  var STATUS = { new: "Not listed yet", ok: "Up", down: "Down", slow: "Slow", refused: "Refused" };

  function serverUrl(server) { return listUrl + "/" + encodeURIComponent(server.name); }

  function actions(server) {
    var status = el("span", { class: "status", "aria-live": "polite" });
    var refresh = el("button", { type: "button", class: "refresh",
      "aria-label": "List the tools of " + server.name + " again", text: "List tools again" });
    refresh.addEventListener("click", function () {
      say(status, "Listing…", null);
      api.request("POST", serverUrl(server) + "/refresh").then(function (result) {
        if (result.ok) load(); else say(status, api.errorMessage(result), true);
      });
    });
    var remove = el("button", { type: "button", class: "danger remove",
      "aria-label": "Remove " + server.name, text: "Remove" });
    remove.addEventListener("click", function () {
      api.request("DELETE", serverUrl(server)).then(function (result) {
        if (result.ok) load(); else say(status, api.errorMessage(result), true);
      });
    });
    return el("div", { class: "actions" }, [refresh, remove, status]);
  }

  function card(server) {
    var where = server.url || server.command.join(" ");
    var tools = server.tools.length
      ? el("ul", { class: "mcp-tools" }, server.tools.map(function (tool) {
        return el("li", {}, [el("code", { text: tool.name }), " — " + tool.description]);
      }))
      : el("p", { class: "muted", text: "No tools listed." });
    return el("article", { class: "mcp-server", "data-server": server.name,
      "data-status": server.status }, [
      el("h3", { text: server.name }),
      el("p", {}, [el("strong", { class: "mcp-status", text: STATUS[server.status] || server.status }),
        " · " + where + " · listed " + when(server.listedAt) +
        (server.headerNames.length ? " · headers: " + server.headerNames.join(", ") : "")]),
      server.error ? el("p", { class: "form-error mcp-error", role: "alert", text: server.error }) : null,
      tools,
      actions(server),
    ]);
  }

  function load() {
    return pages.load(root, listUrl, function (data) {
      if (!data.servers.length) return el("p", { class: "muted", text: "No MCP servers yet." });
      return data.servers.map(card);
    });
  }

  /** Return the headers typed one "Name: value" a line, or null when the box is empty. */
  function headers() {
    var text = document.getElementById("mcp-headers").value.trim();
    if (!text) return null;
    var out = {};
    text.split("\n").forEach(function (line) {
      var at = line.indexOf(":");
      if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    });
    return out;
  }

  var nameInput = document.getElementById("mcp-name");
  pages.createForm({
    form: document.getElementById("mcp-form"),
    url: listUrl,
    nameInput: nameInput,
    nameError: document.getElementById("mcp-name-error"),
    status: document.getElementById("mcp-form-status"),
    body: function () {
      var command = document.getElementById("mcp-command").value.trim();
      return {
        name: nameInput.value.trim(),
        url: document.getElementById("mcp-url").value.trim() || null,
        command: command ? command.split(/\s+/) : [],
        headers: headers(),
        allowPrivate: document.getElementById("mcp-private").checked,
      };
    },
    created: function () {
      document.getElementById("mcp-url").value = "";
      document.getElementById("mcp-headers").value = "";
      load();
    },
  });

  load();
})();
