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
    return LookoutProviderForm.testControls({
      request: function () { return api.request("POST", providerUrl(provider, "/test")); },
      known: function () { return provider.models.map(function (model) { return model.name; }); },
      importModels: function (missing) { openEditor().addModels(missing); },
    });
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
            if (!result.ok) return say(status, api.errorMessage(result), true);
            card.remove();
            if (!root.querySelector("section.provider")) load();  // the last one: what to do first
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
    showEmptyState(false);  // the form is the first step it names
    made.focus();
  }

  function closeNewForm() {
    newBox.hidden = true;
    newBox.textContent = "";
    addButton.hidden = false;
    showEmptyState(true);
  }

  function showEmptyState(shown) {
    var empty = root.querySelector(".empty-state");
    if (empty) empty.hidden = !shown;
  }

  /** What to do first when there is no provider: nobody can chat until one is added. */
  function emptyState() {
    return el("section", { class: "card empty-state", "aria-labelledby": "providers-empty-title" }, [
      el("h2", { id: "providers-empty-title", text: "No model provider yet" }),
      el("p", { text: "Nobody can chat until a provider is added: the chat has no model to " +
        "answer with. Start here:" }),
      el("ol", {}, [
        el("li", { text: "Press Add provider and enter its name and base URL (an Ollama or " +
          "llama.cpp server, or an OpenAI-compatible service), and its API key if it needs one." }),
        el("li", { text: "Press Test connection, then Import models to fill in the models it offers." }),
        el("li", { text: "Tick Default for the model the chat should start on, then press Save provider." }),
      ]),
      el("button", { type: "button", class: "save", text: "Add the first provider",
        onclick: openNewForm }),
    ]);
  }

  function load() {
    return LookoutListPage.load(root, listUrl, function (data) {
      if (!data.providers.length) return emptyState();
      return data.providers.map(providerCard);
    });
  }

  addButton.addEventListener("click", openNewForm);
  load();
})();
