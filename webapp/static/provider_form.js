/* The provider form of the admin providers page: name, base URL, write-only key, model rows.
 *
 * LookoutProviderForm.make(provider, options) returns {form, addModels(names)}; provider is null
 * for a new one, whose form has its own Test connection (testing the base URL and key as typed,
 * through POST /api/admin/providers/test) and Import models. On submit it POSTs (new) or
 * PATCHes the provider and calls options.onSaved with the answer; a 400's per-field messages
 * appear beside their fields. The key field stays empty:
 * a blank key is left out of the body, which keeps the stored one.
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;
  var MODELS_ERROR = "Check the models: each needs a name of at most 200 characters, max " +
    "tokens of at least 16 and below its context, and a context of at least 512 tokens.";
  // The defaults of core/models/providers.py, shown as placeholders (README: "Models and
  // their settings").
  var DEFAULT_MAX_TOKENS = 2048;
  var DEFAULT_CONTEXT_TOKENS = 16384;

  /** A labelled field: {wrapper, control, error}. */
  function field(id, key, label, control, hint) {
    var error = el("p", { id: id + "-error", class: "field-error", "aria-live": "polite" });
    var hintBox = el("small", { id: id + "-hint", class: "hint" }, hint || []);
    control.id = id;
    control.name = key;
    control.setAttribute("aria-describedby", id + "-hint " + id + "-error");
    var wrapper = el("div", { class: "field", "data-field": key },
      [el("label", { for: id, text: label }), control, hintBox, error]);
    return { wrapper: wrapper, control: control, error: error };
  }

  /** The model rows: {fieldset, add(model), collect() -> models | null, error}. */
  function modelRows(prefix, models) {
    var rows = el("div", { class: "model-rows" });
    var error = el("p", { id: prefix + "-models-error", class: "field-error", "aria-live": "polite" });

    function renumber() {
      Array.prototype.forEach.call(rows.children, function (row, index) {
        var n = index + 1;
        row.querySelector(".model-name").setAttribute("aria-label", "Model " + n + " name");
        row.querySelector(".model-tools").setAttribute("aria-label", "Model " + n + " can use tools");
        row.querySelector(".model-default").setAttribute("aria-label", "Model " + n + " is the default");
        row.querySelector(".model-follow-ups").setAttribute("aria-label", "Model " + n + " suggests follow-up questions");
        row.querySelector(".model-max").setAttribute("aria-label", "Model " + n + " max tokens");
        row.querySelector(".model-context").setAttribute("aria-label", "Model " + n + " context");
        row.querySelector(".remove-model").setAttribute("aria-label", "Remove model " + n);
      });
    }

    function add(model) {
      var name = el("input", { type: "text", class: "model-name", maxlength: 200,
        placeholder: "model name, e.g. gpt-4o-mini" });
      name.value = model ? model.name : "";
      var tools = el("input", { type: "checkbox", class: "model-tools" });
      tools.checked = model ? model.tools !== false : true;
      var isDefault = el("input", { type: "checkbox", class: "model-default" });
      isDefault.checked = !!(model && model.default);
      isDefault.addEventListener("change", function () {  // one default: ticking one unticks the rest
        if (!isDefault.checked) return;
        Array.prototype.forEach.call(rows.querySelectorAll(".model-default"), function (other) {
          if (other !== isDefault) other.checked = false;
        });
      });
      var followUps = el("input", { type: "checkbox", class: "model-follow-ups" });
      followUps.checked = !!(model && model.followUps);
      var maxTokens = el("input", { type: "number", class: "model-max", min: 16, step: 1,
        placeholder: "max " + DEFAULT_MAX_TOKENS, title: "The most tokens one answer may take" });
      maxTokens.value = model && model.maxTokens ? model.maxTokens : "";
      var context = el("input", { type: "number", class: "model-context", min: 512, step: 1,
        placeholder: "context " + DEFAULT_CONTEXT_TOKENS, title: "The model's context in tokens" });
      context.value = model && model.contextTokens ? model.contextTokens : "";
      var row = el("div", { class: "model-row" }, [
        name,
        el("label", { class: "model-tools-label" }, [tools, " Tools"]),
        el("label", { class: "model-tools-label", title: "The model the chat selects for " +
          "someone who has not picked one" }, [isDefault, " Default"]),
        el("label", { class: "model-tools-label", title: "After each answer, three short " +
          "follow-up questions (one more model call)" }, [followUps, " Follow-ups"]),
        maxTokens,
        context,
        el("button", { type: "button", class: "remove-model", text: "Remove",
          onclick: function () { row.remove(); renumber(); } }),
      ]);
      rows.appendChild(row);
      renumber();
      return name;
    }

    (models || []).forEach(add);
    if (!rows.children.length) add(null);

    var fieldset = el("fieldset", { class: "models", "data-field": "models" }, [
      el("legend", { text: "Models" }),
      el("small", { class: "hint", text: "Tick Tools for models that can call tools (web search, web fetch). " +
        "Max tokens bounds one answer (default " + DEFAULT_MAX_TOKENS + "); context is the model's " +
        "context in tokens (default " + DEFAULT_CONTEXT_TOKENS + "), which every prompt is fitted into. " +
        "Tick Default for the model the chat selects for someone who has not picked one (one " +
        "across all providers; without one, the first model with tools). Tick Follow-ups to show three " +
        "short follow-up questions under each answer: one more model call per answer. Empty rows are ignored." }),
      rows,
      el("button", { type: "button", class: "add-model", text: "Add model",
        onclick: function () { add(null).focus(); } }),
      error,
    ]);

    function collect() {
      var seen = {};
      var out = [];
      var duplicate = null;
      Array.prototype.forEach.call(rows.children, function (row) {
        var name = row.querySelector(".model-name").value.trim();
        if (!name) return;
        if (seen[name]) duplicate = name;
        seen[name] = true;
        var model = { name: name, tools: row.querySelector(".model-tools").checked };
        if (row.querySelector(".model-default").checked) model.default = true;
        if (row.querySelector(".model-follow-ups").checked) model.followUps = true;
        var maxTokens = parseInt(row.querySelector(".model-max").value, 10);
        var context = parseInt(row.querySelector(".model-context").value, 10);
        if (maxTokens > 0) model.maxTokens = maxTokens;
        if (context > 0) model.contextTokens = context;
        out.push(model);
      });
      if (duplicate) {
        error.textContent = 'The model "' + duplicate + '" is listed twice. Remove one row.';
        return null;
      }
      return out;
    }

    function names() {
      return Array.prototype.map.call(rows.children, function (row) {
        return row.querySelector(".model-name").value.trim();
      });
    }

    return { fieldset: fieldset, add: add, collect: collect, names: names, error: error };
  }

  /**
   * A "Test connection" button with its status line and import box. options: request() -> the
   * API's promise, known() -> the model names configured already, importModels(found).
   * Returns {button, status, importBox}.
   */
  function testControls(options) {
    var say = LookoutForms.say;
    var status = el("span", { class: "status test-status", "aria-live": "polite" });
    var importBox = el("div", { class: "import" });
    var button = el("button", { type: "button", class: "test", text: "Test connection" });
    button.addEventListener("click", function () {
      var request = options.request();
      if (!request) return;  // the form said what is missing
      button.disabled = true;
      importBox.textContent = "";
      say(status, "Testing… a worker is asking the provider for its models.", null);
      request.then(function (result) {
        button.disabled = false;
        if (!result.ok) return say(status, api.errorMessage(result), true);
        if (!result.data.ok) return say(status, result.data.error, true);
        var listed = result.data.models;
        var found = result.data.found || listed.map(function (name) { return { name: name }; });
        say(status, "Connected. The provider lists " + listed.length + " model" +
          (listed.length === 1 ? "" : "s") + (listed.length ? ": " + listed.join(", ") : "") + "." +
          (result.data.note ? " " + result.data.note : ""), false);
        var known = options.known();
        var missing = found.filter(function (model) { return known.indexOf(model.name) < 0; });
        if (missing.length) {
          importBox.appendChild(el("button", { type: "button", class: "import-models",
            text: "Import models (" + missing.length + " new)",
            onclick: function () { importBox.textContent = ""; options.importModels(missing); } }));
        }
      });
    });
    return { button: button, status: status, importBox: importBox };
  }

  function make(provider, options) {
    var prefix = provider ? "provider-" + provider.id : "provider-new";
    var keyHint = provider && provider.keySet
      ? [el("span", { class: "secret-set", text: "Set — leave blank to keep." })]
      : ["Leave blank for a server that needs no key (Ollama, llama.cpp)."];
    var fields = {
      name: field(prefix + "-name", "name", "Name *", el("input", { type: "text", maxlength: 100 }),
        ['Shown before each model, as in "name/model". No "/".']),
      baseUrl: field(prefix + "-baseUrl", "baseUrl", "Base URL *", el("input", { type: "url" }),
        ["The API's address, often ending in /v1."]),
      apiKey: field(prefix + "-apiKey", "apiKey", "API key",
        el("input", LookoutForms.keyInput({ placeholder: provider && provider.keySet ? "••••••••" : "" })),
        keyHint),
    };
    fields.name.control.value = provider ? provider.name : "";
    fields.baseUrl.control.value = provider ? provider.baseUrl : "";
    var models = modelRows(prefix, provider ? provider.models : []);
    var general = el("p", { class: "form-error", role: "alert", hidden: true });
    var status = el("span", { class: "status", "aria-live": "polite" });
    // A new provider is tested as typed, before it is saved (the key goes to the worker sealed).
    var test = provider ? null : testControls({
      request: function () {
        var baseUrl = fields.baseUrl.control.value.trim();
        if (!baseUrl) {
          showErrors({ baseUrl: ["Enter the base URL to test, e.g. http://127.0.0.1:11434/v1."] }, "");
          fields.baseUrl.control.focus();
          return null;
        }
        showErrors({}, "");
        var body = { name: fields.name.control.value.trim(), baseUrl: baseUrl };
        if (fields.apiKey.control.value) body.apiKey = fields.apiKey.control.value;
        return api.request("POST", options.listUrl + "/test", body);
      },
      known: function () { return models.names(); },
      importModels: function (found) { addModels(found); },
    });
    var form = el("form", { class: "schema-form provider-form", novalidate: true }, [
      general, fields.name.wrapper, fields.baseUrl.wrapper, fields.apiKey.wrapper, models.fieldset,
      el("div", { class: "actions" }, [
        el("button", { type: "submit", class: "save", text: "Save provider" }),
        test ? test.button : null,
        el("button", { type: "button", text: "Cancel", onclick: options.onCancel }),
        status,
        test ? test.status : null,
      ]),
      test ? test.importBox : null,
    ]);

    function showErrors(errorFields, message) {
      var rest = [];
      Object.keys(fields).forEach(function (key) {
        fields[key].error.textContent = "";
        fields[key].control.removeAttribute("aria-invalid");
      });
      models.error.textContent = "";
      Object.keys(errorFields || {}).forEach(function (key) {
        var text = [].concat(errorFields[key]).join(" ");
        if (fields[key]) {
          fields[key].error.textContent = text;
          fields[key].control.setAttribute("aria-invalid", "true");
        } else if (key === "models") {  // a sentence about the list, or errors per row
          var said = [].concat(errorFields[key]).every(function (x) { return typeof x === "string"; });
          models.error.textContent = said ? text : MODELS_ERROR;
        } else {
          rest.push(text);
        }
      });
      general.textContent = [message].concat(rest).filter(Boolean).join(" ");
      general.hidden = !general.textContent;
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      showErrors({}, "");
      var list = models.collect();
      if (list === null) {
        LookoutForms.say(status, "Not saved: see the messages above.", true);
        return;
      }
      var body = { name: fields.name.control.value.trim(),
        baseUrl: fields.baseUrl.control.value.trim(), models: list };
      if (fields.apiKey.control.value) body.apiKey = fields.apiKey.control.value;
      status.textContent = "Saving…";
      status.className = "status";
      var request = provider
        ? api.request("PATCH", options.listUrl + "/" + encodeURIComponent(provider.id), body)
        : api.request("POST", options.listUrl, body);
      request.then(function (result) {
        if (result.ok) {
          options.onSaved(result.data);
          return;
        }
        var error = (result.data && result.data.error) || {};
        showErrors(error.fields, api.errorMessage(result));
        LookoutForms.say(status, "Not saved: see the messages above.", true);
      });
    });

    /** Append rows for the models not listed yet ({name, tools, contextTokens} as a connection
     * test found them: Tools ticked only where a tool call worked), say beside Save that they
     * are not saved yet, and return how many were added. */
    function addModels(found) {
      var present = models.names();
      var added = found.filter(function (model) { return present.indexOf(model.name) < 0; });
      if (added.length) {
        Array.prototype.slice.call(form.querySelectorAll(".model-row")).forEach(function (row) {
          if (!row.querySelector(".model-name").value.trim()) row.remove();
        });
      }
      added.forEach(function (model) {
        models.add({ name: model.name, tools: model.tools === true,
          contextTokens: model.contextTokens || null });
      });
      if (added.length) {  // filling the form saves nothing: say so beside the Save button
        status.textContent = (added.length === 1 ? "1 model was" : added.length + " models were") +
          " added to the form, not saved yet. Tools is ticked only where a test tool call " +
          "worked: check the others, then press Save provider.";
        status.className = "status unsaved";
      }
      return added.length;
    }

    return {
      form: form,
      focus: function () { fields.name.control.focus(); },
      addModels: addModels,
    };
  }

  root.LookoutProviderForm = { make: make, testControls: testControls };
})(window);
