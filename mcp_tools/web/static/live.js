// Live updates without a reload. The page names its topic (<body data-live="board" | "bounty:7" | "all">) and
// marks the parts that change with data-live-region (each with an id). /live (server-sent events) says only
// that something changed — positions, kinds, ids, never text — and this script fetches the same page again
// through the session and swaps those regions in. Without JavaScript the pages still work (reload them).
(function () {
  "use strict";
  var topic = document.body.getAttribute("data-live");
  var status = document.getElementById("live-status");
  if (!topic || !window.EventSource || !window.fetch) { return; }
  function say(text) { if (status) { status.textContent = text; } }

  var pending = null;
  function refresh() {
    if (pending) { return; }
    pending = window.setTimeout(function () {
      pending = null;
      fetch(window.location.pathname + window.location.search,
            { credentials: "same-origin", headers: { "Accept": "text/html" } }).then(function (answer) {
        if (!answer.ok) { throw new Error(String(answer.status)); }
        return answer.text();
      }).then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live-region]").forEach(function (old) {
          var replacement = old.id ? fresh.getElementById(old.id) : null;
          if (replacement && replacement.innerHTML !== old.innerHTML) {
            old.replaceWith(replacement);
            replacement.classList.add("updated");
          }
        });
        document.body.setAttribute("data-refreshed", String(Date.now()));
        say("live updates: on, last change at " + new Date().toLocaleTimeString());
      }).catch(function () { say("live updates: the page could not be refreshed; reload it"); });
    }, 250);
  }

  var source = new EventSource("/live?topic=" + encodeURIComponent(topic));
  source.addEventListener("open", function () { say("live updates: on"); });
  source.addEventListener("error", function () { say("live updates: reconnecting…"); });
  source.addEventListener("bounty", refresh);
  source.addEventListener("change", refresh);
  source.addEventListener("resync", refresh);
}());
