/* The pages that list things and create them by name (API tokens, Users, Providers): the list
 * loaded into its box, the create form with its name error beside the field, and a secret
 * (a token, a password) shown once with a copy button.
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var api = LookoutApi;

  /**
   * GET url and show what draw(data) returns (a node or a list of them) in box, or the API's
   * error; box gets data-ready once drawn. Return the request's promise.
   */
  function load(box, url, draw) {
    box.removeAttribute("data-ready");
    return api.request("GET", url).then(function (result) {
      box.textContent = "";
      if (!result.ok) {
        box.appendChild(el("p", { class: "form-error", role: "alert", text: api.errorMessage(result) }));
        return;
      }
      [].concat(draw(result.data)).forEach(function (node) { if (node) box.appendChild(node); });
      box.setAttribute("data-ready", "true");
    });
  }

  /**
   * On the submit of create.form, POST create.body() to create.url; a refused name is shown in
   * create.nameError beside create.nameInput (focused), the API's sentence in create.status.
   * On success the name is cleared and create.created(data) is called.
   */
  function createForm(create) {
    create.form.addEventListener("submit", function (event) {
      event.preventDefault();
      create.nameError.textContent = "";
      create.nameInput.removeAttribute("aria-invalid");
      say(create.status, "Creating…", null);
      api.request("POST", create.url, create.body()).then(function (result) {
        if (!result.ok) {
          var fields = ((result.data && result.data.error) || {}).fields || {};
          if (fields.name) {
            create.nameError.textContent = [].concat(fields.name).join(" ");
            create.nameInput.setAttribute("aria-invalid", "true");
            create.nameInput.focus();
          }
          say(create.status, api.errorMessage(result), true);
          return;
        }
        say(create.status, "", false);
        create.nameInput.value = "";
        create.created(result.data);
      });
    });
  }

  /**
   * Show a secret once in box: secret.intro (nodes and strings), a read-only text box (id,
   * label) holding secret.value with a copy button (copyName), and secret.warning; the text
   * box is focused and selected.
   */
  function showOnce(box, secret) {
    var input = el("input", { id: secret.id, type: "text", readonly: true,
      "aria-label": secret.label, spellcheck: "false" });
    input.value = secret.value;
    box.textContent = "";
    box.appendChild(el("p", {}, secret.intro));
    box.appendChild(el("div", { class: "token-value" }, [input,
      LookoutClipboard.button("Copy", secret.copyName, function () { return input.value; })]));
    box.appendChild(el("p", { class: "token-warning", text: secret.warning }));
    box.hidden = false;
    input.focus();
    input.select();
  }

  root.LookoutListPage = { load: load, createForm: createForm, showOnce: showOnce };
})(window);
