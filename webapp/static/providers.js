/* The admin providers page: each provider's models and key state; add, edit, delete, test.
 *
 * "Test connection" asks the API, which waits for a worker to list the provider's models and try
 * a tool call on the first few; when the provider offers models not configured here, "Import
 * models" opens the edit form with them (Tools ticked where the tool call worked, the context
 * the server reported).
 */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var api = LookoutApi;
  var root = document.getElementById("providers");
  var newBox = document.getElementById("provider-new");
  var addButton = document.getElementById("add-provider");
  var listUrl = root.getAttribute("data-api");


  function providerUrl(provider, suffix) {
    return listUrl + "/" + encodeURIComponent(provider.id) + (suffix || "");
  }

  function modelList(provider) {
    if (!provider.models.length) {
      return el("p", { class: "muted", text: "No models yet: edit the provider to add some." });
    }
    return el("ul", { class: "model-list" }, provider.models.map(function (model) {
      return el("li", {}, [el("code", { text: model.name }),
        model.tools ? el("span", { class: "tag", text: "tools" }) : null,
        model.default ? el("span", { class: "tag tag-default", text: "default" }) : null,
        model.maxTokens ? el("span", { class: "tag", text: "max " + model.maxTokens }) : null,
        model.contextTokens ? el("span", { class: "tag", text: "context " + model.contextTokens }) : null]);
    }));
  }

  function summary(provider) {
    return el("dl", { class: "provider-facts" }, [
      el("dt", { text: "Base URL" }), el("dd", {}, [el("code", { text: provider.baseUrl })]),
      el("dt", { text: "API key" }),
      el("dd", {}, [el("span", { class: "badge " + (provider.keySet ? "badge-active" : "badge-none"),
        text: provider.keySet ? "Set" : "Not set" })]),
      el("dt", { text: "Models" }), el("dd", {}, [modelList(provider)]),
    ]);
  }

  function testControls(provider, openEditor) {
    var status = el("span", { class: "status test-status", "aria-live": "polite" });
    var importBox = el("div", { class: "import" });
    var button = el("button", { type: "button", class: "test", text: "Test connection" });
    button.addEventListener("click", function () {
      button.disabled = true;
      importBox.textContent = "";
      say(status, "Testing… a worker is asking the provider for its models.", false);
      status.classList.remove("ok");
      api.request("POST", providerUrl(provider, "/test")).then(function (result) {
        button.disabled = false;
        if (!result.ok) return say(status, api.errorMessage(result), true);
        if (!result.data.ok) return say(status, result.data.error, true);
        var listed = result.data.models;
        var found = result.data.found || listed.map(function (name) { return { name: name }; });
        say(status, "Connected. The provider lists " + listed.length + " model" +
          (listed.length === 1 ? "" : "s") + (listed.length ? ": " + listed.join(", ") : "") + "." +
          (result.data.note ? " " + result.data.note : ""), false);
        var known = provider.models.map(function (model) { return model.name; });
        var missing = found.filter(function (model) { return known.indexOf(model.name) < 0; });
        if (missing.length) {
          importBox.appendChild(el("button", { type: "button", class: "import-models",
            text: "Import models (" + missing.length + " new)",
            onclick: function () { openEditor().addModels(missing); } }));
        }
      });
    });
    return { button: button, status: status, importBox: importBox };
  }

  function deleteControls(provider, card) {
    var confirmBox = el("div", { class: "confirm", role: "group", hidden: true });
    var button = el("button", { type: "button", class: "danger", text: "Delete" });
    var status = el("span", { class: "status", "aria-live": "polite" });
    button.addEventListener("click", function () {
      confirmBox.textContent = "";
      confirmBox.appendChild(el("span", { text: "Delete " + provider.name +
        "? Its models leave the model list; turns already run keep their record. " }));
      confirmBox.appendChild(el("button", { type: "button", class: "danger confirm-delete",
        text: "Yes, delete", onclick: function () {
          api.request("DELETE", providerUrl(provider)).then(function (result) {
            if (result.ok) card.remove();
            else say(status, api.errorMessage(result), true);
          });
        } }));
      confirmBox.appendChild(el("button", { type: "button", text: "Keep it",
        onclick: function () { confirmBox.hidden = true; button.focus(); } }));
      confirmBox.hidden = false;
    });
    return { button: button, confirmBox: confirmBox, status: status };
  }

  function providerCard(provider) {
    var headingId = "provider-" + provider.id + "-title";
    var card = el("section", { class: "card provider", id: "provider-" + provider.id,
      "data-name": provider.name, "aria-labelledby": headingId });
    var editor = null;

    function openEditor() {
      if (editor) return editor;
      editor = LookoutProviderForm.make(provider, {
        listUrl: listUrl,
        onSaved: function (saved) { card.replaceWith(providerCard(saved)); },
        onCancel: function () { card.replaceWith(providerCard(provider)); },
      });
      card.textContent = "";
      card.appendChild(el("h2", { id: headingId, text: "Edit " + provider.name }));
      card.appendChild(editor.form);
      editor.focus();
      return editor;
    }

    var test = testControls(provider, openEditor);
    var remove = deleteControls(provider, card);
    [
      el("h2", { id: headingId, text: provider.name }),
      summary(provider),
      el("div", { class: "actions" }, [
        el("button", { type: "button", class: "edit", text: "Edit", onclick: openEditor }),
        test.button, remove.button, test.status, remove.status,
      ]),
      test.importBox,
      remove.confirmBox,
    ].forEach(function (child) { card.appendChild(child); });
    return card;
  }

  function openNewForm() {
    var made = LookoutProviderForm.make(null, {
      listUrl: listUrl,
      onSaved: function () { closeNewForm(); load(); },
      onCancel: closeNewForm,
    });
    newBox.textContent = "";
    newBox.className = "card provider";
    newBox.appendChild(el("h2", { text: "New provider" }));
    newBox.appendChild(made.form);
    newBox.hidden = false;
    addButton.hidden = true;
    made.focus();
  }

  function closeNewForm() {
    newBox.hidden = true;
    newBox.textContent = "";
    addButton.hidden = false;
  }

  function load() {
    return LookoutListPage.load(root, listUrl, function (data) {
      if (!data.providers.length) {
        return el("p", { class: "muted", text: "No providers yet. Add one to let people chat." });
      }
      return data.providers.map(providerCard);
    });
  }

  addButton.addEventListener("click", openNewForm);
  load();
})();
