/* A running turn on the chat page: its events drawn into the live reply, and what its end leaves.
 *
 * A turn is followed over its events (LookoutChatStream) into state.live's parts, redrawn once
 * a frame; when it ends, a failure or a stop is kept beside its message, what streamed is kept
 * until the stored reply is read, and the conversation is read again (once more a moment later
 * when that read raced the ending's write).
 */
(function (root) {
  "use strict";

  var api = root.LookoutApi;
  var EVENTS = root.LookoutTurnEvents;
  var STORED_AFTER_STOP_MS = 2000;
  var QUEUED_LONG_MS = 5000;  // a worker takes a message in well under a second when one is free

  /**
   * Return {follow(turn, eventsUrl), attach(turnId)}; ctx: {state, draw(), drawLive(),
   * addMessage(id, parentId), loadConversation(id) -> Promise, reloadIfOpen(id), reloadSidebar()}.
   */
  function create(ctx) {
    var state = ctx.state;

    function onEvent(name, data) {
      var live = state.live, parts = live.parts, last = parts[parts.length - 1];
      if (name === EVENTS.TURN_STARTED) {
        live.status = "running";
        live.assistantMessageId = data.assistantMessageId;
        if (state.conversation && !state.conversation.messages.some(function (m) { return m.id === data.assistantMessageId; })) {
          ctx.addMessage(data.assistantMessageId, live.userMessageId);
        }
        ctx.draw();
        return;
      }
      if (name === EVENTS.REASONING_DELTA) {
        if (last && last.type === "reasoning") last.text += data.text;
        else parts.push({ type: "reasoning", text: data.text });
      } else if (name === EVENTS.TEXT_DELTA) {
        if (last && last.type === "text") last.text += data.text;
        else parts.push({ type: "text", text: data.text });
      } else if (name === EVENTS.TOOL_STARTED) {
        parts.push({ type: "tool-call", id: data.callId, name: data.name, input: data.input });
      } else if (name === EVENTS.TOOL_FINISHED) {
        parts.push({ type: "tool-result", callId: data.callId, name: data.name, outcome: data.outcome,
          output: data.output, error: data.error });
      } else if (name === EVENTS.SOURCE_ADDED) {
        parts.push({ type: "source", url: data.url, title: data.title });
      }
      ctx.drawLive();
    }

    function onEnd(turn, status, data) {
      var live = state.live;
      if (!live || live.turnId !== turn.id) return;
      live.status = status;
      var settle = Promise.resolve(data.error);
      if (status === "failed" && !data.error) {
        settle = api.request("GET", "/api/turns/" + turn.id).then(function (r) { return r.ok ? r.data.error : null; });
      }
      settle.then(function (error) {
        if (status === "failed") {
          var text = error || "This reply failed.";
          state.failures[live.userMessageId] = text;
          if (live.assistantMessageId) state.failures[live.assistantMessageId] = text;
        } else if (status === "cancelled" && !live.assistantMessageId) {
          state.failures[live.userMessageId] = "Stopped before Lookout replied.";
        }
        if (live.assistantMessageId) state.streamed[live.assistantMessageId] = live.parts;
        state.follower = null;
        state.live = null;
        var id = turn.conversationId;
        // Still following this turn means its conversation is the one shown, even when the
        // first read of a conversation its first message started has not answered yet: read it
        // again now, so that a read begun before the turn ended cannot leave it "running".
        if (!state.conversation || state.conversation.id === id) {
          ctx.loadConversation(id).then(function () {
            // A read that raced the ending's write still has the reply running, without its
            // checked citations: read the stored reply once more.
            if (status === "cancelled" || !storedEnd(live.assistantMessageId)) {
              setTimeout(function () { ctx.reloadIfOpen(id); }, STORED_AFTER_STOP_MS);
            }
          });
        }
        ctx.reloadSidebar();
      });
    }

    /** Whether the shown conversation holds the reply `id` as stored once its turn ended. */
    function storedEnd(id) {
      var reply = id && state.conversation && state.conversation.messages.filter(function (m) {
        return m.id === id; })[0];
      return !id || (!!reply && reply.status !== "running" && reply.status !== "queued");
    }

    /** The stored parts of a reply a turn continues, copied: its events add to them. */
    function continuedParts(turn) {
      if (!turn.continues || !state.conversation) return [];
      var reply = state.conversation.messages.filter(function (m) { return m.id === turn.assistantMessageId; })[0];
      return reply ? JSON.parse(JSON.stringify(reply.parts)) : [];
    }

    /** Follow a turn's events; `turn` needs id, conversationId and userMessageId. */
    function follow(turn, eventsUrl) {
      if (state.follower) state.follower.close();
      var live = state.live = { turnId: turn.id, userMessageId: turn.userMessageId,
        status: turn.status || "queued", assistantMessageId: turn.assistantMessageId || null,
        parts: continuedParts(turn), queuedLong: false };
      setTimeout(function () {
        if (state.live !== live || live.status !== "queued") return;
        live.queuedLong = true;
        ctx.draw();
      }, QUEUED_LONG_MS);
      state.follower = LookoutChatStream.follow(eventsUrl || "/api/turns/" + turn.id + "/events",
        onEvent, function (status, data) { onEnd(turn, status, data); });
    }

    function attach(turnId) {
      api.request("GET", "/api/turns/" + encodeURIComponent(turnId)).then(function (result) {
        if (!result.ok || state.live || !state.conversation ||
          result.data.conversationId !== state.conversation.id) return;
        follow(result.data);
        ctx.draw();
      });
    }

    return { follow: follow, attach: attach };
  }

  root.LookoutChatLive = { create: create };
})(window);
