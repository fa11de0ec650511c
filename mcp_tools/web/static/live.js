// Live updates without a reload: listens to /live (server-sent events: ids and kinds only, never text) and
// fetches the fragment it needs through an authenticated route. Without JavaScript the pages still work.
(function () {
  "use strict";
  var topic = document.body.getAttribute("data-live");
  var status = document.getElementById("live-status");
  if (!topic || !window.EventSource) { return; }
  function say(text) { if (status) { status.textContent = text; } }

  function replaceFrom(url, selector, then) {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (r) {
      if (!r.ok) { throw new Error(String(r.status)); }
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.querySelector(selector);
      var old = document.querySelector(selector);
      if (fresh && old) { old.replaceWith(fresh); fresh.classList.add("updated"); }
      else if (fresh && !old && then) { then(fresh); }
    }).catch(function () { say("live updates: could not refresh (reload the page)"); });
  }

  var after = document.body.getAttribute("data-position") || "";
  var source = new EventSource("/live?topic=" + encodeURIComponent(topic) + (after ? "&after=" + after : ""));
  source.addEventListener("open", function () { say("live updates: on"); });
  source.addEventListener("error", function () { say("live updates: reconnecting…"); });
  source.addEventListener("bounty", function (e) {
    var data = JSON.parse(e.data);
    if (topic === "board") {
      // the row of a bounty already shown is refreshed in place; a new bounty refreshes the list
      var row = document.getElementById("bounty-" + data.bounty_id);
      if (row) { replaceFrom("/bounties/" + encodeURIComponent(data.bounty_id) + "/row", "#bounty-" + data.bounty_id); }
      else { replaceFrom(window.location.pathname + window.location.search, "#board-list"); }
    } else if (topic === "bounty:" + data.bounty_id) {
      replaceFrom(window.location.pathname, "#bounty-live");
    }
    say("live updates: on — last change " + new Date().toLocaleTimeString());
  });
}());
