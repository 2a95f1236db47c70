// Relax Rollout Viewer: what the trends page draws for a choice of curve:
// the lines with their colours and marks, the grid's panels, why a step has no value, and the
// default smoothing. Plain functions of the trends JSON; trends.js draws what they return.
import { runColourClass } from "./lib/run-colour.js";
import { valuesOf as runValuesOf } from "./trends-runs.js";

const STATUSES = ["completed", "truncated", "aborted", "failed"]; // status.css has their colours
const GROUPS = {
  status: "Status mix",
  dataset: "Eval accuracy per dataset",
  component: "Reward components",
  flag: "Flags",
};
// Smoothing off below SMOOTH_FROM points, then 1 - SMOOTH_FROM / n (in steps of 0.05), at most
// SMOOTH_MAX: an EMA of weight w averages about 1 / (1 - w) points, so the default window is
// about a twentieth of the run (0.6 on 8 points would pull the line far from its data).
const SMOOTH_FROM = 20;
const SMOOTH_MAX = 0.9;

// TensorBoard scalars (kind "tb:<prefix>"): grouped by their tag's prefix (train/, rollout/,
// eval/, perf/), each its own curve: their scales differ too much to draw a group together.
export function isScalarKind(kind) {
  return kind.indexOf("tb:") === 0;
}
export function groupName(kind) {
  if (!isScalarKind(kind)) return GROUPS[kind] || kind;
  return "TensorBoard " + (kind.length > 3 ? kind.slice(3) + "/" : "(no prefix)");
}

// The curve select's "all together" choice of a kind (none for scalars).
export function allOptions(kind) {
  return isScalarKind(kind) ? [] : [new Option(groupName(kind) + " (all together)", "all:" + kind)];
}

// A flag's series ("flag.repeats", the share of a step's samples with that flag) names its
// flag; any other key, none.
export function flagOf(key) {
  return typeof key === "string" && key.indexOf("flag.") === 0 ? key.slice(5) : null;
}

// Where a point of series `key` at step `name` opens: a flag's, the step's table filtered by
// that flag (its flagged samples); any other, the step's page. `urls`: {step, table}, the trends
// JSON's `step_url` and `table_url` ("{step}" stands for the step's name).
export function pointUrl(urls, name, key) {
  const step = encodeURIComponent(name);
  const flag = flagOf(key);
  if (flag && urls.table) {
    return urls.table.split("{step}").join(step) + "?flag=" + encodeURIComponent(flag);
  }
  return urls.step.split("{step}").join(step);
}

export function defaultSmoothing(count) {
  if (count < SMOOTH_FROM) return 0;
  return Math.min(SMOOTH_MAX, Math.round((1 - SMOOTH_FROM / count) * 20) / 20);
}

// A status share's line takes the status's colour (the sample page's badge uses the same).
export function statusClass(key) {
  const name = key.indexOf("status.") === 0 ? key.slice(7) : null;
  return name !== null && STATUSES.indexOf(name) >= 0 ? "rv-line-status-" + name : null;
}

// The best of a curve: its maximum when higher is better, its minimum when lower is; a
// neutral curve's maximum is its peak.
export function markOf(series) {
  return series.direction < 0 ? "min" : "max";
}
export function wordOf(series) {
  return series.direction ? "best" : "peak";
}

// Why a point has no value for `key` (a gap in the chart, never a 0).
export function gapReason(point, key) {
  const metrics = point.metrics || {};
  const components = Object.keys(metrics).some((k) => k.indexOf("reward.") === 0);
  const rewardish = key.indexOf("reward") === 0 || key.indexOf("dataset.") === 0;
  if (key.indexOf("tb.") === 0) return "TensorBoard logged no value at this step";
  if (metrics.samples === 0) return "no readable sample in this step";
  if (rewardish && components) return "an object reward: no single number (see Reward components)";
  if (rewardish) return "no sample of this step has a numeric reward";
  if (!point.metrics) return "this run has no such step";
  return "this step has no value for it";
}

// The same for a line of the chart: an overlaid run's line reads that run's point.
export function gapOf(point, key, keys) {
  const entry = keys[key];
  if (!entry) return gapReason(point, key);
  const own = entry.run.points.filter((p) => p.step === point.step)[0];
  return gapReason(own || { step: point.step }, entry.series);
}

function valuesOf(points, key) {
  return points.map((p) => p.metrics[key]);
}

// The lines of the chosen series; one curve alone has its best (or peak) point marked.
export function lines(chosen, points) {
  return chosen.map((s) => {
    const line = { key: s.key, label: s.label, values: valuesOf(points, s.key) };
    const cls = statusClass(s.key);
    if (cls) line.cls = cls;
    if (chosen.length === 1) line.mark = markOf(s);
    return line;
  });
}

// A run's name as the legends say it: the current run is marked so.
export function runLabel(run) {
  return run.name + (run.current ? " (current)" : "");
}

// The runs of an overlay as the grid's legend lists them (none without an overlay).
export function legendRuns(overlay) {
  if (!overlay) return [];
  return overlay.runs.map((run) => ({
    name: run.name,
    label: runLabel(run),
    cls: runColourClass(run.name),
  }));
}

// The same series once per run (trends-runs.js's overlay), each run in its own colour (from its
// name: lib/run-colour.js, the same on every page), each run's best marked when one curve is
// chosen. `keys` (optional) maps each line's key back to its series and run.
export function overlayLines(chosen, overlay, keys) {
  const out = [];
  overlay.runs.forEach((run) => {
    chosen.forEach((s, i) => {
      const key = s.key + "@" + run.name;
      if (keys) keys[key] = { series: s.key, run: run };
      const line = {
        key: key,
        label: runLabel(run) + (chosen.length > 1 ? " · " + s.label : ""),
        values: runValuesOf(run, overlay.points, s.key),
        cls: runColourClass(run.name),
        run: run.name,
        connect: true,
      };
      if (chosen.length === 1) line.mark = markOf(s);
      else line.dash = i % 4; // the series of one run, told apart by their dashes (the grid)
      out.push(line);
    });
  });
  return out;
}

// The grid: every metric alone, then each kind (statuses, datasets, components) together.
// With other runs overlaid (`overlay`, trends-runs.js's), each panel draws its series once per
// run on the overlay's steps, coloured by run; `primary` is the current run's line (its latest
// value is the panel's), or the panel's one line.
export function panels(series, points, overlay) {
  if (overlay) {
    return panels(series, points).map((panel) => {
      const chosen = panel.lines.map((l) => ({ key: l.key, label: l.label, direction: 0 }));
      const lines = overlayLines(chosen, overlay);
      return {
        choice: panel.choice,
        label: panel.label,
        lines: lines,
        primary: chosen.length === 1 ? lines.findIndex((l) => l.run === overlay.runs[0].name) : -1,
      };
    });
  }
  const out = [];
  const kinds = {};
  series.forEach((s) => {
    if (s.kind === "metric" || isScalarKind(s.kind)) {
      out.push({ choice: s.key, label: s.label, lines: lines([s], points) });
      return;
    }
    if (!kinds[s.kind]) {
      kinds[s.kind] = { choice: "all:" + s.kind, label: GROUPS[s.kind] || s.kind, members: [] };
      out.push(kinds[s.kind]);
    }
    kinds[s.kind].members.push(s);
  });
  return out.map((panel) => {
    if (!panel.members) return panel;
    return {
      choice: panel.choice,
      label: panel.label,
      lines: lines(panel.members, points).map((l, i) =>
        Object.assign({ cls: "rv-line-" + (i % 8) }, l),
      ),
    };
  });
}
