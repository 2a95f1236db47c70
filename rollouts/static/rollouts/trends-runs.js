// Relax Rollout Viewer: the trends page's run overlay (window.rvTrendsRuns). With several runs
// the page has a checkbox per run (#rv-runs-overlay, each with the run's trends JSON in its
// data-trends-url, rendered by the server); checking one loads that run's points and the chart
// draws the chosen curve once per run, aligned by step.
//
//   rvTrendsRuns.init(onChange): wires the checkboxes; onChange() runs when a run's points come
//     in or a box changes. Checked runs are kept in the URL (?runs=a,b).
//   rvTrendsRuns.overlay(current): null without another run checked; else
//     {points: [{step, name}], runs: [{name, current, points, stepUrl}]}: every step any run has.
(function () {
  "use strict";

  var RELOAD_MS = 700; // between reads of a run the server is still indexing
  var runs = {}; // name -> {name, url, current, checked, points, stepUrl, error, done}
  var onChange = function () {};

  function load(run, again) {
    if ((run.done && !again) || run.loading) return;
    run.loading = true;
    fetch(run.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) throw new Error("the server answered " + r.status);
        return r.json();
      })
      .then(function (data) {
        run.points = data.points;
        run.stepUrl = data.step_url;
        run.error = null;
        run.done = data.done;
        // Still indexing (a run nobody looked at yet): read it again until every step is in.
        if (!data.done) setTimeout(function () { load(run, true); }, RELOAD_MS);
      }, function (error) { run.error = error.message; })
      .then(function () {
        run.loading = false;
        var box = document.querySelector('#rv-runs-overlay input[value="' + CSS.escape(run.name) + '"]');
        if (box) box.closest("label").setAttribute("data-error", run.error || "");
        onChange();
      });
  }

  function keepInUrl() {
    var names = Object.keys(runs).filter(function (n) { return runs[n].checked && !runs[n].current; });
    var url = new URL(window.location.href);
    if (names.length) url.searchParams.set("runs", names.join(","));
    else url.searchParams.delete("runs");
    history.replaceState(history.state, "", url);
  }

  function init(callback) {
    onChange = callback;
    var boxes = document.querySelectorAll("#rv-runs-overlay input[type=checkbox]");
    var wanted = (new URLSearchParams(window.location.search).get("runs") || "").split(",");
    boxes.forEach(function (box) {
      var run = runs[box.value] = { name: box.value, url: box.dataset.trendsUrl,
        current: box.dataset.current === "true", checked: box.checked, points: null };
      if (!run.current && wanted.indexOf(run.name) >= 0) box.checked = run.checked = true;
      if (run.checked && !run.current) load(run);
      box.addEventListener("change", function () {
        run.checked = box.checked;
        keepInUrl();
        if (run.checked) load(run);
        onChange();
      });
    });
  }

  function overlay(current) {
    var others = Object.keys(runs).map(function (n) { return runs[n]; }).filter(function (r) {
      return r.checked && !r.current && r.points;
    });
    if (!others.length) return null;
    var own = Object.keys(runs).filter(function (n) { return runs[n].current; })[0] || "this run";
    var shown = [{ name: own, current: true, points: current.points, stepUrl: current.stepUrl }]
      .concat(others.map(function (r) {
        return { name: r.name, current: false, points: r.points, stepUrl: r.stepUrl };
      }));
    var steps = {};
    shown.forEach(function (run) {
      run.points.forEach(function (p) { if (!(p.step in steps)) steps[p.step] = p.name; });
    });
    var points = Object.keys(steps).map(Number).sort(function (a, b) { return a - b; })
      .map(function (step) { return { step: step, name: steps[step] }; });
    return { points: points, runs: shown };
  }

  // One run's values of `key` at the overlay's steps (null where the run lacks the step).
  function valuesOf(run, points, key) {
    var byStep = {};
    run.points.forEach(function (p) { byStep[p.step] = p.metrics[key]; });
    return points.map(function (p) { return p.step in byStep ? byStep[p.step] : null; });
  }

  window.rvTrendsRuns = { init: init, overlay: overlay, valuesOf: valuesOf };
})();
