/* Calls to Lookout's JSON API from pages: same-origin, with the page's CSRF token. */
(function (root) {
  "use strict";

  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  /**
   * Send a request and resolve to {ok, status, data}; data is the parsed JSON body or null.
   * A network failure resolves too, as a 0 status with an error message the page can show.
   */
  function request(method, url, body) {
    var init = {
      method: method,
      credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRFToken": csrfToken() },
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (response) {
      return response.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
        return { ok: response.ok, status: response.status, data: data };
      });
    }, function () {
      var message = "The server could not be reached. Check your connection and try again.";
      return { ok: false, status: 0, data: { error: { message: message, fields: {} } } };
    });
  }

  // The API's own 401 sentence is for programs, which send a token; a page's session ended.
  var SIGNED_OUT = "You are signed out, so this was not done. Reload the page to sign in again.";

  /** Return the error sentence of a failed response. */
  function errorMessage(result) {
    if (result.status === 401) return SIGNED_OUT;
    var error = result.data && result.data.error;
    if (error && error.message) return error.message;
    return "The request failed (HTTP " + result.status + "). Try again.";
  }

  root.LookoutApi = { request: request, errorMessage: errorMessage };
})(window);
