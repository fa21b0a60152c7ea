/* Following a turn's events over Server-Sent Events until it ends, resuming where it left off.
 *
 * EventSource reconnects by itself and sends Last-Event-ID, so the server resumes after the
 * last event seen. When the browser gives up (an error status), the page asks the turn whether it
 * ended, and otherwise opens a new source with ?after=<last id>, which the server reads the same
 * way. A stream the server closed to keep its user within their open streams (stream.closed)
 * waits until the page is focused again, then follows on from the last event seen.
 */
(function (root) {
  "use strict";

  var NAMES = root.LookoutTurnEvents.PROGRESS;
  var ENDINGS = root.LookoutTurnEvents.ENDINGS;
  var ENDED = Object.keys(ENDINGS).map(function (name) { return ENDINGS[name]; });
  var CLOSED = root.LookoutTurnEvents.STREAM_CLOSED;
  var RETRY_MS = 1500;

  /**
   * Follow `eventsUrl`: onEvent(name, data) for each event, onEnd(status, data) once at the end.
   * Returns {close()} to stop following (switching conversations).
   */
  function follow(eventsUrl, onEvent, onEnd) {
    var source = null, lastId = null, closed = false, timer = null, paused = false;

    function stop() {
      closed = true;
      paused = false;
      if (timer) clearTimeout(timer);
      if (source) source.close();
      root.removeEventListener("focus", resume);
      root.document.removeEventListener("visibilitychange", resume);
    }

    // The server closed this stream for the user's newest one: follow again once looked at.
    function pause() {
      paused = true;
      if (source) source.close();
      root.addEventListener("focus", resume);
      root.document.addEventListener("visibilitychange", resume);
    }

    function resume() {
      if (!paused || closed || root.document.visibilityState === "hidden") return;
      paused = false;
      root.removeEventListener("focus", resume);
      root.document.removeEventListener("visibilitychange", resume);
      check();
    }

    function parse(event) {
      if (event.lastEventId) lastId = event.lastEventId;
      try { return event.data ? JSON.parse(event.data) : {}; } catch (e) { return {}; }
    }

    function open() {
      if (closed) return;
      var url = eventsUrl + (lastId ? (eventsUrl.indexOf("?") < 0 ? "?" : "&") + "after=" +
        encodeURIComponent(lastId) : "");
      source = new EventSource(url);
      NAMES.forEach(function (name) {
        source.addEventListener(name, function (event) {
          if (!closed) onEvent(name, parse(event));
        });
      });
      Object.keys(ENDINGS).forEach(function (name) {
        source.addEventListener(name, function (event) {
          if (closed) return;
          var data = parse(event);
          stop();
          onEnd(ENDINGS[name], data);
        });
      });
      source.addEventListener(CLOSED, function () {
        if (!closed) pause();
      });
      source.onerror = function () {
        if (closed || paused || source.readyState !== EventSource.CLOSED) return;  // reconnecting
        timer = setTimeout(check, RETRY_MS);
      };
    }

    // The browser gave up: ask the turn itself whether it ended before following it again.
    function check() {
      LookoutApi.request("GET", eventsUrl.replace(/\/events$/, "")).then(function (result) {
        if (closed) return;
        if (result.ok && ENDED.indexOf(result.data.status) >= 0) {
          stop();
          onEnd(result.data.status, { error: result.data.error });
        } else if (result.status === 404 || result.status === 401) {
          stop();
          onEnd("failed", { error: LookoutApi.errorMessage(result) });
        } else {
          open();
        }
      });
    }

    open();
    return { close: stop };
  }

  root.LookoutChatStream = { follow: follow };
})(window);
