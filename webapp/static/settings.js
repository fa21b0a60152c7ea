/* The settings page: each plugin's tool switches (saved at once) above its generated form. */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var api = LookoutApi;
  var root = document.getElementById("plugins");
  var listUrl = root.getAttribute("data-api");


  function toolSwitch(plugin, tool) {
    var id = "tool-" + plugin.id + "-" + tool.name;
    var status = el("span", { class: "status", id: id + "-status", "aria-live": "polite" });
    var box = el("input", { type: "checkbox", id: id, "data-tool": tool.name,
      "aria-describedby": id + "-status" });
    box.checked = tool.enabled;
    box.addEventListener("change", function () {
      var wanted = box.checked;
      box.disabled = true;
      say(status, "Saving…", null);
      var url = "/api/plugins/" + encodeURIComponent(plugin.id) + "/tools/" +
        encodeURIComponent(tool.name);
      api.request("PUT", url, { enabled: wanted }).then(function (result) {
        box.disabled = false;
        if (result.ok) {
          say(status, wanted ? "On — saved." : "Off — saved.", false);
        } else {
          box.checked = !wanted;
          say(status, api.errorMessage(result), true);
        }
      });
    });
    // The tool's description is written for the model, so people see its name and plugin.
    return el("div", { class: "tool" }, [
      box, el("label", { for: id }, [el("code", { text: tool.name }),
        el("span", { class: "plugin-title", text: " (" + plugin.title + ")" })]), status,
    ]);
  }

  function fixedTool(plugin, tool) {
    var state = tool.enabled ? "always on" : "off";
    return el("li", {}, [el("code", { text: tool.name }),
      " (" + plugin.title + ") — " + state + ", set by your administrator."]);
  }

  function settingsForm(plugin) {
    var fieldsBox = el("div", { class: "fields" });
    var status = el("span", { class: "status", "aria-live": "polite" });
    var form = el("form", { class: "schema-form", novalidate: true, "data-plugin": plugin.id }, [
      fieldsBox,
      el("div", { class: "actions" }, [
        el("button", { type: "submit", class: "save", text: "Save settings" }),
        el("button", { type: "button", class: "reset", text: "Reset to defaults" }),
        status,
      ]),
    ]);
    var controller;
    function draw(settings, secretsSet) {
      controller = LookoutForms.render(fieldsBox, {
        schema: plugin.schema, values: settings, secretsSet: secretsSet,
        idPrefix: "setting-" + plugin.id,
      });
    }
    draw(plugin.settings, plugin.secretsSet);
    var url = "/api/plugins/" + encodeURIComponent(plugin.id) + "/settings";
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      say(status, "Saving…", null);
      api.request("PUT", url, controller.collect()).then(function (result) {
        if (result.ok) {
          draw(result.data.settings, result.data.secretsSet);
          say(status, "Saved.", false);
        } else {
          var error = (result.data && result.data.error) || {};
          controller.showErrors(error.fields, api.errorMessage(result));
          say(status, "Not saved: see the messages above.", true);
        }
      });
    });
    form.querySelector(".reset").addEventListener("click", function () {
      say(status, "Resetting…", null);
      api.request("DELETE", url).then(function (result) {
        if (result.ok) {
          draw({}, {});
          say(status, "Reset to defaults.", false);
        } else {
          say(status, api.errorMessage(result), true);
        }
      });
    });
    return form;
  }

  function pluginBlock(plugin) {
    var headingId = "plugin-" + plugin.id + "-title";
    var section = el("section", { class: "card plugin", id: "plugin-" + plugin.id,
      "aria-labelledby": headingId }, [el("h2", { id: headingId, text: plugin.title })]);
    var switchable = plugin.tools.filter(function (t) { return t.userToggle; });
    var fixed = plugin.tools.filter(function (t) { return !t.userToggle; });
    var fixedItem = function (tool) { return fixedTool(plugin, tool); };
    if (switchable.length) {
      section.appendChild(el("fieldset", { class: "tools" },
        [el("legend", { text: "Tools" })].concat(switchable.map(function (tool) {
          return toolSwitch(plugin, tool);
        }), fixed.length ? [el("ul", { class: "fixed-tools" }, fixed.map(fixedItem))] : [])));
    } else if (fixed.length) {
      section.appendChild(el("ul", { class: "fixed-tools" }, fixed.map(fixedItem)));
    }
    if (plugin.schema) section.appendChild(settingsForm(plugin));
    return section;
  }

  api.request("GET", listUrl).then(function (result) {
    root.textContent = "";
    if (!result.ok) {
      root.appendChild(el("p", { class: "form-error", role: "alert", text: api.errorMessage(result) }));
      return;
    }
    if (!result.data.plugins.length) {
      root.appendChild(el("p", { class: "muted", text: "No plugin has settings for you." }));
    }
    result.data.plugins.forEach(function (plugin) { root.appendChild(pluginBlock(plugin)); });
    root.setAttribute("data-ready", "true");
  });
})();
