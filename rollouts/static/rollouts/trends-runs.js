// Relax Rollout Viewer: the trends page's run overlay. With several runs
// the page has a checkbox per run (#rv-runs-overlay, each with the run's trends JSON in its
// data-trends-url, rendered by the server); checking one loads that run's points and the chart
// draws the chosen curve once per run, aligned by step.
//
//   initRuns(onChange): wires the checkboxes; onChange() runs when a run's points come
//     in or a box changes. Checked runs are kept in the URL (?runs=a,b).
//   overlay(current): null without another run checked; else
//     {points: [{step, name}], runs: [{name, current, points, stepUrl}]}: every step any run has.
import { listParam, replaceParam } from "./lib/url.js";

const RELOAD_MS = 700; // between reads of a run the server is still indexing
const runs = {}; // name -> {name, url, current, checked, points, stepUrl, error, done}
let onChange = () => {};

function load(run, again) {
  if ((run.done && !again) || run.loading) return;
  run.loading = true;
  fetch(run.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => {
      if (!r.ok) throw new Error("the server answered " + r.status);
      return r.json();
    })
    .then(
      (data) => {
        run.points = data.points;
        run.stepUrl = data.step_url;
        run.tableUrl = data.table_url;
        run.error = null;
        run.done = data.done;
        // Still indexing (a run nobody looked at yet): read it again until every step is in.
        if (!data.done)
          setTimeout(() => {
            load(run, true);
          }, RELOAD_MS);
      },
      (error) => {
        run.error = error.message;
      },
    )
    .then(() => {
      run.loading = false;
      const box = document.querySelector(
        '#rv-runs-overlay input[value="' + CSS.escape(run.name) + '"]',
      );
      if (box) box.closest("label").setAttribute("data-error", run.error || "");
      onChange();
    });
}

function keepInUrl() {
  const names = Object.keys(runs).filter((n) => runs[n].checked && !runs[n].current);
  replaceParam("runs", names.join(","));
}

export function initRuns(callback) {
  onChange = callback;
  const boxes = document.querySelectorAll("#rv-runs-overlay input[type=checkbox]");
  const wanted = listParam(window.location.search, "runs");
  boxes.forEach((box) => {
    const run = {
      name: box.value,
      url: box.dataset.trendsUrl,
      current: box.dataset.current === "true",
      checked: box.checked,
      points: null,
    };
    runs[box.value] = run;
    if (!run.current && wanted.indexOf(run.name) >= 0) {
      run.checked = true;
      box.checked = true;
    }
    if (run.checked && !run.current) load(run);
    box.addEventListener("change", () => {
      run.checked = box.checked;
      keepInUrl();
      if (run.checked) load(run);
      onChange();
    });
  });
}

export function overlay(current) {
  const others = Object.keys(runs)
    .map((n) => runs[n])
    .filter((r) => r.checked && !r.current && r.points);
  if (!others.length) return null;
  const own = Object.keys(runs).filter((n) => runs[n].current)[0] || "this run";
  const shown = [
    { name: own, current: true, points: current.points, stepUrl: current.stepUrl },
  ].concat(
    others.map((r) => ({
      name: r.name,
      current: false,
      points: r.points,
      stepUrl: r.stepUrl,
      tableUrl: r.tableUrl,
    })),
  );
  const steps = {};
  shown.forEach((run) => {
    run.points.forEach((p) => {
      if (!(p.step in steps)) steps[p.step] = p.name;
    });
  });
  const points = Object.keys(steps)
    .map(Number)
    .sort((a, b) => a - b)
    .map((step) => ({ step: step, name: steps[step] }));
  return { points: points, runs: shown };
}

// One run's values of `key` at the overlay's steps (null where the run lacks the step).
export function valuesOf(run, points, key) {
  const byStep = {};
  run.points.forEach((p) => {
    byStep[p.step] = p.metrics[key];
  });
  return points.map((p) => (p.step in byStep ? byStep[p.step] : null));
}
