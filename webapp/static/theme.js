/* The colour theme: the system's (prefers-color-scheme) unless the person picked light or dark
 * in the header, remembered in this browser. Loaded in <head>, so the page never flashes the
 * other theme; the stylesheet does the rest from <html data-theme>. */
(function () {
  "use strict";

  var KEY = "lookout.theme";
  var CHOICES = ["light", "dark"];
  var root = document.documentElement;

  function stored() {
    try {
      var choice = localStorage.getItem(KEY);
      return CHOICES.indexOf(choice) >= 0 ? choice : "system";
    } catch (e) { return "system"; }  // storage refused (privacy settings): follow the system
  }

  function apply(choice) {
    if (CHOICES.indexOf(choice) >= 0) root.setAttribute("data-theme", choice);
    else root.removeAttribute("data-theme");
  }

  function remember(choice) {
    try {
      if (choice === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, choice);
    } catch (e) { /* the choice holds for this page only */ }
  }

  apply(stored());

  document.addEventListener("DOMContentLoaded", function () {
    var picker = document.getElementById("theme-picker");
    if (!picker) return;
    picker.value = stored();
    picker.addEventListener("change", function () {
      remember(picker.value);
      apply(picker.value);
    });
    // Another tab changed it: follow.
    window.addEventListener("storage", function (event) {
      if (event.key !== KEY && event.key !== null) return;
      picker.value = stored();
      apply(picker.value);
    });
  });
})();
