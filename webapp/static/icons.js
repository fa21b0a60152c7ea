/* Small line icons drawn as inline SVG, so they show the same everywhere (no emoji font needed)
 * and need no inline markup the Content Security Policy would refuse. */
(function (root) {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  // Each icon is a list of path data on a 24×24 grid, stroked with the text colour.
  var PATHS = {
    paperclip: ["M21 11.5 12.5 20a5 5 0 0 1-7-7l8.5-8.5a3.3 3.3 0 0 1 4.7 4.7L10.2 17.7a1.7 1.7 0 0 1-2.4-2.4L15.5 7.6"],
    copy: ["M9 9h11v11H9z", "M5 15H4V4h11v1"],
    check: ["M5 12.5 10 17.5 19 7"],
  };

  /** Return an <svg> element drawing the named icon, hidden from screen readers. */
  function icon(name) {
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 24 24");
    svg.setAttribute("class", "icon icon-" + name);
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    PATHS[name].forEach(function (d) {
      var path = document.createElementNS(SVG, "path");
      path.setAttribute("d", d);
      svg.appendChild(path);
    });
    return svg;
  }

  root.LookoutIcons = { icon: icon };
})(window);
