// Relax Rollout Viewer: what every page's scripts share, as one namespace, window.rv.
// Loaded (deferred) before viewer.js, live.js and the page scripts, which run in order after it:
//   rv.storage.load(key, fallback) / rv.storage.store(key, value)   JSON in localStorage
//   rv.fetchFragment(url, {fresh})   a page's swappable <main>: a promise of {url, status, html}
//   rv.parseMain(html)               the <main id="rv-main"> of a fetched page, or null
//   rv.forgetPrefetched()            drop the fragments prefetched for navigation
//   rv.pollMs()                      the server's poll interval (data-poll-ms), in ms
//   rv.element(tag, className, text) a new element, its text set as text (never as HTML)
//   rv.finite(value)                 whether a value is a finite number
// It also keeps the theme selector and the system theme in step (theme.js applied the stored
// choice before the first paint).
(function () {
  "use strict";

  var FRAGMENT_HEADER = "RV-Fragment";
  var PREFETCH_LIMIT = 24; // fragments kept; a 100 KB sample costs ~100 KB here
  var PREFETCH_MAX_AGE = 20000; // ms: a live step grows, so old fragments go stale
  var THEME_KEY = "rv-theme";

  var fragments = new Map(); // url -> {promise, time}

  // -- storage ---------------------------------------------------------------------------
  function load(key, fallback) {
    try {
      var value = localStorage.getItem(key);
      return value === null ? fallback : JSON.parse(value);
    } catch (e) {
      return fallback;
    }
  }
  function store(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch (e) {
      // Private mode or storage disabled: the choice lasts for this page only.
    }
  }

  // -- theme -----------------------------------------------------------------------------
  var systemDark = window.matchMedia ? matchMedia("(prefers-color-scheme: dark)") : null;
  function applyTheme(choice) {
    var root = document.documentElement;
    var dark = choice === "dark" || (choice === "system" && systemDark && systemDark.matches);
    root.setAttribute("data-theme-choice", choice);
    root.setAttribute("data-theme", dark ? "dark" : "light");
  }
  function setupTheme() {
    var select = document.getElementById("rv-theme");
    var choice = document.documentElement.getAttribute("data-theme-choice") || "system";
    if (select) {
      select.value = choice;
      select.addEventListener("change", function () {
        try {
          localStorage.setItem(THEME_KEY, select.value);
        } catch (e) { /* see store() */ }
        applyTheme(select.value);
      });
    }
    if (systemDark && systemDark.addEventListener) {
      systemDark.addEventListener("change", function () {
        applyTheme(document.documentElement.getAttribute("data-theme-choice") || "system");
      });
    }
  }

  // -- fragments -------------------------------------------------------------------------
  // The page at `url`, fetched as a fragment: a promise of {url, status, html}.
  // Navigation reuses a fragment prefetched in the last PREFETCH_MAX_AGE ms; `fresh` (live.js
  // re-reading the page on screen) never uses nor fills that map, nor the HTTP cache.
  function fetchFragment(url, options) {
    if (options && options.fresh) return requestFragment(url, "no-store");
    var now = Date.now();
    var entry = fragments.get(url);
    if (entry && now - entry.time < PREFETCH_MAX_AGE) return entry.promise;
    var promise = requestFragment(url, "default");
    promise.catch(function () {
      fragments.delete(url);
    });
    fragments.set(url, { promise: promise, time: now });
    while (fragments.size > PREFETCH_LIMIT) {
      fragments.delete(fragments.keys().next().value);
    }
    return promise;
  }

  function requestFragment(url, cache) {
    var headers = {};
    headers[FRAGMENT_HEADER] = "1";
    return fetch(url, {
      headers: headers,
      credentials: "same-origin",
      cache: cache,
    }).then(function (response) {
      return response.text().then(function (html) {
        // Error pages (404, 422, 503) are fragments too: their message replaces the sample.
        return { url: response.url, status: response.status, html: html };
      });
    });
  }

  // DOMParser runs no script: server-escaped HTML stays text until it is adopted into the page.
  function parseMain(html) {
    return new DOMParser().parseFromString(html, "text/html").getElementById("rv-main");
  }

  // -- small helpers for the page scripts --------------------------------------------------
  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  // -- the poll interval -----------------------------------------------------------------
  var DEFAULT_POLL_MS = 3000;
  // The server's poll interval (data-poll-ms on the header), in ms; 3000 when missing or bad.
  function pollMs() {
    var header = document.getElementById("rv-header");
    var raw = header ? header.getAttribute("data-poll-ms") : null;
    var value = /^\d+$/.test(raw || "") ? parseInt(raw, 10) : 0;
    return value >= 1 ? value : DEFAULT_POLL_MS;
  }
  window.rv = {
    storage: { load: load, store: store },
    fetchFragment: fetchFragment,
    parseMain: parseMain,
    forgetPrefetched: function () { fragments.clear(); },
    pollMs: pollMs,
    element: element,
    finite: function (v) { return typeof v === "number" && isFinite(v); },
  };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setupTheme);
  else setupTheme();
})();
