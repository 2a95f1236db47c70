// Relax Rollout Viewer: the search page of a bucket. The server renders the first slice of the
// search; this script asks the JSON (<main>'s data-search-url, with the cursor) for the next
// slices until the search is done, filling in the hits, the per-step table and the curve of the
// share of matching samples per step (chart.js). Leaving the page aborts the request in flight.
// A click on a step of the curve (or Enter on it) lists that step's hits (#step=N in the URL).
// Sample text reaches the page only through textContent: the match is its own <mark> element.
(function () {
  "use strict";

  var html = window.rv.element; // shared.js
  var main, chart, searchUrl;
  var pending = []; // the AbortControllers of the requests in flight
  var perStep = {}; // step -> {step, samples, matches}, summed over the slices
  var stepHits = {}; // step -> the hits fetched for that step alone (when the list lacks some)

  function byId(id) { return document.getElementById(id); }

  function withParams(url, params) {
    var parsed = new URL(url, window.location.href);
    Object.keys(params).forEach(function (key) {
      if (params[key] === null) parsed.searchParams.delete(key);
      else parsed.searchParams.set(key, params[key]);
    });
    return parsed.toString();
  }

  function getJson(url) {
    var controller = new AbortController();
    pending.push(controller);
    return fetch(url, { credentials: "same-origin", signal: controller.signal,
      headers: { Accept: "application/json" } }).then(function (r) {
      pending = pending.filter(function (c) { return c !== controller; });
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.message || "the server answered " + r.status);
        return body;
      });
    });
  }

  // -- rendering -----------------------------------------------------------------------
  function hitItem(hit) {
    var item = html("li", "rv-hit");
    item.setAttribute("data-step", hit.step);
    var link = item.appendChild(html("a", "rv-hit-link"));
    link.href = hit.url;
    link.appendChild(html("span", "rv-hit-where",
      "step " + hit.step + " \u00b7 sample " + hit.position + " \u00b7 " + hit.field));
    link.append(" ");
    var snippet = link.appendChild(html("span", "rv-snippet"));
    snippet.append(hit.snippet.before);
    snippet.appendChild(html("mark", "rv-search-mark", hit.snippet.match));
    snippet.append(hit.snippet.after);
    return item;
  }

  function addHits(hits) {
    var list = byId("rv-hits");
    var none = byId("rv-no-hits");
    if (none && hits.length) none.remove();
    hits.forEach(function (hit) { list.appendChild(hitItem(hit)); });
    byId("rv-hits-count").textContent = String(list.querySelectorAll(".rv-hit").length);
    applyFilter();
  }

  function addCounts(entries) {
    entries.forEach(function (entry) {
      var known = perStep[entry.step];
      if (known) known.matches += entry.matches;
      else perStep[entry.step] = { step: entry.step, samples: entry.samples, matches: entry.matches };
    });
    drawTable();
    drawCurve();
  }

  function steps() {
    return Object.keys(perStep).map(Number).sort(function (a, b) { return a - b; })
      .map(function (step) { return perStep[step]; });
  }
  function share(entry) { return entry.samples ? entry.matches / entry.samples : 0; }
  function percent(value) { return (100 * value).toFixed(1) + " %"; }

  function drawTable() {
    var body = byId("rv-search-steps-table").tBodies[0];
    body.replaceChildren.apply(body, steps().map(function (entry) {
      var row = html("tr");
      row.setAttribute("data-step", entry.step);
      row.setAttribute("data-samples", entry.samples);
      row.setAttribute("data-matches", entry.matches);
      [entry.step, entry.samples, entry.matches, percent(share(entry))].forEach(function (v) {
        row.appendChild(html("td", "", String(v)));
      });
      return row;
    }));
  }

  function drawCurve() {
    if (!chart) return;
    var entries = steps();
    chart.draw(entries.map(function (e) { return { step: e.step, name: String(e.step) }; }),
      [{ key: "share", label: "matching", values: entries.map(share) }], 0);
  }

  function progress(body) {
    var bar = byId("rv-search-bar"), status = byId("rv-search-status");
    bar.max = body.total_steps || 1;
    bar.value = body.done ? bar.max : body.scanned_steps;
    status.textContent = body.done
      ? "Searched all " + body.total_steps + " step" + (body.total_steps === 1 ? "" : "s")
      : "Searched " + body.scanned_steps + " of " + body.total_steps + " steps\u2026";
    byId("rv-search-progress").setAttribute("data-done", body.done ? "true" : "false");
    byId("rv-hits-count").textContent = String(byId("rv-hits").querySelectorAll(".rv-hit").length);
    var none = byId("rv-no-hits");
    if (none && body.done) none.textContent = "No match.";
  }

  // -- continuing with the cursor --------------------------------------------------------
  function continueFrom(cursor) {
    var more = byId("rv-search-more");
    if (more) more.hidden = true; // the script goes on by itself
    getJson(withParams(searchUrl, { after: cursor })).then(function (body) {
      addHits(body.hits);
      addCounts(body.per_step);
      progress(body);
      if (!body.done && body.cursor) continueFrom(body.cursor);
    }, function (error) {
      if (error.name === "AbortError") return;
      byId("rv-search-status").textContent = "The search stopped: " + error.message;
      if (more) more.hidden = false;
    });
  }

  // -- one step's hits -----------------------------------------------------------------
  function chosenStep() {
    var match = /^#step=(\d+)$/.exec(window.location.hash);
    return match ? Number(match[1]) : null;
  }

  function applyFilter() {
    var step = chosenStep(), list = byId("rv-hits");
    var note = byId("rv-hits-filter"), all = byId("rv-hits-all");
    note.hidden = all.hidden = step === null;
    var shown = list.querySelectorAll(".rv-hit[data-step='" + step + "']").length;
    list.querySelectorAll(".rv-hit").forEach(function (item) {
      item.hidden = step !== null && Number(item.getAttribute("data-step")) !== step;
    });
    if (step === null) return;
    var entry = perStep[step];
    note.textContent = "step " + step + ": " + (entry ? entry.matches : 0) + " matching";
    if (entry && entry.matches > shown && !stepHits[step]) fetchStep(step);
  }

  // The list holds the first hits of the whole search only: a step's other hits are asked for.
  function fetchStep(step) {
    stepHits[step] = true;
    var url = withParams(searchUrl, { steps: String(step), after: null, limit: "1000" });
    (function more(from) {
      getJson(from ? withParams(url, { after: from }) : url).then(function (body) {
        var list = byId("rv-hits"), known = {};
        list.querySelectorAll(".rv-hit").forEach(function (item) {
          known[item.querySelector("a").getAttribute("href")] = true;
        });
        addHits(body.hits.filter(function (hit) { return !known[hit.url]; }));
        if (!body.done && body.cursor) more(body.cursor);
      }, function () { stepHits[step] = false; });
    })(null);
  }

  function init() {
    main = byId("rv-main");
    searchUrl = main && main.getAttribute("data-search-url");
    if (!searchUrl || !byId("rv-hits")) return;
    byId("rv-search-steps-table").querySelectorAll("tbody tr").forEach(function (row) {
      var step = Number(row.getAttribute("data-step"));
      perStep[step] = { step: step, samples: Number(row.getAttribute("data-samples")),
        matches: Number(row.getAttribute("data-matches")) };
    });
    chart = window.rvChart.create(byId("rv-search-chart"), {
      tooltip: byId("rv-search-tip"),
      href: function (point) { return "#step=" + point.step; },
      format: function (v) { return window.rv.finite(v) ? percent(v) : "\u2013"; },
      percent: function () { return true; },
    });
    drawCurve();
    byId("rv-hits-all").addEventListener("click", function () {
      history.pushState(null, "", window.location.pathname + window.location.search);
      applyFilter();
    });
    window.addEventListener("hashchange", applyFilter);
    // Leaving (or the back/forward cache keeping the page): stop asking.
    window.addEventListener("pagehide", function () {
      pending.forEach(function (c) { c.abort(); });
    });
    applyFilter();
    var cursor = main.getAttribute("data-cursor");
    if (cursor) continueFrom(cursor);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
