// Relax Rollout Viewer: the convergence reading's box on the trends and Training pages (their
// scripts call renderReading with the reading from their JSON and number formats): the
// verdict, why, and every number the reading compared with the rule it was held against.
// The verdict's words and tone are the server's (`reading.verdict`, presentation/learning.py),
// the same as the run picker's: this draws them, it never decides them.
// Text reaches the page only through textContent.
import { element as html } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

// Every number the reading compared: [name, label, compared with, rule, whether it holds].
export function readingRows(n, t, fmt) {
  const rows = [
    [
      "steps",
      "steps with a reward",
      "min_steps " + t.min_steps,
      "at least min_steps (else warming up)",
      n.steps >= t.min_steps,
    ],
    ["window_steps", "steps read", "window " + t.window, "the last window steps", null],
    ["level", "mean over the window", "", "", null],
    [
      "shift",
      "shift between the halves",
      "noise " + fmt(n.noise),
      "plateau needs |shift| ≤ noise",
      finite(n.shift) && Math.abs(n.shift) <= n.noise,
    ],
    [
      "cv",
      "coefficient of variation",
      "plateau_cv " + t.plateau_cv,
      "plateau needs cv ≤ plateau_cv",
      finite(n.cv) && n.cv <= t.plateau_cv,
    ],
    [
      "range_ratio",
      "range / level",
      "plateau_range " + t.plateau_range,
      "plateau needs range_ratio ≤ plateau_range",
      finite(n.range_ratio) && n.range_ratio <= t.plateau_range,
    ],
    ["slope", "slope per step", "0", "not rising when slope < 0", finite(n.slope) && n.slope < 0],
    [
      "approx_kl",
      "latest approx_kl",
      "kl_max " + t.kl_max,
      "kl too large when approx_kl > kl_max",
      finite(n.approx_kl) && n.approx_kl > t.kl_max,
    ],
    [
      "explained_variance",
      "latest explained variance",
      "explained_variance_min " + t.explained_variance_min,
      "value not fitted when explained_variance < explained_variance_min",
      finite(n.explained_variance) && n.explained_variance < t.explained_variance_min,
    ],
  ].filter((row) => row[0] in n);
  // A number no rule above names is still shown (the training reading has more).
  const named = rows.map((row) => row[0]).concat(["noise"]);
  return rows.concat(
    Object.keys(n)
      .filter((k) => named.indexOf(k) < 0)
      .map((k) => [k, k, "", "", null]),
  );
}

const TONES = ["good", "warn", "bad", "neutral"];

// The verdict to draw: the server's label, tone and why (a reading without one, from an older
// server, is drawn by its own name, neutral: never a colour decided here).
export function verdictOf(reading) {
  const verdict = reading.verdict || {};
  const tone = TONES.indexOf(verdict.tone) >= 0 ? verdict.tone : "neutral";
  return {
    label: typeof verdict.label === "string" ? verdict.label : String(reading.reading ?? ""),
    tone: tone,
    why: typeof verdict.why === "string" ? verdict.why : String(reading.why ?? ""),
    className: "rv-learning rv-learning-" + tone,
  };
}

export function renderReading(box, reading, fmt, fmtDelta) {
  const numbers = reading.numbers || {};
  const verdict = verdictOf(reading);
  box.setAttribute("data-reading", reading.verdict?.state ?? reading.reading);
  box.setAttribute("data-tone", verdict.tone);
  const name = box.querySelector(".rv-reading-name");
  name.textContent = verdict.label;
  name.className = "rv-reading-name " + verdict.className;
  box.querySelector(".rv-reading-why").textContent = verdict.why;
  const rows = readingRows(numbers, reading.thresholds || {}, fmt).map((row) => {
    const tr = html("tr");
    const value = numbers[row[0]];
    const holds = row[4];
    tr.setAttribute("data-number", row[0]);
    [row[1], row[0] === "shift" ? fmtDelta(value) : fmt(value), row[2], row[3]].forEach((text) => {
      tr.appendChild(html("td", "", text));
    });
    tr.appendChild(
      holds === null
        ? html("td")
        : html("td", holds ? "rv-holds" : "rv-fails", holds ? "yes" : "no"),
    );
    return tr;
  });
  const table = box.querySelector(".rv-reading-numbers");
  const body = table.querySelector("tbody");
  table.hidden = !rows.length;
  body.replaceChildren(...rows);
  const warnings = box.querySelector("#rv-warnings");
  const warned = reading.warnings || [];
  warnings.hidden = !warned.length;
  warnings.replaceChildren(...warned.map((w) => html("li", "rv-warning", w)));
  box.querySelector(".rv-disclaimer").textContent = "Heuristic: " + reading.disclaimer + ".";
}
