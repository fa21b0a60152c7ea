/* Which source URLs may become links: the page's copy of tools/citations.py is_presentable_url.
 *
 * The rule: an absolute http(s) URL with a host, at most 2048 characters, without surrounding
 * whitespace or control characters. It follows Python's urllib.parse.urlsplit step by step (not
 * the browser's URL parser, which would accept "https:example.com"), and both copies are tested
 * against tests/data/url_cases.json (tests/webapp/test_links_js.py), so they cannot drift.
 *
 * Usable as a classic <script> (window.LookoutLinks.isPresentableUrl) and from Node (require).
 */
(function (root) {
  "use strict";

  var MAX_URL_CHARS = 2048;
  // Python's str.isspace() characters, so that url !== url.strip() agrees with Python.
  var PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029" +
    "\\u202f\\u205f\\u3000";
  var EDGE_SPACE = new RegExp("^[" + PY_SPACE + "]|[" + PY_SPACE + "]$");
  var CONTROL = /[\x00-\x1f\x7f]/;
  var SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*$/;
  var IPV_FUTURE = /^v[a-fA-F0-9]+\.[^\n]+$/;

  function isIPv4(text) {
    var octets = text.split(".");
    if (octets.length !== 4) return false;
    return octets.every(function (octet) {
      return /^[0-9]{1,3}$/.test(octet) && !(octet.length > 1 && octet[0] === "0") &&
        Number(octet) <= 255;
    });
  }

  // ipaddress.IPv6Address's rules: at most one "::", hextets of 1-4 hex digits, an optional
  // dotted IPv4 tail, an optional non-empty %scope.
  function isIPv6(text) {
    var scope = text.indexOf("%");
    if (scope >= 0) {
      var zone = text.slice(scope + 1);
      if (!zone || zone.indexOf("%") >= 0) return false;
      text = text.slice(0, scope);
    }
    if (!text) return false;
    var parts = text.split(":");
    if (parts.length < 3) return false;
    if (parts[parts.length - 1].indexOf(".") >= 0) {
      if (!isIPv4(parts.pop())) return false;
      parts.push("0", "0");
    }
    if (parts.length > 9) return false;
    var skip = -1;
    for (var i = 1; i < parts.length - 1; i++) {
      if (!parts[i]) {
        if (skip >= 0) return false;
        skip = i;
      }
    }
    var hi, lo;
    if (skip >= 0) {
      hi = skip;
      lo = parts.length - skip - 1;
      if (!parts[0] && --hi) return false;
      if (!parts[parts.length - 1] && --lo) return false;
      if (8 - (hi + lo) < 1) return false;
    } else {
      if (parts.length !== 8 || !parts[0] || !parts[parts.length - 1]) return false;
      hi = parts.length;
      lo = 0;
    }
    var used = parts.slice(0, hi).concat(lo ? parts.slice(parts.length - lo) : []);
    return used.every(function (hextet) { return /^[0-9A-Fa-f]{1,4}$/.test(hextet); });
  }

  // urlsplit raises ValueError for these netlocs; the URL is then not presentable.
  function netlocIsValid(netloc) {
    var open = netloc.indexOf("["), close = netloc.indexOf("]");
    if ((open >= 0) !== (close >= 0)) return false;
    if (open >= 0) {
      var bracketed = netloc.slice(open + 1).split("]")[0];
      var valid = bracketed[0] === "v" ? IPV_FUTURE.test(bracketed)
        : isIPv6(bracketed) && !isIPv4(bracketed);
      if (!valid) return false;
    }
    if (/^[\x00-\x7f]*$/.test(netloc)) return true;
    var bare = netloc.replace(/[@:#?]/g, "");
    var normal = bare.normalize("NFKC");
    return normal === bare || !/[/?#@:]/.test(normal);
  }

  function hostname(netloc) {
    var hostinfo = netloc.slice(netloc.lastIndexOf("@") + 1);
    var open = hostinfo.indexOf("[");
    if (open >= 0) return hostinfo.slice(open + 1).split("]")[0];
    return hostinfo.split(":")[0];
  }

  /** Return whether url may become a link: an absolute http(s) URL with a host. */
  function isPresentableUrl(url) {
    if (typeof url !== "string" || !url || Array.from(url).length > MAX_URL_CHARS) return false;
    if (EDGE_SPACE.test(url) || CONTROL.test(url)) return false;
    var colon = url.indexOf(":");
    if (colon <= 0 || !SCHEME.test(url.slice(0, colon))) return false;
    var scheme = url.slice(0, colon).toLowerCase();
    if (scheme !== "http" && scheme !== "https") return false;
    var rest = url.slice(colon + 1);
    if (rest.slice(0, 2) !== "//") return false;
    var end = rest.slice(2).search(/[/?#]/);
    var netloc = end < 0 ? rest.slice(2) : rest.slice(2, 2 + end);
    return netlocIsValid(netloc) && hostname(netloc) !== "";
  }

  var api = { isPresentableUrl: isPresentableUrl };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.LookoutLinks = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
