/* The chat page's word on tools: which ones the next message offers, the Tools menu that picks
 * them, and what the welcome promises.
 *
 * The user's enabled tools come from GET /api/tools, the tools of tool sources (MCP servers)
 * from GET /api/tool-sources. Untouched, the menu leaves a message to offer the enabled tools
 * (no generation.tools is sent); once someone ticks or unticks a tool there, the message names
 * exactly the ticked ones in generation.tools, the only way a tool source's tool is offered.
 * The switches themselves stay in Settings, which the line links to.
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

  /** options: {line, menu, settingsUrl}; returns {load, draw(model), generation(model), welcome()}. */
  function create(options) {
    var line = options.line;
    var menu = options.menu;
    var tools = null;  // the user's enabled tools, once read
    var sourceTools = [];  // the tools of tool sources, offered only when ticked
    var chosen = null;  // the ticked names once the menu was touched; null: the enabled tools

    function settingsLink(text) {
      return el("a", { href: options.settingsUrl, class: "tools-settings", text: text });
    }

    /** The names the next message offers a tool-capable model. */
    function offered() {
      if (chosen) return chosen.slice();
      return (tools || []).map(function (tool) { return tool.name; });
    }

    /** Who offers a tool, as a hover says: its plugin's title, or its tool source. */
    function ownerOf(name) {
      var tool = (tools || []).concat(sourceTools).filter(function (t) { return t.name === name; })[0];
      return tool ? tool.pluginTitle || tool.source || "" : "";
    }

    function tick(name, on) {
      var names = offered().filter(function (other) { return other !== name; });
      if (on) names.push(name);
      var order = (tools || []).concat(sourceTools).map(function (tool) { return tool.name; });
      chosen = order.filter(function (other) { return names.indexOf(other) >= 0; });
    }

    function box(tool, group, redraw) {
      var id = "tool-choice-" + tool.name;
      var input = el("input", { type: "checkbox", id: id, value: tool.name,
        "data-group": group });
      input.checked = offered().indexOf(tool.name) >= 0;
      input.addEventListener("change", function () { tick(tool.name, input.checked); redraw(); });
      return el("div", { class: "tool-choice" }, [
        input, el("label", { for: id }, [el("code", { text: tool.name }),
          tool.description ? " — " + tool.description : ""]),
      ]);
    }

    function drawMenu(model, redraw) {
      if (!menu) return;
      var body = menu.querySelector(".tools-menu-body");
      body.textContent = "";
      var usable = tools !== null && model && !model.missing && model.tools;
      menu.hidden = !usable || !(tools.length || sourceTools.length);
      if (menu.hidden) return;
      if (tools.length) {
        body.appendChild(el("fieldset", {}, [el("legend", { text: "Your tools" })]
          .concat(tools.map(function (tool) { return box(tool, "enabled", redraw); }))));
      }
      if (sourceTools.length) {
        body.appendChild(el("fieldset", {}, [el("legend", { text: "From MCP servers" })]
          .concat(sourceTools.map(function (tool) { return box(tool, "source", redraw); }))));
      }
    }

    var chatTools = {
      /** Read the user's enabled tools and the tool sources' tools; a failure leaves the line
       * hidden (and the menu without the sources' tools). */
      load: function () {
        return Promise.all([
          api.request("GET", "/api/tools"), api.request("GET", "/api/tool-sources"),
        ]).then(function (results) {
          tools = results[0].ok ? results[0].data.tools : null;
          sourceTools = results[1].ok ? results[1].data.tools : [];
        });
      },

      /** Say which tools a message sent now, with `model`, offers, and draw the menu. */
      draw: function (model) {
        var redraw = function () { chatTools.draw(model); };
        drawMenu(model, redraw);
        line.textContent = "";
        line.hidden = tools === null || !model || model.missing;
        if (line.hidden) return;
        var names = offered();
        if (!tools.length && !names.length) {
          line.append("No tools are on for you, so this message offers none. ",
            settingsLink("Switch tools on in Settings"));
        } else if (!model.tools) {
          line.append("This model cannot use tools, so this message offers none. ",
            settingsLink("Tool settings"));
        } else if (!names.length) {
          line.append("This message offers no tools. ", settingsLink("Change in Settings"));
        } else {
          line.append("This message offers: ");
          names.forEach(function (name, index) {
            if (index) line.append(", ");
            line.appendChild(el("code", { class: "offered-tool", text: name, title: ownerOf(name) }));
          });
          line.append(". ", settingsLink("Change in Settings"));
        }
      },

      /** The generation options a message sent now with `model` carries: {tools: [...]} once
       * the menu was touched, else null (the enabled tools, as the API's default). */
      generation: function (model) {
        if (!chosen || !model || !model.tools) return null;
        return { tools: chosen.slice() };
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
    return chatTools;
  }

  root.LookoutChatTools = { create: create };
})(window);
