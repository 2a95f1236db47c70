// Relax Rollout Viewer: what the trends page draws for a choice of curve:
// the lines with their colours and marks, the grid's panels, why a step has no value, and the
// default smoothing. Plain functions of the trends JSON; trends.js draws what they return.
import { valuesOf as runValuesOf } from "./trends-runs.js";

const STATUSES = ["completed", "truncated", "aborted", "failed"]; // status.css has their colours
const GROUPS = {
  status: "Status mix",
  dataset: "Eval accuracy per dataset",
  component: "Reward components",
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

// The same series once per run (trends-runs.js's overlay), coloured by run, each run's best marked
// when one curve is chosen. `keys` maps each line's key back to its series and run.
export function overlayLines(chosen, overlay, keys) {
  const out = [];
  overlay.runs.forEach((run, r) => {
    chosen.forEach((s) => {
      const key = s.key + "@" + run.name;
      keys[key] = { series: s.key, run: run };
      const line = {
        key: key,
        label: run.name + (chosen.length > 1 ? " · " + s.label : ""),
        values: runValuesOf(run, overlay.points, s.key),
        cls: "rv-line-" + (r % 8),
        connect: true,
      };
      if (chosen.length === 1) line.mark = markOf(s);
      out.push(line);
    });
  });
  return out;
}

// The grid: every metric alone, then each kind (statuses, datasets, components) together.
export function panels(series, points) {
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
