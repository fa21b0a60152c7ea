/* The conversation list's date groups: Today, Yesterday, Previous 7 days, Previous 30 days, then
 * one group per month ("October 2026"), by the last change, in the browser's own time zone.
 *
 * Usable as a classic <script> (window.LookoutChatDates) and from Node (require).
 */
(function (root) {
  "use strict";

  var MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December"];

  function dayNumber(date) {
    return Math.floor(Date.UTC(date.getFullYear(), date.getMonth(), date.getDate()) / 86400000);
  }

  // The API's times are UTC; SQLite gives them back without a zone, which Date would read as
  // local time.
  function parseTime(when) {
    if (typeof when === "string" && /T[\d:.]+$/.test(when)) when += "Z";
    return new Date(when);
  }

  /** Return the group label of a time (an ISO string) seen at `now` (an ISO string or Date). */
  function groupOf(when, now) {
    var date = parseTime(when), today = now ? parseTime(now) : new Date();
    var days = dayNumber(today) - dayNumber(date);
    if (isNaN(days) || days <= 0) return "Today";
    if (days === 1) return "Yesterday";
    if (days <= 7) return "Previous 7 days";
    if (days <= 30) return "Previous 30 days";
    return MONTHS[date.getMonth()] + " " + date.getFullYear();
  }

  /**
   * Return [{label, items}] for items already ordered newest first, `at(item)` giving each
   * one's time; groups keep that order.
   */
  function group(items, at, now) {
    var groups = [], last = null;
    items.forEach(function (item) {
      var label = groupOf(at(item), now);
      if (!last || last.label !== label) groups.push(last = { label: label, items: [] });
      last.items.push(item);
    });
    return groups;
  }

  var api = { groupOf: groupOf, group: group };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.LookoutChatDates = api;
  }
})(typeof globalThis !== "undefined" ? globalThis : this);
