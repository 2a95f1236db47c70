// The table's controls as a query (table.js tableQuery): `cols` once, comma-separated, as the
// server writes it in its links; left out at its default; empty filters left out.
import assert from "node:assert/strict";
import { test } from "node:test";

import { tableQuery } from "../../rollouts/static/rollouts/table.js";

const DEFAULTS = "reward,advantage,status";

test("the chosen columns are one comma-separated value, in the form's order", () => {
  const entries = [
    ["status", "completed"],
    ["cols", "none"],
    ["cols", "reward"],
    ["cols", "prompt_length"],
  ];
  assert.equal(tableQuery(entries, DEFAULTS), "?status=completed&cols=reward%2Cprompt_length");
});

test("the default columns and empty filters are left out", () => {
  const entries = [
    ["sort", "reward"],
    ["status", ""],
    ["cols", "none"],
    ["cols", "reward"],
    ["cols", "advantage"],
    ["cols", "status"],
  ];
  assert.equal(tableQuery(entries, DEFAULTS), "?sort=reward");
});

test("no column ticked is said as none; a form without the chooser says nothing of columns", () => {
  assert.equal(tableQuery([["cols", "none"]], DEFAULTS), "?cols=none");
  assert.equal(tableQuery([["dataset", "math"]], DEFAULTS), "?dataset=math");
  assert.equal(tableQuery([], DEFAULTS), "");
});
