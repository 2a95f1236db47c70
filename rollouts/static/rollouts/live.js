// Relax Rollout Viewer: live updates while a run is still writing its step files.
// The header carries everything this needs (data-poll-url, data-poll-ms, the cursor in
// data-latest-*, the shown step in data-step*): a small JSON poll every data-poll-ms says what
// changed since that cursor, new steps join the step selector, "Follow latest" moves to the
// newest step, and a step that grew under the page is handed to grown.js (rv.grown).
// This is the only code that asks the poll endpoint: every answer is announced on document as
// an "rv:poll" event (the parsed body in event.detail), so a page script keeps its own parts
// current from the same answers (trends.js: the curves) instead of polling a second time.
(function () {
  "use strict";

  var FOLLOW_KEY = "rv-follow"; // localStorage: "Follow latest" survives reloads and steps
  var FOLLOW_PAGES = { sample: true, stats: true }; // pages that move to a newer step
  var POLL_EVENT = "rv:poll"; // fired on document with every poll answer

  var header = null;
  var pollMs = 3000; // from the end of one poll to the next; init() reads data-poll-ms
  var timer = null;
  var busy = false; // a poll (and any refresh it started) is in flight: never overlap
  var watching = true; // false once the shown step is gone: the bucket is still polled
  var stopped = false; // the page is leaving: no more polls

  // -- storage: viewer.js's (JSON in localStorage; a page without it remembers nothing) --
  function load(key, fallback) {
    return window.rv ? window.rv.storage.load(key, fallback) : fallback;
  }
  function store(key, value) {
    if (window.rv) window.rv.storage.store(key, value);
  }

  // -- the step selector -----------------------------------------------------------------
  function stepSelect() {
    return document.getElementById("rv-step");
  }

  function stepOptions() {
    var select = stepSelect();
    if (!select) return [];
    return Array.prototype.filter.call(select.options, function (option) {
      return option.hasAttribute("data-step");
    });
  }

  function optionText(step) {
    return "Step " + step.step + " (" + step.size + ")";
  }

  // True when step `a` (number, name) sorts after `b`, as the server sorts step files.
  function sortsAfter(aStep, aName, bStep, bName) {
    return aStep > bStep || (aStep === bStep && aName > bName);
  }

  // Add new steps in numeric order, refresh the size of known ones; the steps added.
  function mergeSteps(steps) {
    var select = stepSelect();
    var added = [];
    if (!select) return added;
    steps.forEach(function (step) {
      var options = stepOptions();
      var known = options.find(function (option) {
        return option.getAttribute("data-name") === step.name;
      });
      if (known) {
        known.setAttribute("data-size-bytes", String(step.size_bytes));
        known.textContent = optionText(step);
        return;
      }
      var option = document.createElement("option");
      option.value = step.url;
      option.setAttribute("data-step", String(step.step));
      option.setAttribute("data-name", step.name);
      option.setAttribute("data-size-bytes", String(step.size_bytes));
      option.textContent = optionText(step);
      var before = options.find(function (other) {
        return sortsAfter(Number(other.getAttribute("data-step")), other.getAttribute("data-name"),
          step.step, step.name);
      });
      select.insertBefore(option, before || null);
      added.push(step);
    });
    return added;
  }

  function newestOption() {
    var options = stepOptions();
    return options.length ? options[options.length - 1] : null;
  }

  // -- follow latest ---------------------------------------------------------------------
  function followBox() {
    return document.getElementById("rv-follow");
  }

  function following() {
    var box = followBox();
    return !!box && box.checked;
  }

  // Where the newest step's version of this page lives; null when this page does not follow.
  function followUrl(option) {
    var page = header.getAttribute("data-page");
    if (!FOLLOW_PAGES[page]) return null;
    var shown = header.getAttribute("data-step");
    if (shown === null || !option) return null;
    if (!sortsAfter(Number(option.getAttribute("data-step")), option.getAttribute("data-name"),
        Number(shown), shown)) return null;
    var stepUrl = option.value;
    if (page === "stats") {
      // The stats link is the shown step's URL plus a suffix: the newest step's is the same.
      var samples = document.getElementById("rv-samples-link");
      var stats = document.getElementById("rv-stats-link");
      if (!samples || !stats) return null;
      var base = samples.getAttribute("href");
      var own = stats.getAttribute("href");
      if (!base || !own || own.indexOf(base) !== 0) return null;
      return stepUrl + own.slice(base.length);
    }
    // Keep sort and filters, as the step selector does; `i` is per-step, drop it.
    var params = new URLSearchParams(window.location.search);
    params.delete("i");
    var query = params.toString();
    return stepUrl + (query ? "?" + query : "");
  }

  // Go to the newest step when following; true when the page is leaving.
  function followNewest() {
    if (!following()) return false;
    var url = followUrl(newestOption());
    if (!url) return false;
    stop();
    window.location.assign(url);
    return true;
  }

  function setupFollow() {
    var box = followBox();
    if (!box) return;
    box.checked = load(FOLLOW_KEY, false) === true;
    box.addEventListener("change", function () {
      store(FOLLOW_KEY, box.checked);
      if (box.checked) followNewest();
    });
  }

  // -- polling ---------------------------------------------------------------------------
  function pollUrl() {
    var url = new URL(header.getAttribute("data-poll-url"), window.location.href);
    var after = header.getAttribute("data-latest-step");
    if (after !== null) {
      url.searchParams.set("after", after);
      url.searchParams.set("size", header.getAttribute("data-latest-size") || "");
    }
    var step = header.getAttribute("data-step");
    if (watching && step !== null) {
      url.searchParams.set("watch", step);
      url.searchParams.set("watch_size", header.getAttribute("data-step-size") || "");
    }
    return url.toString();
  }

  function readPoll(response) {
    return response.json().then(function (body) {
      if (!response.ok) return null;
      document.dispatchEvent(new CustomEvent(POLL_EVENT, { detail: body }));
      return body;
    });
  }

  function apply(body) {
    if (!body || !body.changed) return Promise.resolve();
    if (body.cursor) {
      header.setAttribute("data-latest-step", String(body.cursor.after));
      header.setAttribute("data-latest-size", String(body.cursor.size));
    }
    var steps = body.steps || [];
    if (steps.length && !stepSelect() && !header.hasAttribute("data-step") &&
        header.getAttribute("data-page") === "sample") {
      // The bucket was empty, so the page is only a message: its first step is the page now.
      stop();
      window.location.reload();
      return Promise.resolve();
    }
    if (mergeSteps(steps).length && followNewest()) return Promise.resolve();
    var watched = body.watched;
    if (!watched || watched.name !== header.getAttribute("data-step")) return Promise.resolve();
    if (watched.deleted) {
      // The shown step was deleted (or renamed): stop watching it, keep polling the bucket.
      watching = false;
      return Promise.resolve();
    }
    return window.rv.grown.apply(header, watched).then(function (reloading) {
      if (reloading) stop();
    });
  }

  function poll() {
    timer = null;
    if (busy || document.visibilityState !== "visible") return;
    busy = true;
    fetch(pollUrl(), {
      headers: { Accept: "application/json" },
      credentials: "same-origin",
      cache: "no-store",
    })
      .then(readPoll)
      .then(apply)
      .catch(function () {
        // Server down or a broken answer: the next tick tries again. Navigation failures
        // already show viewer.js's offline banner; a background poll says nothing.
      })
      .then(function () {
        busy = false;
        schedule();
      });
  }

  function schedule() {
    if (timer !== null || busy || stopped) return;
    if (document.visibilityState === "visible") timer = setTimeout(poll, pollMs);
  }

  function stop() {
    stopped = true;
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  function pollNow() {
    if (stopped) return;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    poll();
  }

  function init() {
    header = document.getElementById("rv-header");
    if (!header || !header.getAttribute("data-poll-url")) return; // not a page of a bucket
    if (window.rv) pollMs = window.rv.pollMs();
    setupFollow();
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState === "visible") {
        pollNow();
      } else if (timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
    });
    // Back/forward cache: the page comes back as it was left, possibly minutes ago.
    window.addEventListener("pageshow", function (event) {
      if (event.persisted) {
        stopped = false;
        pollNow();
      }
    });
    schedule();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
