// A page's state in its URL (lib/url.js): what carries over to another step, what a form's
// query says, and the parameters the trends and search pages keep.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  carryQuery,
  formQuery,
  listParam,
  stepFromHash,
  withParams,
} from "../../rollouts/static/rollouts/lib/url.js";

test("another step keeps the sort and filters but not the per-step sample", () => {
  assert.equal(
    carryQuery("/p/train/5/", "?sort=reward&i=3&order=desc", ["i"]),
    "/p/train/5/?sort=reward&order=desc",
  );
  assert.equal(carryQuery("/p/train/5/", "?i=3", ["i"]), "/p/train/5/");
  assert.equal(carryQuery("/p/train/5/", "", ["i"]), "/p/train/5/");
  // The table's page and marked row are per step too.
  assert.equal(
    carryQuery("/t/7/table/", "?page=2&at=9&status=failed", ["i", "page", "at"]),
    "/t/7/table/?status=failed",
  );
});

test("a form's query leaves out empty values and the default order", () => {
  const entries = [
    ["sort", "reward"],
    ["order", "asc"],
    ["q", ""],
    ["status", "failed"],
  ];
  assert.equal(formQuery(entries), "sort=reward&status=failed");
  assert.equal(formQuery([["order", "desc"]]), "order=desc");
  assert.equal(formQuery([["q", "a b&c"]]), "q=a+b%26c");
  assert.equal(formQuery([]), "");
});

test("parameters are set, replaced or deleted, against the page's URL", () => {
  assert.equal(
    withParams("/api/search?q=x&after=5", { after: null, steps: "3" }, "http://host/p/"),
    "http://host/api/search?q=x&steps=3",
  );
  assert.equal(
    withParams("search?q=x", { after: "c1" }, "http://host/p/train/"),
    "http://host/p/train/search?q=x&after=c1",
  );
});

test("a step chosen on the search page's curve is read from the fragment", () => {
  assert.equal(stepFromHash("#step=12"), 12);
  assert.equal(stepFromHash("#step=0"), 0);
  for (const other of ["", "#", "#step=", "#step=1x", "#step=-1", "#steps=1"]) {
    assert.equal(stepFromHash(other), null, other);
  }
});

test("a list parameter reads its names in order, or none", () => {
  assert.deepEqual(listParam("?runs=a,b&series=x", "runs"), ["a", "b"]);
  assert.deepEqual(listParam("?series=x", "runs"), []);
  assert.deepEqual(listParam("?runs=", "runs"), []);
});
