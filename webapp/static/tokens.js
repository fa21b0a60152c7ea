/* The API tokens page: the user's tokens, a form to create one (shown once), and revoking. */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var when = LookoutForms.when;
  var api = LookoutApi;
  var pages = LookoutListPage;
  var root = document.getElementById("tokens");
  var listUrl = root.getAttribute("data-api");
  var nameInput = document.getElementById("token-name");
  var expiry = document.getElementById("token-expiry");
  var created = document.getElementById("token-created");

  /** Show a just-created token once, with a copy button and the warning. */
  function showCreated(body) {
    pages.showOnce(created, {
      intro: ["Your new token ", el("strong", { text: body.name }), ":"],
      id: "new-token-value",
      label: "New token " + body.name,
      value: body.token,
      copyName: "Copy the token " + body.name,
      warning: "Copy it now: it will not be shown again. If you lose it, revoke it and create another.",
    });
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
        el("td", { text: token.scopes.join(", ") }),
        el("td", { text: when(token.createdAt) }),
        el("td", { text: when(token.lastUsedAt) }),
        el("td", { text: when(token.expiresAt) }),
      ]);
      row.appendChild(revokeCell(token, row));
      body.appendChild(row);
    });
    return el("table", { class: "token-table" }, [
      el("thead", {}, [el("tr", {}, ["Name", "Scopes", "Created", "Last used", "Expires", ""].map(function (title) {
        return el("th", { scope: "col", text: title });
      }))]),
      body,
    ]);
  }

  function load() {
    return pages.load(root, listUrl, function (data) {
      if (data.tokens.length) return table(data.tokens);
      return el("p", { class: "muted", text: "You have no API tokens." });
    });
  }

  pages.createForm({
    form: document.getElementById("token-form"),
    url: listUrl,
    nameInput: nameInput,
    nameError: document.getElementById("token-name-error"),
    status: document.getElementById("token-form-status"),
    body: function () {
      var scopes = Array.prototype.map.call(
        document.querySelectorAll("#token-scopes input:checked"), function (box) { return box.value; });
      return { name: nameInput.value, scopes: scopes,
        expiresInDays: expiry.value ? parseInt(expiry.value, 10) : null };
    },
    created: function (token) {
      showCreated(token);
      load();
    },
  });

  load();
})();
