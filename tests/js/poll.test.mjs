// How often the pages poll (lib/poll.js): the server's data-poll-ms, or 3 s.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFAULT_POLL_MS, parsePollMs } from "../../rollouts/static/rollouts/lib/poll.js";

test("a whole number of milliseconds is taken as it is", () => {
  assert.equal(parsePollMs("250"), 250);
  assert.equal(parsePollMs("1"), 1);
  assert.equal(parsePollMs("60000"), 60000);
});

test("anything else falls back to three seconds", () => {
  assert.equal(DEFAULT_POLL_MS, 3000);
  for (const raw of [null, undefined, "", "0", "-5", "2.5", "250ms", "abc"]) {
    assert.equal(parsePollMs(raw), 3000, String(raw));
  }
});
