/* The API tokens page: the user's tokens, a form to create one (shown once), and revoking. */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var when = LookoutForms.when;
  var api = LookoutApi;
  var root = document.getElementById("tokens");
  var listUrl = root.getAttribute("data-api");
  var form = document.getElementById("token-form");
  var nameInput = document.getElementById("token-name");
  var nameError = document.getElementById("token-name-error");
  var formStatus = document.getElementById("token-form-status");
  var created = document.getElementById("token-created");

  function copy(input, status) {
    function copied() { say(status, "Copied.", false); }
    function selectIt() {
      input.focus();
      input.select();
      var done = false;
      try { done = document.execCommand("copy"); } catch (e) { done = false; }
      if (done) copied();
      else say(status, "Select the token and copy it with Ctrl+C (⌘C).", true);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(input.value).then(copied, selectIt);
    } else {
      selectIt();
    }
  }

  /** Show a just-created token once, with a copy button and the warning. */
  function showCreated(body) {
    var input = el("input", { id: "new-token-value", type: "text", readonly: true,
      "aria-label": "New token " + body.name, spellcheck: "false" });
    input.value = body.token;
    var status = el("span", { class: "status", "aria-live": "polite" });
    created.textContent = "";
    created.appendChild(el("p", { text: "Your new token " }, [el("strong", { text: body.name }), ":"]));
    created.appendChild(el("div", { class: "token-value" }, [input,
      el("button", { type: "button", class: "copy", text: "Copy",
        onclick: function () { copy(input, status); } })]));
    created.appendChild(el("p", { class: "token-warning",
      text: "Copy it now: it will not be shown again. If you lose it, revoke it and create another." }));
    created.appendChild(status);
    created.hidden = false;
    input.focus();
    input.select();
  }

  function revokeCell(token, row) {
    var status = el("span", { class: "status", "aria-live": "polite" });
    var confirmBox = el("span", { class: "confirm", hidden: true });
    var button = el("button", { type: "button", class: "danger revoke",
      "aria-label": "Revoke " + token.name, text: "Revoke" });
    button.addEventListener("click", function () {
      confirmBox.textContent = "";
      confirmBox.appendChild(document.createTextNode("Programs using it will stop working. "));
      confirmBox.appendChild(el("button", { type: "button", class: "confirm-revoke",
        text: "Yes, revoke", onclick: function () {
          api.request("DELETE", listUrl + "/" + encodeURIComponent(token.id)).then(function (result) {
            if (result.ok) {
              row.remove();
              if (!root.querySelector("tbody tr")) load();
            } else {
              say(status, api.errorMessage(result), true);
            }
          });
        } }));
      confirmBox.appendChild(el("button", { type: "button", text: "Keep it",
        onclick: function () { confirmBox.hidden = true; button.hidden = false; button.focus(); } }));
      confirmBox.hidden = false;
      button.hidden = true;
    });
    return el("td", {}, [button, confirmBox, status]);
  }

  function table(tokens) {
    var body = el("tbody");
    tokens.forEach(function (token) {
      var row = el("tr", { "data-token": token.id }, [
        el("td", { text: token.name }),
        el("td", { text: when(token.createdAt) }),
        el("td", { text: when(token.lastUsedAt) }),
      ]);
      row.appendChild(revokeCell(token, row));
      body.appendChild(row);
    });
    return el("table", { class: "token-table" }, [
      el("thead", {}, [el("tr", {}, ["Name", "Created", "Last used", ""].map(function (title) {
        return el("th", { scope: "col", text: title });
      }))]),
      body,
    ]);
  }

  function load() {
    root.removeAttribute("data-ready");
    return api.request("GET", listUrl).then(function (result) {
      root.textContent = "";
      if (!result.ok) {
        root.appendChild(el("p", { class: "form-error", role: "alert",
          text: api.errorMessage(result) }));
        return;
      }
      if (result.data.tokens.length) root.appendChild(table(result.data.tokens));
      else root.appendChild(el("p", { class: "muted", text: "You have no API tokens." }));
      root.setAttribute("data-ready", "true");
    });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    nameError.textContent = "";
    nameInput.removeAttribute("aria-invalid");
    say(formStatus, "Creating…", false);
    api.request("POST", listUrl, { name: nameInput.value }).then(function (result) {
      if (!result.ok) {
        var error = (result.data && result.data.error) || {};
        var fields = error.fields || {};
        if (fields.name) {
          nameError.textContent = [].concat(fields.name).join(" ");
          nameInput.setAttribute("aria-invalid", "true");
        }
        say(formStatus, api.errorMessage(result), true);
        return;
      }
      say(formStatus, "", false);
      nameInput.value = "";
      showCreated(result.data);
      load();
    });
  });

  load();
})();
