// What the trends page draws for a choice of curve (trends-lines.js): the default smoothing,
// the colours of status lines, why a step has no value, and the grid's panels. Plain functions
// of the trends JSON, importable without a page.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  defaultSmoothing,
  gapReason,
  groupName,
  lines,
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
