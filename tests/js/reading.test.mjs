// The convergence reading's table (reading.js): each number the reading compared, the rule it
// was held against, and whether it holds.
import assert from "node:assert/strict";
import { test } from "node:test";

import { readingRows } from "../../rollouts/static/rollouts/reading.js";

const THRESHOLDS = { min_steps: 5, window: 10, plateau_cv: 0.05, plateau_range: 0.1, kl_max: 0.05 };
const text = (v) => String(v);

test("each rule says whether its number holds", () => {
  const numbers = { steps: 12, shift: -0.01, noise: 0.02, cv: 0.2, slope: 0.3 };
  const rows = readingRows(numbers, THRESHOLDS, text);
  const holds = Object.fromEntries(rows.map((row) => [row[0], row[4]]));
  assert.deepEqual(holds, { steps: true, shift: true, cv: false, slope: false });
  const shift = rows.find((row) => row[0] === "shift");
  assert.deepEqual(shift.slice(1, 4), [
    "shift between the halves",
    "noise 0.02",
    "plateau needs |shift| ≤ noise",
  ]);
});

test("a missing number does not hold, and rows appear only for numbers given", () => {
  const rows = readingRows({ steps: 3, cv: null }, THRESHOLDS, text);
  assert.deepEqual(
    rows.map((row) => [row[0], row[4]]),
    [
      ["steps", false],
      ["cv", false],
    ],
  );
});

test("a number no rule names is still listed, without a rule; noise is not a row", () => {
  const rows = readingRows({ level: 0.7, noise: 0.1, episodes: 40 }, THRESHOLDS, text);
  assert.deepEqual(rows, [
    ["level", "mean over the window", "", "", null],
    ["episodes", "episodes", "", "", null],
  ]);
});
