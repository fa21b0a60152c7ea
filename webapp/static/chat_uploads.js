/* The composer's attachments: each file chosen with the paper clip or dropped on the composer is
 * uploaded at once (POST /api/uploads, whose ingester extracts its text) and shown as a chip
 * until the message that carries it is sent. */
(function (root) {
  "use strict";

  var el = LookoutForms.element;

  function send(file) {
    var form = new FormData();
    form.append("file", file);
    var token = document.querySelector('meta[name="csrf-token"]').getAttribute("content");
    return fetch("/api/uploads", { method: "POST", body: form, credentials: "same-origin",
      headers: { "X-CSRFToken": token, "Accept": "application/json" } })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (data) {
          return { ok: response.ok, status: response.status, data: data };
        });
      }, function () { return { ok: false, status: 0, data: null }; });
  }

  /**
   * Return {ids(), busy(), count(), clear()}; options: {chips, input, button, dropTarget,
   * onChange(), showError(text)}. onChange runs whenever the list or an upload's state changes.
   */
  function create(options) {
    var files = [];

    function draw() {
      options.chips.textContent = "";
      files.forEach(function (file) {
        options.chips.appendChild(el("span", { class: "file-chip" + (file.id ? "" : " uploading") }, [
          LookoutIcons.icon("paperclip"), file.filename + (file.id ? "" : " (uploading…)"),
          file.id ? el("button", { type: "button", class: "chip-remove", text: "×",
            "aria-label": "Remove " + file.filename, onclick: function () { drop(file); } }) : null,
        ]));
      });
      options.onChange();
    }

    function drop(file) {
      files = files.filter(function (other) { return other !== file; });
      draw();
    }

    function upload(file) {
      var entry = { id: null, filename: file.name };
      files.push(entry);
      draw();
      send(file).then(function (result) {
        if (!result.ok) {
          options.showError(LookoutApi.errorMessage(result));
          drop(entry);
          return;
        }
        entry.id = result.data.id;
        draw();
      });
    }

    // Files picked or dropped together; the last pick's refusal no longer applies to them.
    function uploadAll(list) {
      options.showError("");
      Array.prototype.forEach.call(list, upload);
    }

    options.button.insertBefore(LookoutIcons.icon("paperclip"), options.button.firstChild);
    options.button.addEventListener("click", function () { options.input.click(); });
    options.input.addEventListener("change", function () {
      uploadAll(options.input.files);
      options.input.value = "";
    });
    acceptDrops(options.dropTarget, uploadAll);

    return {
      ids: function () { return files.map(function (file) { return file.id; }); },
      busy: function () { return files.some(function (file) { return !file.id; }); },
      count: function () { return files.length; },
      clear: function () { files = []; draw(); },
    };
  }

  function carriesFiles(event) {
    return !!event.dataTransfer && Array.prototype.indexOf.call(event.dataTransfer.types, "Files") >= 0;
  }

  // Files dropped on `target` are uploaded like chosen ones; a file dropped anywhere else on the
  // page is ignored rather than opened by the browser in place of the chat.
  function acceptDrops(target, uploadAll) {
    var depth = 0;  // dragenter and dragleave fire for every child crossed
    function show(on) { target.classList.toggle("dropping", on); }
    target.addEventListener("dragenter", function (event) {
      if (!carriesFiles(event)) return;
      depth++;
      show(true);
    });
    target.addEventListener("dragleave", function (event) {
      if (carriesFiles(event) && --depth <= 0) { depth = 0; show(false); }
    });
    target.addEventListener("dragover", function (event) {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    });
    target.addEventListener("drop", function (event) {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      depth = 0;
      show(false);
      uploadAll(event.dataTransfer.files);
    });
    ["dragover", "drop"].forEach(function (name) {
      window.addEventListener(name, function (event) {
        if (carriesFiles(event) && !target.contains(event.target)) {
          event.preventDefault();
          if (event.dataTransfer) event.dataTransfer.dropEffect = "none";
        }
      });
    });
  }

  root.LookoutChatUploads = { create: create };
})(window);
