/* The chat page's word on tools: which ones the next message offers, and what the welcome promises.
 *
 * Both come from GET /api/tools (the tools switched on for this user). The composer's line is
 * read-only: the switches stay in Settings, which it links to (one control per decision).
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;
  // What a tool lets Lookout do, in the welcome's words; other tools are named as they are.
  var ABILITIES = { web_search: "search the web", web_fetch: "read web pages" };
  var READS_PAGES = ["web_search", "web_fetch"];

  function listed(words) {
    if (words.length < 2) return words.join("");
    return words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }

  /** options: {line, settingsUrl}; returns {load, draw(model), welcome()}. */
  function create(options) {
    var line = options.line;
    var tools = null;  // the user's enabled tools, once read

    function settingsLink(text) {
      return el("a", { href: options.settingsUrl, class: "tools-settings", text: text });
    }

    return {
      /** Read the user's enabled tools; a failure leaves the line hidden. */
      load: function () {
        return api.request("GET", "/api/tools").then(function (result) {
          tools = result.ok ? result.data.tools : null;
        });
      },

      /** Say which tools a message sent now, with `model`, offers. */
      draw: function (model) {
        line.textContent = "";
        line.hidden = tools === null || !model || model.missing;
        if (line.hidden) return;
        if (!tools.length) {
          line.append("No tools are on for you, so this message offers none. ",
            settingsLink("Switch tools on in Settings"));
        } else if (!model.tools) {
          line.append("This model cannot use tools, so this message offers none. ",
            settingsLink("Tool settings"));
        } else {
          line.append("This message offers: ");
          tools.forEach(function (tool, index) {
            if (index) line.append(", ");
            line.appendChild(el("code", { class: "offered-tool", text: tool.name,
              title: tool.pluginTitle }));
          });
          line.append(". ", settingsLink("Change in Settings"));
        }
      },

      /** The welcome's paragraph, promising only the tools that are on for this user. */
      welcome: function () {
        if (tools === null) return el("p", { text: "Ask a question below." });
        var names = tools.map(function (tool) { return tool.name; });
        if (!names.length) {
          return el("p", {}, ["Ask a question below. No tools are on for you, so Lookout " +
            "answers from its model alone. ", settingsLink("Switch tools on in Settings"), "."]);
        }
        var abilities = names.map(function (name) { return ABILITIES[name] || "use " + name; });
        var readsPages = names.some(function (name) { return READS_PAGES.indexOf(name) >= 0; });
        return el("p", { text: "Ask a question below. Lookout can " + listed(abilities) +
          " to answer" + (readsPages ? ", and lists the pages it used under each reply." : ".") });
      },
    };
  }

  root.LookoutChatTools = { create: create };
})(window);
