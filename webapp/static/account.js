/* Settings → Account: two new passwords that differ are caught before the form is sent, and
 * an error leaves its field once the field is typed into again (a stale error never stays).
 *
 * The server checks them too (webapp/auth/accounts.py), in the same words (the form's
 * data-differ), but a refused post comes back with all three fields empty, because passwords
 * are never written back into a page. Caught here, nothing is sent and nothing typed is lost.
 * Without this script the form still works, through the server's check alone.
 */
(function () {
  "use strict";

  var form = document.getElementById("password-form");
  if (!form) return;
  var fresh = document.getElementById("new_password");
  var again = document.getElementById("confirm_password");

  /** Return the field's error line, made as the server makes it when there is none yet. */
  function errorOf(input) {
    var error = document.getElementById(input.id + "-error");
    if (!error) {
      error = document.createElement("p");
      error.id = input.id + "-error";
      error.className = "field-error";
      error.setAttribute("role", "alert");
      input.insertAdjacentElement("afterend", error);
    }
    return error;
  }

  /** Take away the field's error line and its invalid mark, if it has them. */
  function clearError(input) {
    var error = document.getElementById(input.id + "-error");
    if (error) error.remove();
    input.removeAttribute("aria-invalid");
    input.removeAttribute("aria-describedby");
  }

  Array.prototype.forEach.call(form.querySelectorAll("input[type=password]"), function (input) {
    input.addEventListener("input", function () {
      clearError(input);
      // The two new passwords' mismatch is on the second: typing either may end it.
      if (input === fresh && fresh.value === again.value) clearError(again);
    });
  });

  form.addEventListener("submit", function (event) {
    if (fresh.value === again.value) return;
    event.preventDefault();
    var error = errorOf(again);
    error.textContent = form.getAttribute("data-differ");
    again.setAttribute("aria-invalid", "true");
    again.setAttribute("aria-describedby", error.id);
    again.focus();
  });
})();
