// The LaTeX found in a sample's text before Markdown renders it (lib/math-text.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CLOSE,
  closingBrace,
  extractMath,
  OPEN,
} from "../../rollouts/static/rollouts/lib/math-text.js";

const slot = (i) => OPEN + i + CLOSE;

test("inline and display formulas are taken out and numbered in order", () => {
  const found = extractMath("area $x^2$ and $$\\int f$$ end");
  assert.equal(found.text, `area ${slot(0)} and ${slot(1)} end`);
  assert.deepEqual(found.math, [
    { tex: "x^2", display: false, source: "$x^2$" },
    { tex: "\\int f", display: true, source: "$$\\int f$$" },
  ]);
});

test("backslash delimiters: \\( \\) inline, \\[ \\] display", () => {
  const found = extractMath("\\(a+b\\) then \\[c\\]");
  assert.equal(found.text, `${slot(0)} then ${slot(1)}`);
  assert.deepEqual(
    found.math.map((m) => [m.tex, m.display]),
    [
      ["a+b", false],
      ["c", true],
    ],
  );
});

test("dollar amounts in prose are not math", () => {
  for (const prose of ["it costs $5 and $6", "a $ b $ c", "$10 or $", "pay $ 3$"]) {
    const found = extractMath(prose);
    assert.equal(found.text, prose, prose);
    assert.deepEqual(found.math, [], prose);
  }
});

test("\\boxed takes its whole braced argument, nested braces included", () => {
  const found = extractMath("so \\boxed{\\frac{1}{2}} done");
  assert.equal(found.text, `so ${slot(0)} done`);
  assert.deepEqual(found.math, [
    { tex: "\\boxed{\\frac{1}{2}}", display: false, source: "\\boxed{\\frac{1}{2}}" },
  ]);
});

test("an unclosed \\boxed stays text", () => {
  const found = extractMath("\\boxed{1 + {2}");
  assert.equal(found.text, "\\boxed{1 + {2}");
  assert.deepEqual(found.math, []);
});

test("the closing brace is found at its depth, within reach", () => {
  assert.equal(closingBrace("{a{b}c}", 1), 7);
  assert.equal(closingBrace("{a{b}c", 1), -1);
  assert.equal(closingBrace(`{${"x".repeat(3000)}}`, 1), -1); // beyond 2000 characters
});
