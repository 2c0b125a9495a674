/* mcp-governance dashboard: the little the pages do with JavaScript. Everything is
   readable without it; this only keeps the fleet table fresh on a wall screen (a light
   poll with ETags: 304 while nothing changed) and writes times as "5 min ago". */
(function () {
  "use strict";

  function ago(iso) {
    var then = Date.parse(iso);
    if (isNaN(then)) { return ""; }
    var seconds = Math.max(0, Math.round((Date.now() - then) / 1000));
    if (seconds < 60) { return seconds + " s ago"; }
    var minutes = Math.round(seconds / 60);
    if (minutes < 60) { return minutes + " min ago"; }
    var hours = Math.round(minutes / 60);
    if (hours < 48) { return hours + " h ago"; }
    return Math.round(hours / 24) + " days ago";
  }

  function relativeTimes(root) {
    var times = root.querySelectorAll("time[data-relative]");
    for (var i = 0; i < times.length; i++) {
      var el = times[i];
      var iso = el.getAttribute("datetime");
      el.title = iso.replace("T", " ");
      el.textContent = ago(iso);
    }
  }

  function fleetRefresh() {
    var region = document.getElementById("fleet");
    if (!region || !window.fetch) { return; }
    var url = region.getAttribute("data-refresh-url");
    var every = parseInt(region.getAttribute("data-refresh-seconds"), 10) * 1000 || 10000;
    var etag = region.getAttribute("data-etag");
    var controls = document.querySelector("[data-refresh-controls]");
    var toggle = document.querySelector("[data-refresh-toggle]");
    var status = document.getElementById("fleet-updated");
    var paused = false;
    var pending = null;
    controls.hidden = false;
    toggle.addEventListener("click", function () {
      paused = !paused;
      toggle.setAttribute("aria-pressed", paused ? "true" : "false");
      toggle.textContent = paused ? "Resume live updates" : "Pause live updates";
      status.textContent = paused ? "Live updates paused." : "Live updates on.";
    });

    function apply(html) {
      // Never pull the table from under a keyboard user: wait until focus leaves it.
      if (region.contains(document.activeElement) && document.activeElement !== document.body) {
        pending = html;
        return;
      }
      region.innerHTML = html;
      relativeTimes(region);
      region.setAttribute("data-updated", new Date().toISOString());
      status.textContent = "Updated " + new Date().toLocaleTimeString() + ".";
    }
    region.addEventListener("focusout", function () {
      setTimeout(function () {
        if (pending !== null && !region.contains(document.activeElement)) {
          var html = pending;
          pending = null;
          apply(html);
        }
      }, 0);
    });

    function poll() {
      if (paused || document.hidden) { return; }
      var headers = { "X-Requested-With": "fetch" };
      if (etag) { headers["If-None-Match"] = etag; }
      fetch(url, { headers: headers, credentials: "same-origin", cache: "no-store" }).then(function (response) {
        if (response.status === 304) {
          relativeTimes(region);
          region.setAttribute("data-checked", new Date().toISOString());
          return null;
        }
        if (response.status === 401) {
          status.textContent = "Signed out: reload the page to sign in again.";
          paused = true;
          return null;
        }
        if (!response.ok) {
          status.textContent = "Could not update (HTTP " + response.status + "); retrying.";
          return null;
        }
        etag = response.headers.get("ETag") || etag;
        return response.text();
      }).then(function (html) {
        if (html !== null && html !== undefined) { apply(html); }
      }).catch(function () {
        status.textContent = "The service did not answer; retrying.";
      });
    }
    setInterval(poll, every);
  }

  document.addEventListener("DOMContentLoaded", function () {
    relativeTimes(document);
    fleetRefresh();
  });
})();
