/* The chat page's model picker: the models of GET /api/models, kept fresh, and the one to use.
 *
 * A fresh browser starts on the model an admin marked as the default (Admin → Providers), else
 * on the first model that can use tools. Opening a conversation selects
 * the model it last used; one that is no longer installed stays selected as "NAME (not
 * installed)" with a sentence saying so, and is never swapped for another silently. The list is
 * read again whenever the page comes back into view, so a removed provider's models leave it.
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var api = LookoutApi;
  var KEY = "lookout.model";

  /**
   * options: {picker, notice, onChange, showError, providersUrl (an admin's link to add a
   * provider, null for others)}; returns the picker's controller.
   */
  function create(options) {
    var picker = options.picker, notice = options.notice;
    var models = null;     // the installed models, once read
    var missing = null;    // the id of a model no longer installed that stays selected

    function find(id) {
      return (models || []).filter(function (model) { return model.id === id; })[0] || null;
    }

    function preferred() {
      var saved = localStorage.getItem(KEY);
      if (find(saved)) return saved;
      var chosen = (models || []).filter(function (model) { return model.default; })[0];
      if (chosen) return chosen.id;
      var withTools = (models || []).filter(function (model) { return model.tools; })[0];
      return withTools ? withTools.id : models && models.length ? models[0].id : "";
    }

    function drawNotice() {
      notice.textContent = "";
      notice.hidden = !missing;
      if (!missing) return;
      if (models && models.length) {
        notice.textContent = "The model " + missing + " is not installed any more, so it cannot " +
          "answer. Pick another model to go on.";
        return;
      }
      // Nothing to pick: say who can add a model instead of asking for a choice there is not.
      notice.textContent = "The model " + missing + " is not installed any more, and no other " +
        "model is installed, so Lookout cannot answer until an administrator adds one. ";
      if (options.providersUrl) {
        notice.appendChild(el("a", { href: options.providersUrl, text: "Add a provider in Admin → Providers" }));
        notice.appendChild(document.createTextNode("."));
      }
    }

    /** Fill the picker, selecting `wanted` (kept as "not installed" when it is gone). */
    function fill(wanted) {
      picker.textContent = "";
      (models || []).forEach(function (model) {
        picker.appendChild(el("option", { value: model.id,
          text: model.id + (model.tools ? "" : " (no tools)") }));
      });
      missing = wanted && !find(wanted) ? wanted : null;
      if (missing) {
        picker.appendChild(el("option", { value: missing, text: missing + " (not installed)",
          "data-missing": "true" }));
      }
      if (models && !models.length && !missing) {
        picker.appendChild(el("option", { value: "", text: "No models" }));
      }
      picker.value = wanted || "";
      drawNotice();
    }

    /** Read the models again, keeping the selection (or marking it not installed). */
    function load() {
      return api.request("GET", "/api/models").then(function (result) {
        var selected = models ? picker.value : "";  // read now: the user may have picked since
        if (result.ok) {
          models = result.data.models;
          fill(selected || preferred());
        } else {
          options.showError(api.errorMessage(result));
          if (!models) models = [];
        }
        options.onChange();
      });
    }

    picker.addEventListener("change", function () {
      if (find(picker.value)) {
        localStorage.setItem(KEY, picker.value);
        fill(picker.value);  // a model no longer installed leaves the list once another is picked
      }
      options.onChange();
    });
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible" && models) load();
    });
    window.addEventListener("focus", function () { if (models) load(); });

    return {
      load: load,
      /** The installed models ([] when none), or null before the first read. */
      list: function () { return models; },
      /** The selected model {id, tools}, {id, missing: true}, or null. */
      current: function () {
        if (missing && picker.value === missing) return { id: missing, missing: true };
        return find(picker.value);
      },
      /** The sentence for sending with a model that is not installed, or "". */
      problem: function () { return missing && picker.value === missing ? notice.textContent : ""; },
      /** Select the model a conversation last used (null: a new chat, the preferred model). */
      useConversation: function (modelId) {
        if (!models) return;
        fill(modelId || preferred());
        options.onChange();
      },
    };
  }

  root.LookoutChatModels = { create: create };
})(window);
