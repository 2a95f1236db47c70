// The theme selector's pure parts (theme-select.js): which theme a choice means, and the cookie
// the server reads it from (rollouts_theme.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { themeCookie, themeOf } from "../../rollouts/static/rollouts/theme-select.js";

test("a choice of light or dark is itself; system follows the system", () => {
  assert.equal(themeOf("light", true), "light");
  assert.equal(themeOf("dark", false), "dark");
  assert.equal(themeOf("system", true), "dark");
  assert.equal(themeOf("system", false), "light");
});

test("the cookie lives a year under the app's path, Lax, Secure only over https", () => {
  assert.equal(
    themeCookie("dark", "/portal/rollouts/", false),
    "rv-theme=dark; path=/portal/rollouts/; max-age=31536000; SameSite=Lax",
  );
  assert.match(themeCookie("light", "/", true), /; SameSite=Lax; Secure$/);
});
