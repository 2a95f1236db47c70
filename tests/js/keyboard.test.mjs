// When the pages' keys stand aside (lib/keyboard.js): one rule for every key of every page.
import assert from "node:assert/strict";
import { test } from "node:test";

import { isPlainClick, isTyping } from "../../rollouts/static/rollouts/lib/keyboard.js";

const input = (type) => ({ tagName: "INPUT", type });

test("text fields, lists and editable text take the keys", () => {
  for (const type of ["text", "search", "number", "email", "url", "password", "date"]) {
    assert.equal(isTyping(input(type)), true, type);
  }
  assert.equal(isTyping(input("")), true); // no type: a text field
  assert.equal(isTyping({ tagName: "SELECT" }), true);
  assert.equal(isTyping({ tagName: "TEXTAREA" }), true);
  assert.equal(isTyping({ tagName: "DIV", isContentEditable: true }), true);
});

test("a checkbox, a button or the page itself leaves the keys to the page", () => {
  for (const type of ["checkbox", "radio", "button", "submit", "range"]) {
    assert.equal(isTyping(input(type)), false, type);
  }
  assert.equal(isTyping({ tagName: "BUTTON" }), false);
  assert.equal(isTyping({ tagName: "BODY", isContentEditable: false }), false);
  assert.equal(isTyping(null), false);
  assert.equal(isTyping({}), false); // the document, say: no tag name
});

test("only a plain left click is the page's to handle", () => {
  const click = { button: 0, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false };
  assert.equal(isPlainClick(click), true);
  assert.equal(isPlainClick({ ...click, button: 1 }), false);
  for (const key of ["ctrlKey", "metaKey", "shiftKey", "altKey"]) {
    assert.equal(isPlainClick({ ...click, [key]: true }), false, key);
  }
});
