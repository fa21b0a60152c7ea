/* Forms generated from the JSON Schema the plugin API serves (tools/schema.py's dialect).
 *
 * Strings and URLs become inputs, booleans checkboxes, integers number inputs with their
 * bounds, enums selects with their x-enum-labels, arrays of strings one-per-line textareas,
 * writeOnly fields empty key inputs ("set — leave blank to keep" when secretsSet says a
 * value is stored; see keyInput), and x-show-when fields are shown only while the named field holds one of the
 * listed values; hidden fields are not sent. Fields come in the schema's x-order when given. A stored enum value the schema no longer offers
 * (an uninstalled engine) stays selected as "<value> (not installed)".
 */
(function (root) {
  "use strict";

  /** Return a new element with attributes (properties for `on*`, `hidden`...) and children. */
  function element(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "text") node.textContent = value;
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else if (value === true) node.setAttribute(key, "");
      else node.setAttribute(key, String(value));
    });
    (children || []).forEach(function (child) {
      if (child) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function baseType(schema) {
    var type = schema.type;
    if (Array.isArray(type)) type = type.filter(function (t) { return t !== "null"; })[0];
    if (!type && schema.enum) type = "string";
    return type || "string";
  }

  function kindOf(schema) {
    var type = baseType(schema);
    if (schema.enum) return "enum";
    if (schema.writeOnly) return "secret";
    if (type === "boolean") return "boolean";
    if (type === "integer" || type === "number") return "number";
    if (type === "array" && schema.items && baseType(schema.items) === "string") return "lines";
    if (type === "array" || type === "object") return "json";
    return "string";
  }

  function makeSelect(id, schema, value, required) {
    var labels = schema["x-enum-labels"] || [];
    var select = element("select", { id: id });
    var known = schema.enum.some(function (choice) { return choice === value; });
    if (!known && (value === undefined || value === null || value === "")) {
      select.appendChild(element("option", { value: "", text: required ? "Choose…" : "—" }));
    }
    schema.enum.forEach(function (choice, index) {
      var label = labels[index] || String(choice);
      select.appendChild(element("option", { value: String(choice), text: label }));
    });
    if (!known && value !== undefined && value !== null && value !== "") {
      select.appendChild(element("option", {
        value: String(value), text: value + " (not installed)", "data-missing": "true",
      }));
    }
    select.value = known || (value !== undefined && value !== null) ? String(value) : "";
    return select;
  }

  /* The attributes of an input for an API key: a text input that nothing remembers.
   * A password input makes browsers offer to save the key as the site's password (new-password
   * even invites them to suggest one), and they ignore autocomplete="off" on password inputs;
   * on a text input they honour it. No spell checker reads the key, and none capitalises it. */
  function keyInput(attrs) {
    var out = { type: "text", autocomplete: "off", spellcheck: "false", autocapitalize: "off" };
    Object.keys(attrs).forEach(function (key) { out[key] = attrs[key]; });
    return out;
  }

  function makeControl(id, key, schema, value, required, secretSet) {
    switch (kindOf(schema)) {
      case "enum":
        return makeSelect(id, schema, value, required);
      case "secret":
        return element("input", keyInput({ id: id, placeholder: secretSet ? "••••••••" : "" }));
      case "boolean":
        var box = element("input", { id: id, type: "checkbox" });
        box.checked = value === true;
        return box;
      case "number":
        var number = element("input", {
          id: id, type: "number", min: schema.minimum, max: schema.maximum,
          step: baseType(schema) === "integer" ? 1 : "any",
        });
        number.value = value === undefined || value === null ? "" : String(value);
        return number;
      case "lines":
        var lines = element("textarea", { id: id, rows: 3 });
        lines.value = Array.isArray(value) ? value.join("\n") : "";
        return lines;
      case "json":
        var raw = element("textarea", { id: id, rows: 3, spellcheck: "false" });
        raw.value = value === undefined ? "" : JSON.stringify(value, null, 2);
        return raw;
      default:
        var input = element("input", {
          id: id, type: schema.format === "uri" ? "url" : "text", maxlength: schema.maxLength,
        });
        input.value = value === undefined || value === null ? "" : String(value);
        return input;
    }
  }

  function readControl(kind, control) {
    if (kind === "boolean") return control.checked;
    var text = control.value;
    if (kind === "lines") {
      return text.split("\n").map(function (line) { return line.trim(); }).filter(Boolean);
    }
    if (!text.trim()) return undefined;
    if (kind === "number") {
      var number = Number(text);
      return text.trim() !== "" && isFinite(number) ? number : text;
    }
    if (kind === "json") {
      try { return JSON.parse(text); } catch (e) { return text; }
    }
    return text;
  }

  /**
   * Render the fields of `spec.schema` into `container`; return {collect, showErrors}.
   * spec: {schema, values, secretsSet, idPrefix}.
   */
  function render(container, spec) {
    var properties = (spec.schema && spec.schema.properties) || {};
    var required = (spec.schema && spec.schema.required) || [];
    var values = spec.values || {};
    var secretsSet = spec.secretsSet || {};
    var prefix = spec.idPrefix || "field";
    var fields = {};
    container.textContent = "";
    var general = element("p", { class: "form-error", role: "alert", hidden: true });
    container.appendChild(general);

    var order = (spec.schema && spec.schema["x-order"]) || [];
    var keys = order.filter(function (key) { return key in properties; }).concat(
      Object.keys(properties).filter(function (key) { return order.indexOf(key) < 0; }));
    keys.forEach(function (key) {
      var schema = properties[key];
      var id = prefix + "-" + key;
      var kind = kindOf(schema);
      var isRequired = required.indexOf(key) >= 0;
      var value = key in values ? values[key] : schema.default;
      var control = makeControl(id, key, schema, value, isRequired, secretsSet[key]);
      var hint = element("small", { id: id + "-hint", class: "hint" });
      if (schema.description) hint.appendChild(document.createTextNode(schema.description));
      if (kind === "secret" && secretsSet[key]) {
        hint.appendChild(element("span", { class: "secret-set", text: " Set — leave blank to keep." }));
      }
      if (kind === "lines") hint.appendChild(document.createTextNode(" One per line."));
      var error = element("p", { id: id + "-error", class: "field-error", "aria-live": "polite" });
      control.setAttribute("aria-describedby", id + "-hint " + id + "-error");
      control.name = key;
      var title = schema.title || key;
      var label = element("label", { for: id, text: title + (isRequired ? " *" : "") });
      var wrapper = element("div", { class: "field field-" + kind, "data-field": key },
        kind === "boolean" ? [control, label, hint, error] : [label, control, hint, error]);
      container.appendChild(wrapper);
      fields[key] = { kind: kind, control: control, wrapper: wrapper, error: error,
        showWhen: schema["x-show-when"] };
    });

    function currentValue(key) {
      var field = fields[key];
      return field ? readControl(field.kind, field.control) : values[key];
    }

    function isShown(key) {
      var rule = fields[key].showWhen;
      if (!rule) return true;
      return Object.keys(rule).every(function (other) {
        if (fields[other] && !isShown(other)) return false;
        return rule[other].indexOf(currentValue(other)) >= 0;
      });
    }

    function updateVisibility() {
      Object.keys(fields).forEach(function (key) { fields[key].wrapper.hidden = !isShown(key); });
    }

    container.addEventListener("change", updateVisibility);
    container.addEventListener("input", updateVisibility);
    updateVisibility();

    return {
      /** Return the values to send: shown fields only, blanks left out. */
      collect: function () {
        var out = {};
        Object.keys(fields).forEach(function (key) {
          if (!isShown(key)) return;
          var value = readControl(fields[key].kind, fields[key].control);
          if (value !== undefined) out[key] = value;
        });
        return out;
      },
      /** Show a 400's per-field messages beside their fields, others above the form. */
      showErrors: function (errorFields, message) {
        var rest = [];
        Object.keys(fields).forEach(function (key) {
          fields[key].error.textContent = "";
          fields[key].control.removeAttribute("aria-invalid");
        });
        Object.keys(errorFields || {}).forEach(function (key) {
          var text = [].concat(errorFields[key]).join(" ");
          var field = fields[key.split(".")[0]];
          if (field) {
            field.error.textContent = text;
            field.control.setAttribute("aria-invalid", "true");
            field.wrapper.hidden = false;
          } else {
            rest.push(key === "_schema" ? text : key + ": " + text);
          }
        });
        var summary = [message].concat(rest).filter(Boolean).join(" ");
        general.textContent = summary;
        general.hidden = !summary;
      },
    };
  }

  /** Show a form's outcome in its status element: "ok" or "error" styling, other classes kept. */
  /** Show ``text`` in a status line: an error (isError true), done (false), or still under
   * way (null: neither, so nothing reads "saved" before the server said so). */
  function say(status, text, isError) {
    status.textContent = text;
    status.classList.toggle("ok", isError === false);
    status.classList.toggle("error", isError === true);
  }

  /** A date from the API (UTC, with or without an offset) in the reader's local time. */
  function when(iso) {
    if (!iso) return "never";
    var hasZone = /(Z|[+-]\d\d:?\d\d)$/.test(iso);
    var date = new Date(hasZone ? iso : iso + "Z");
    return isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  root.LookoutForms = { element: element, keyInput: keyInput, render: render, say: say, when: when };
})(window);
