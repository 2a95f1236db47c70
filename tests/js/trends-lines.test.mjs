// What the trends page draws for a choice of curve (trends-lines.js): the default smoothing,
// the colours of status lines, why a step has no value, and the grid's panels. Plain functions
// of the trends JSON, importable without a page.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runColourClass } from "../../rollouts/static/rollouts/lib/run-colour.js";
import {
  defaultSmoothing,
  gapReason,
  groupName,
  legendRuns,
  lines,
  overlayLines,
  panels,
  statusClass,
} from "../../rollouts/static/rollouts/trends-lines.js";

test("smoothing is off for short runs, then about a twentieth of the run, 0.9 at most", () => {
  assert.equal(defaultSmoothing(0), 0);
  assert.equal(defaultSmoothing(19), 0);
  assert.equal(defaultSmoothing(20), 0); // 1 - 20/20
  assert.equal(defaultSmoothing(40), 0.5); // 1 - 20/40
  assert.equal(defaultSmoothing(30), 0.35); // 0.333 rounded to a step of 0.05
  assert.equal(defaultSmoothing(100), 0.8);
  assert.equal(defaultSmoothing(1000), 0.9); // 0.98, capped
});

test("a status share's line takes its status's colour; other lines take none", () => {
  assert.equal(statusClass("status.truncated"), "rv-line-status-truncated");
  assert.equal(statusClass("status.completed"), "rv-line-status-completed");
  assert.equal(statusClass("status.unheard_of"), null);
  assert.equal(statusClass("reward_mean"), null);
});

test("TensorBoard scalars are grouped by their tag's prefix", () => {
  assert.equal(groupName("tb:train"), "TensorBoard train/");
  assert.equal(groupName("tb:"), "TensorBoard (no prefix)");
  assert.equal(groupName("status"), "Status mix");
  assert.equal(groupName("something_new"), "something_new");
});

test("a gap says why the step has no value", () => {
  const step = (metrics) => ({ step: 3, metrics });
  assert.equal(gapReason(step({}), "tb.train/loss"), "TensorBoard logged no value at this step");
  assert.equal(gapReason(step({ samples: 0 }), "reward_mean"), "no readable sample in this step");
  assert.equal(
    gapReason(step({ samples: 4, "reward.format": 1 }), "reward_mean"),
    "an object reward: no single number (see Reward components)",
  );
  assert.equal(
    gapReason(step({ samples: 4 }), "dataset.gsm8k"),
    "no sample of this step has a numeric reward",
  );
  assert.equal(gapReason({ step: 3 }, "response_length_mean"), "this run has no such step");
  assert.equal(gapReason(step({ samples: 4 }), "truncation_rate"), "this step has no value for it");
});

test("one curve alone has its best point marked by its direction", () => {
  const points = [
    { step: 0, metrics: { loss: 2, reward_mean: 0.1 } },
    { step: 1, metrics: { loss: 1 } },
  ];
  const [loss] = lines([{ key: "loss", label: "loss", direction: -1 }], points);
  assert.deepEqual(loss, { key: "loss", label: "loss", values: [2, 1], mark: "min" });
  const [reward] = lines([{ key: "reward_mean", label: "reward", direction: 1 }], points);
  assert.deepEqual(reward.values, [0.1, undefined]); // a gap, not a 0
  assert.equal(reward.mark, "max");
  const two = lines(
    [
      { key: "loss", label: "loss" },
      { key: "reward_mean", label: "reward" },
    ],
    points,
  );
  assert.equal(two[0].mark, undefined); // several curves: no mark
});

test("the grid has a panel per metric and one per kind of series", () => {
  const series = [
    { key: "reward_mean", label: "reward", kind: "metric" },
    { key: "status.completed", label: "completed", kind: "status" },
    { key: "tb.train/loss", label: "train/loss", kind: "tb:train" },
    { key: "status.failed", label: "failed", kind: "status" },
  ];
  const points = [{ step: 0, metrics: { reward_mean: 1, "status.completed": 0.5 } }];
  const grid = panels(series, points);
  assert.deepEqual(
    grid.map((p) => [p.choice, p.label, p.lines.length]),
    [
      ["reward_mean", "reward", 1],
      ["all:status", "Status mix", 2],
      ["tb.train/loss", "train/loss", 1],
    ],
  );
  // The kind's lines keep their own colour class (a status colour) over the panel's.
  assert.deepEqual(
    grid[1].lines.map((l) => l.cls),
    ["rv-line-status-completed", "rv-line-status-failed"],
  );
});

// Two runs, "mine" (current: steps 0 and 1) and "theirs" (steps 1 and 2), as trends-runs.js's
// overlay gives them: every step either has.
function twoRuns() {
  const point = (step, reward, truncated) => ({
    step: step,
    name: String(step),
    metrics: { reward_mean: reward, "status.truncated": truncated },
  });
  const mine = [point(0, 0.1, 0.5), point(1, 0.2, 0.25)];
  const theirs = [point(1, 0.7, 0), point(2, 0.9, 0)];
  const series = [
    { key: "reward_mean", label: "Mean reward", kind: "metric", direction: 1 },
    { key: "status.truncated", label: "truncated", kind: "status", direction: 0 },
    { key: "status.completed", label: "completed", kind: "status", direction: 0 },
  ];
  const overlay = {
    points: [0, 1, 2].map((step) => ({ step: step, name: String(step) })),
    runs: [
      { name: "mine", current: true, points: mine },
      { name: "theirs", current: false, points: theirs },
    ],
  };
  return { mine, series, overlay };
}

test("with other runs, every panel of the grid draws each run in the run's colour", () => {
  const { mine, series, overlay } = twoRuns();
  const grid = panels(series, mine, overlay);
  assert.deepEqual(
    grid.map((p) => p.choice),
    panels(series, mine).map((p) => p.choice),
  );
  const reward = grid[0];
  assert.deepEqual(
    reward.lines.map((l) => [l.run, l.cls, l.values]),
    [
      ["mine", runColourClass("mine"), [0.1, 0.2, null]],
      ["theirs", runColourClass("theirs"), [null, 0.7, 0.9]],
    ],
  );
  assert.equal(reward.lines[reward.primary].run, "mine"); // its number is the current run's
  const status = grid[1]; // two statuses of two runs: four lines, each run's told apart by dashes
  assert.equal(status.lines.length, 4);
  assert.equal(status.primary, -1);
  assert.deepEqual(
    status.lines.map((l) => [l.run, l.dash]),
    [
      ["mine", 0],
      ["mine", 1],
      ["theirs", 0],
      ["theirs", 1],
    ],
  );
  assert.deepEqual(status.lines[2].values, [null, 0, 0]);
});

test("a run's colour does not depend on its place in the overlay", () => {
  const { overlay } = twoRuns();
  const chosen = [{ key: "reward_mean", label: "Mean reward", direction: 1 }];
  const reversed = { points: overlay.points, runs: overlay.runs.slice().reverse() };
  const colours = (o) => Object.fromEntries(overlayLines(chosen, o, {}).map((l) => [l.key, l.cls]));
  assert.deepEqual(colours(overlay), colours(reversed));
});

test("the runs' legend names each run in its colour and marks the current one", () => {
  const { overlay } = twoRuns();
  assert.deepEqual(legendRuns(null), []);
  assert.deepEqual(legendRuns(overlay), [
    { name: "mine", label: "mine (current)", cls: runColourClass("mine") },
    { name: "theirs", label: "theirs", cls: runColourClass("theirs") },
  ]);
});
