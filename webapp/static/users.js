/* The admins' Users page: the accounts, a form to create one, and what may be done to each.
 *
 * Every change goes through /api/admin/users (webapp/api/users.py), whose sentences are shown
 * beside the row (the last administrator cannot be disabled or demoted). Disable and Set password
 * sign the account out everywhere, so they ask first, in the row. A generated password
 * is shown once, in #password-shown. Columns are the COLUMNS list, and the entries of
 * window.LookoutUserColumns set by scripts loaded before this one (user_limits.js).
 */
(function () {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var when = LookoutForms.when;
  var api = LookoutApi;
  var pages = LookoutListPage;
  var root = document.getElementById("users");
  var listUrl = root.getAttribute("data-api");
  var me = root.getAttribute("data-me");
  var usageUrl = root.getAttribute("data-usage");
  var nameInput = document.getElementById("user-name");
  var adminInput = document.getElementById("user-admin");
  var shown = document.getElementById("password-shown");

  /** This month's usage of an account in a few words (UTC months, as the server counts),
   *  linking to the Usage page filtered to the account, where the details are. */
  function monthUsage(user) {
    var usage = user.usageThisMonth;
    if (!usage) return null;
    var n = function (value) { return Number(value || 0).toLocaleString(); };
    var monthStart = new Date().toISOString().slice(0, 8) + "01";
    var href = usageUrl + "?user=" + encodeURIComponent(user.id) + "&from=" + monthStart;
    return el("a", { href: href }, [
      el("span", { text: n(usage.turns) + " turns" }), " · ",
      el("span", { text: n(usage.inputTokens + usage.outputTokens) + " tokens" }), " · ",
      el("span", { text: n(usage.searches) + " searches" })]);
  }

  function isAdmin(user) { return user.roles.indexOf("admin") >= 0; }

  var COLUMNS = [
    { title: "Name", cell: function (user) {
      return el("th", { scope: "row" }, [user.name, user.id === me ? el("span", { class: "muted", text: " (you)" }) : null]);
    } },
    { title: "Roles", cell: function (user) {
      return el("td", { text: isAdmin(user) ? "administrator" : "user" });
    } },
    { title: "State", cell: function (user) {
      return el("td", {}, [el("span", { class: "badge " + (user.disabled ? "badge-failed" : "badge-active"),
        text: user.disabled ? "disabled" : "enabled" })]);
    } },
    { title: "Last sign-in", cell: function (user) { return el("td", { text: when(user.lastSignedInAt) }); } },
    { title: "Usage this month", cell: function (user) {
      return el("td", { class: "usage-month" }, [monthUsage(user)]);
    } },
  ].concat(window.LookoutUserColumns || []);  // more columns from their own scripts (limits)

  /** Show a password made just now, once, with a copy button and the warning. */
  function showPassword(name, password, what) {
    pages.showOnce(shown, {
      intro: [what + " ", el("strong", { text: name }), ". Its password:"],
      id: "shown-password",
      label: "Password of " + name,
      value: password,
      copyName: "Copy the password of " + name,
      warning: "Give it to its owner now: it will not be shown again. They can change it in Settings.",
    });
  }

  /** Send a change of one account; on success redraw its row and focus the same action. */
  function change(user, row, status, method, url, body, then) {
    say(status, "Saving…", null);
    return api.request(method, url, body).then(function (result) {
      if (!result.ok) {
        say(status, api.errorMessage(result), true);
        return;
      }
      var action = document.activeElement && document.activeElement.getAttribute("data-action");
      var fresh = drawRow(result.data);
      var limits = row.nextElementSibling;  // an open Limits form belongs to the old row
      if (limits && limits.classList.contains("limits-row")) limits.remove();
      row.replaceWith(fresh);
      if (then) then(result.data);
      else if (action) {
        var again = fresh.querySelector('[data-action="' + action + '"]');
        if (again) again.focus();
        say(fresh.querySelector(".row-status"), "Saved.", false);
      }
    });
  }

  function actionsCell(user, row) {
    var url = listUrl + "/" + encodeURIComponent(user.id);
    var status = el("span", { class: "status row-status", role: "status", "aria-live": "polite" });
    var confirmBox = el("span", { class: "confirm", hidden: true });
    /** Ask before an action that signs the account out everywhere: a sentence, Yes, Cancel. */
    function ask(button, sentence, yesText, onYes) {
      say(status, "", false);  // an earlier "Saved." would read as the answer to this question
      confirmBox.textContent = "";
      confirmBox.appendChild(document.createTextNode(sentence + " "));
      var yes = el("button", { type: "button", class: "confirm-revoke", text: yesText,
        onclick: function () { confirmBox.hidden = true; onYes(); } });
      confirmBox.appendChild(yes);
      confirmBox.appendChild(el("button", { type: "button", text: "Cancel",
        onclick: function () { confirmBox.hidden = true; button.focus(); } }));
      confirmBox.hidden = false;
      yes.focus();
    }
    var disable = el("button", { type: "button", "data-action": "disable",
      class: user.disabled ? "" : "danger",
      text: user.disabled ? "Enable" : "Disable",
      "aria-label": (user.disabled ? "Enable " : "Disable ") + user.name });
    disable.addEventListener("click", function () {
      var save = function () { change(user, row, status, "PATCH", url, { disabled: !user.disabled }); };
      if (user.disabled) { save(); return; }
      ask(disable, user.name + " is signed out everywhere at once, their API tokens stop working, " +
        "and they cannot sign in until enabled again.", "Yes, disable " + user.name, function () {
        disable.focus();  // so that the redrawn row puts the focus back on this action
        save();
      });
    });
    var role = el("button", { type: "button", "data-action": "role",
      text: isAdmin(user) ? "Take admin role" : "Make admin",
      "aria-label": isAdmin(user) ? "Take the admin role from " + user.name : "Make " + user.name + " an administrator",
      onclick: function () { change(user, row, status, "PATCH", url, { admin: !isAdmin(user) }); } });
    var password = el("button", { type: "button", "data-action": "password", text: "Set password",
      "aria-label": "Set a new password for " + user.name });
    password.addEventListener("click", function () {
      ask(password, "A generated password replaces the current one, and " + user.name +
        " is signed out everywhere.", "Yes, set a new password", function () {
        change(user, row, status, "POST", url + "/password", {}, function (changed) {
          showPassword(changed.name, changed.password, "New password for");
        });
      });
    });
    return el("td", { class: "actions-cell" }, [
      el("div", { class: "actions" }, [disable, role, password]), confirmBox, status]);
  }

  function drawRow(user) {
    var row = el("tr", { "data-user": user.id, "data-name": user.name });
    COLUMNS.forEach(function (column) {
      var cell = column.cell(user);
      cell.setAttribute("data-label", column.title);  // the cell's heading on a phone
      row.appendChild(cell);
    });
    row.appendChild(actionsCell(user, row));
    return row;
  }

  function table(users) {
    var body = el("tbody");
    users.forEach(function (user) { body.appendChild(drawRow(user)); });
    var titles = COLUMNS.map(function (column) { return column.title; }).concat(["Actions"]);
    return el("div", { class: "table-scroll" }, [el("table", { class: "token-table users-table" }, [
      el("thead", {}, [el("tr", {}, titles.map(function (title) {
        return el("th", { scope: "col", text: title });
      }))]),
      body,
    ])]);
  }

  function load() {
    return pages.load(root, listUrl, function (data) { return table(data.users); });
  }

  pages.createForm({
    form: document.getElementById("user-form"),
    url: listUrl,
    nameInput: nameInput,
    nameError: document.getElementById("user-name-error"),
    status: document.getElementById("user-form-status"),
    body: function () { return { name: nameInput.value, admin: adminInput.checked }; },
    created: function (user) {
      adminInput.checked = false;
      load().then(function () {
        showPassword(user.name, user.password, "Created the account");
      });
    },
  });

  load();
})();
