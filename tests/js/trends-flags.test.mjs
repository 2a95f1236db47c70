// The flag series on the trends page (trends-lines.js): which flag a series names, where a
// point opens (a flag's: the step's table filtered by it), and the grid's "Flags" panel.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  flagOf,
  groupName,
  panels,
  pointUrl,
} from "../../rollouts/static/rollouts/trends-lines.js";

const URLS = { step: "/p/train/{step}/", table: "/p/train/{step}/table/" };

test("a flag series' key names its flag; other keys name none", () => {
  assert.equal(flagOf("flag.repeats"), "repeats");
  assert.equal(flagOf("flag.outlier_length"), "outlier_length");
  assert.equal(flagOf("reward_mean"), null);
  assert.equal(flagOf("status.truncated"), null);
  assert.equal(flagOf("all:flag"), null);
  assert.equal(flagOf(undefined), null);
  assert.equal(flagOf(null), null);
});

test("a flag point opens its step's table filtered by the flag; others the step's page", () => {
  assert.equal(pointUrl(URLS, "7", "flag.repeats"), "/p/train/7/table/?flag=repeats");
  assert.equal(pointUrl(URLS, "7", "flag.no_answer"), "/p/train/7/table/?flag=no_answer");
  assert.equal(pointUrl(URLS, "7", "reward_mean"), "/p/train/7/");
  assert.equal(pointUrl(URLS, "7", "status.cut"), "/p/train/7/");
  assert.equal(pointUrl(URLS, "7", undefined), "/p/train/7/");
});

test("a step's name is encoded in both links", () => {
  assert.equal(pointUrl(URLS, "a b", "flag.cut"), "/p/train/a%20b/table/?flag=cut");
  assert.equal(pointUrl(URLS, "a b", "reward_mean"), "/p/train/a%20b/");
});

test("without a table link (an older server's run), a flag point opens the step's page", () => {
  assert.equal(pointUrl({ step: URLS.step }, "3", "flag.repeats"), "/p/train/3/");
});

test("the flag series are one grid panel, 'Flags', every flag a line", () => {
  const series = [
    { key: "reward_mean", label: "Reward mean", direction: 1, kind: "metric" },
    { key: "flag.repeats", label: "Flagged repeats", direction: 0, kind: "flag" },
    { key: "flag.cut", label: "Flagged cut", direction: 0, kind: "flag" },
  ];
  const points = [
    { step: 1, metrics: { reward_mean: 0.5, "flag.repeats": 0, "flag.cut": 0.1 } },
    { step: 2, metrics: { reward_mean: 0.6, "flag.repeats": 0.05, "flag.cut": 0.1 } },
  ];
  const grid = panels(series, points);
  assert.deepEqual(
    grid.map((p) => [p.choice, p.label]),
    [
      ["reward_mean", "Reward mean"],
      ["all:flag", "Flags"],
    ],
  );
  assert.deepEqual(
    grid[1].lines.map((l) => [l.key, l.values]),
    [
      ["flag.repeats", [0, 0.05]],
      ["flag.cut", [0.1, 0.1]],
    ],
  );
  assert.equal(groupName("flag"), "Flags");
});
