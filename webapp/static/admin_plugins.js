/* The admin plugins page: each plugin's status and reason, and its options form.
 *
 * A plugin listed in TRIALS gets a button beside Save that runs its tool once on a worker with
 * the options the form holds, saved or not (POST /api/admin/plugins/<id>/try/<tool>),
 * and says what came back: web search's "Test search" says how many results which engine gave.
 */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var api = LookoutApi;
  var root = document.getElementById("plugins");
  var listUrl = root.getAttribute("data-api");
  var STATUS_TEXT = {
    "active": "Active",
    "needs-configuration": "Needs configuration",
    "failed": "Failed",
  };


  // The tools an admin can try from their plugin's form: the button, the input and the words.
  var TRIALS = {
    web_search: {
      tool: "web_search", button: "Test search", queryLabel: "Test query", query: "Lookout",
      said: function (output) {
        var count = (output.results || []).length;
        var words = (output.engineName || output.engine) + " answered with " + count +
          " result" + (count === 1 ? "" : "s") + ".";
        if (output.fallbackFrom) {
          words += " " + output.fallbackFrom + " did not answer" +
            (output.fallbackReason ? ": " + output.fallbackReason : ".");
        }
        return words;
      },
    },
  };

  /** Run the trial's tool once with `options` and `query`; resolve to the API's result. */
  function tryTool(plugin, trial, options, query) {
    var url = "/api/admin/plugins/" + encodeURIComponent(plugin.id) + "/try/" +
      encodeURIComponent(trial.tool);
    return api.request("POST", url, { options: options, input: { query: query } });
  }

  /** The trial's query box and button, with the line that says what came back. */
  function trialControls(plugin, trial, collect, showErrors) {
    var id = "trial-" + plugin.id + "-query";
    var query = el("input", { type: "text", id: id, class: "trial-query", value: trial.query });
    query.value = trial.query;
    var status = el("p", { class: "status trial-status", "aria-live": "polite" });
    var button = el("button", { type: "button", class: "trial", text: trial.button });
    button.addEventListener("click", function () {
      var options = collect();
      showErrors({}, "");
      button.disabled = true;
      say(status, trial.button + ": a worker is running one search with the options above…", false);
      status.classList.remove("ok");
      tryTool(plugin, trial, options, query.value.trim() || trial.query).then(function (result) {
        button.disabled = false;
        if (!result.ok) {
          var error = (result.data && result.data.error) || {};
          showErrors(error.fields, api.errorMessage(result));
          return say(status, api.errorMessage(result), true);
        }
        if (!result.data.ok) return say(status, result.data.error, true);
        say(status, trial.said(result.data.output || {}), false);
      });
    });
    return el("div", { class: "trial-controls" }, [
      el("div", { class: "actions" }, [
        el("label", { for: id, text: trial.queryLabel }), query, button,
      ]),
      status,
    ]);
  }

  /** Save a plugin's options as its form holds them; resolve to the API's result. */
  function saveOptions(plugin, options) {
    var url = "/api/admin/plugins/" + encodeURIComponent(plugin.id) + "/options";
    return api.request("PUT", url, options);
  }

  /**
   * Ask, beside the notice that nobody gets a tool yet, whether to offer it to everyone now:
   * the button ticks the plugin's option (web search's "On by default") and saves the form, so
   * right after a first engine is saved, search is one click away.
   */
  function offerButton(box, plugin) {
    var title = plugin.title || plugin.id;
    var button = el("button", { type: "button", class: "save offer-everyone",
      text: "Offer " + title.toLowerCase() + " to everyone now" });
    button.addEventListener("click", function () {
      box.dispatchEvent(new CustomEvent("offer-everyone", { detail: plugin.offerOption }));
    });
    return el("div", { class: "actions" }, [button]);
  }

  function drawStatus(box, plugin) {
    box.textContent = "";
    box.appendChild(el("span", { class: "badge badge-" + plugin.status,
      text: STATUS_TEXT[plugin.status] || plugin.status }));
    if (plugin.reason) box.appendChild(el("p", { class: "reason", text: plugin.reason }));
    // Who is offered each tool, and tools nobody is offered yet (web search right after an
    // engine is picked): said plainly.
    (plugin.notices || []).forEach(function (notice) {
      box.appendChild(el("p", { class: "plugin-notice", role: "status", text: notice }));
    });
    if (plugin.offerOption) box.appendChild(offerButton(box, plugin));
    if (plugin.tools && plugin.tools.length) {
      box.appendChild(el("p", { class: "muted", text: "Tools: " + plugin.tools.join(", ") }));
    }
  }

  function optionsForm(plugin, statusBox) {
    var fieldsBox = el("div", { class: "fields" });
    var status = el("span", { class: "status", "aria-live": "polite" });
    var form = el("form", { class: "schema-form", novalidate: true, "data-plugin": plugin.id }, [
      fieldsBox,
      el("div", { class: "actions" }, [
        el("button", { type: "submit", class: "save", text: "Save options" }), status,
      ]),
    ]);
    var controller;
    function draw(data) {
      controller = LookoutForms.render(fieldsBox, {
        schema: data.schema, values: data.options, secretsSet: data.secretsSet,
        idPrefix: "option-" + data.id,
      });
      if (data.status === "failed" && data.fields) controller.showErrors(data.fields);
    }
    draw(plugin);
    var trial = TRIALS[plugin.id];
    if (trial) {
      form.appendChild(trialControls(plugin, trial, function () { return controller.collect(); },
        function (fields, message) { controller.showErrors(fields, message); }));
    }
    statusBox.addEventListener("offer-everyone", function (event) {
      var box = document.getElementById("option-" + plugin.id + "-" + event.detail);
      if (!box) return;
      box.checked = true;
      form.requestSubmit();
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      say(status, "Saving…", null);
      saveOptions(plugin, controller.collect()).then(function (result) {
        if (result.ok) {
          draw(result.data);
          drawStatus(statusBox, result.data);
          say(status, "Saved. Every process uses these options now.", false);
        } else {
          var error = (result.data && result.data.error) || {};
          controller.showErrors(error.fields, api.errorMessage(result));
          say(status, "Not saved: see the messages above.", true);
        }
      });
    });
    return form;
  }

  // A rate in words, as the tool's own messages say it: "1 a second", "1 every 2 seconds".
  function paceText(perSecond) {
    if (typeof perSecond !== "number" || !(perSecond > 0)) return "";
    if (perSecond >= 1) return String(Math.round(perSecond * 100) / 100) + " a second";
    return "1 every " + String(Math.round(10 / perSecond) / 10) + " seconds";
  }

  function engineRow(engine) {
    var needs = [engine.needsKey ? "an API key" : "", engine.needsBaseURL ? "a base URL" : ""]
      .filter(Boolean).join(" and ");
    return el("tr", {}, [
      el("td", { text: engine.name }),
      el("td", { text: needs || "nothing" }),
      el("td", { text: paceText(engine.ratePerSecond) }),
      el("td", {}, engine.operators.length
        ? engine.operators.map(function (operator) { return el("code", { text: operator }); })
        : ["none"]),
    ]);
  }

  // A catalog that lists engines (web_search's) shows as a table the admin can open.
  function catalogBlock(plugin) {
    var box = el("details", { class: "catalog" }, [
      el("summary", {
        text: "Engines, what they need, their default rates, and the search operators they support",
      }),
    ]);
    var url = "/api/admin/plugins/" + encodeURIComponent(plugin.id) + "/catalog";
    api.request("GET", url).then(function (result) {
      var engines = result.ok && result.data && result.data.engines;
      if (!engines) { box.remove(); return; }
      var head = el("tr", {}, ["Engine", "Needs", "Default rate", "Operators"].map(function (name) {
        return el("th", { scope: "col", text: name });
      }));
      box.appendChild(el("table", {}, [
        el("thead", {}, [head]), el("tbody", {}, engines.map(engineRow)),
      ]));
    });
    return box;
  }

  function pluginBlock(plugin) {
    var headingId = "plugin-" + plugin.id + "-title";
    var statusBox = el("div", { class: "plugin-status", "aria-live": "polite" });
    drawStatus(statusBox, plugin);
    var section = el("section", { class: "card plugin", id: "plugin-" + plugin.id,
      "aria-labelledby": headingId }, [el("h2", { id: headingId, text: plugin.title || plugin.id }), statusBox]);
    if (plugin.hasCatalog) section.appendChild(catalogBlock(plugin));
    var hasFields = plugin.schema && Object.keys(plugin.schema.properties || {}).length;
    if (hasFields) section.appendChild(optionsForm(plugin, statusBox));
    else if (plugin.schema) section.appendChild(el("p", { class: "muted", text: "No options." }));
    return section;
  }

  api.request("GET", listUrl).then(function (result) {
    root.textContent = "";
    if (!result.ok) {
      root.appendChild(el("p", { class: "form-error", role: "alert", text: api.errorMessage(result) }));
      return;
    }
    result.data.plugins.forEach(function (plugin) { root.appendChild(pluginBlock(plugin)); });
    root.setAttribute("data-ready", "true");
  });
})();
