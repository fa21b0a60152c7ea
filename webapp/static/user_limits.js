/* The Limits column of the admins' Users page: one user's own limits, read and set through
 * /api/admin/users/<id>/limits (webapp/api/user_limits.py).
 *
 * users.js draws the table from its COLUMNS and adds the entries of window.LookoutUserColumns;
 * this script (loaded before it) adds the Limits column: a disclosure that reads the user's
 * limits when opened, one field per limit (empty keeps the default, shown as a placeholder),
 * with what the user has used beside it.
 */
(function (root) {
  "use strict";

  var el = LookoutForms.element;
  var say = LookoutForms.say;
  var api = LookoutApi;

  function amount(value, unit) {
    if (unit === "MB") return (value / 1000000).toLocaleString(undefined, { maximumFractionDigits: 1 }) + " MB";
    return Number(value).toLocaleString();
  }

  /** "used 2 of 120" for the limits the user spends, "" for the per-answer ones. */
  function usedText(limit, used) {
    if (!used) return "";
    return "used " + amount(used.used, limit.unit) + " of " + amount(used.allowed, limit.unit);
  }

  function fieldsFor(user, data, form) {
    var used = {};
    data.remaining.forEach(function (row) { used[row.limit] = row; });
    data.limits.forEach(function (limit) {
      var id = "limit-" + user.id + "-" + limit.limit;
      var input = el("input", { id: id, name: limit.limit, type: "number", min: 1, step: 1,
        inputmode: "numeric", placeholder: "default " + limit.default,
        "aria-describedby": id + "-error" });
      if (limit.value !== null) input.value = String(limit.value);
      form.insertBefore(el("div", { class: "field", "data-field": limit.limit }, [
        el("label", { for: id, text: limit.label + (limit.unit ? " (" + limit.unit + ")" : "") }),
        input,
        el("small", { class: "hint", text: usedText(limit, used[limit.limit]) }),
        el("p", { id: id + "-error", class: "field-error", "aria-live": "polite" }),
      ]), form.lastChild);
    });
  }

  function save(form, status, url) {
    var body = {};
    Array.prototype.forEach.call(form.querySelectorAll("input[name]"), function (input) {
      var text = input.value.trim();
      // A negative number goes as a number too, to be told the range rather than "whole number".
      body[input.name] = text === "" ? null : (/^-?\d+$/.test(text) ? Number(text) : text);
      input.removeAttribute("aria-invalid");
      form.querySelector("#" + input.id + "-error").textContent = "";
    });
    say(status, "Saving…", null);
    api.request("PUT", url, body).then(function (result) {
      if (result.ok) { say(status, "Saved.", false); return; }
      var fields = ((result.data && result.data.error) || {}).fields || {};
      Object.keys(fields).forEach(function (name) {
        var input = form.querySelector('input[name="' + name + '"]');
        if (!input) return;
        input.setAttribute("aria-invalid", "true");
        form.querySelector("#" + input.id + "-error").textContent = [].concat(fields[name]).join(" ");
      });
      say(status, api.errorMessage(result), true);
    });
  }

  /**
   * Open the form in a row of its own under the user's, across the whole table (in its own
   * column it was some 75 px wide, its labels broken word by word); closing puts it back.
   */
  function showAcross(details, form) {
    var row = details.closest("tr");
    if (!row) return;
    var below = row.nextElementSibling;
    var open = below && below.classList.contains("limits-row") ? below : null;
    if (details.open && !open) {
      row.after(el("tr", { class: "limits-row" }, [
        el("td", { colspan: String(row.children.length) }, [form])]));
    } else if (!details.open && open) {
      details.appendChild(form);
      open.remove();
    }
  }

  function cell(user) {
    var url = "/api/admin/users/" + encodeURIComponent(user.id) + "/limits";
    var status = el("span", { class: "status", role: "status", "aria-live": "polite" });
    var form = el("form", { class: "schema-form limits-form", novalidate: true,
      "aria-label": "Limits of " + user.name }, [
      el("div", { class: "actions" }, [el("button", { type: "submit", class: "save", text: "Save limits" }), status]),
    ]);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      save(form, status, url);
    });
    var details = el("details", { class: "user-limits" }, [
      el("summary", { text: "Limits", "aria-label": "Limits of " + user.name }), form]);
    details.addEventListener("toggle", function () {
      showAcross(details, form);
      if (!details.open || form.getAttribute("data-ready")) return;
      say(status, "Loading…", null);
      api.request("GET", url).then(function (result) {
        if (!result.ok) { say(status, api.errorMessage(result), true); return; }
        fieldsFor(user, result.data, form);
        form.setAttribute("data-ready", "true");
        say(status, "Empty keeps the default.", false);
      });
    });
    return el("td", { class: "limits-cell" }, [details]);
  }

  root.LookoutUserColumns = (root.LookoutUserColumns || []).concat([{ title: "Limits", cell: cell }]);
})(window);
