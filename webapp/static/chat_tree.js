/* The message tree of a conversation: which path the page shows and the branches at each fork.
 *
 * Messages link to their parent through parentId; edits and regenerations make siblings. The
 * page shows one path from a root to a leaf: at each fork the child the user picked, else the
 * child whose branch holds the newest message, so a fresh reply is always on screen.
 *
 * Usable as a classic <script> (window.LookoutChatTree) and from Node (require).
 */
(function (root) {
  "use strict";

  var ROOT = "";

  /** Return {children: parentKey -> [messages], newest: id -> rank of its branch's newest}. */
  function index(messages) {
    var children = {}, order = {}, newest = {};
    messages.forEach(function (message, position) {
      var key = message.parentId || ROOT;
      (children[key] = children[key] || []).push(message);
      order[message.id] = position;  // the API lists messages oldest first
    });
    function rank(message) {
      if (message.id in newest) return newest[message.id];
      var best = order[message.id];
      (children[message.id] || []).forEach(function (child) { best = Math.max(best, rank(child)); });
      newest[message.id] = best;
      return best;
    }
    messages.forEach(rank);
    return { children: children, newest: newest };
  }

  /**
   * Return the shown path as [{message, siblings, position}], position being the message's
   * index among its siblings; `chosen` maps a parent id ("" for roots) to the picked child id.
   */
  function path(messages, chosen) {
    var tree = index(messages);
    var shown = [], key = ROOT;
    chosen = chosen || {};
    while (tree.children[key] && tree.children[key].length) {
      var siblings = tree.children[key];
      var pick = siblings.filter(function (m) { return m.id === chosen[key]; })[0];
      if (!pick) {
        pick = siblings.reduce(function (best, m) {
          return tree.newest[m.id] > tree.newest[best.id] ? m : best;
        });
      }
      shown.push({ message: pick, siblings: siblings, position: siblings.indexOf(pick) });
      key = pick.id;
    }
    return shown;
  }

  var api = { path: path, ROOT: ROOT };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.LookoutChatTree = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
