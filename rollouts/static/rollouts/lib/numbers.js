// Relax Rollout Viewer: numbers as the pages print them, the way the server prints them too.
// Pure functions: no DOM, so tests/js runs them under Node.

const MISSING = "–"; // what a missing value reads as (an en dash)
const NBSP = "\u00a0"; // holds a unit to its number: "927 timesteps/s" never wraps
const COUNT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const DIGITS = 4; // significant digits of a float
const EXACT_WHOLE = 1e15; // whole numbers below this print every digit

export function finite(value) {
  return typeof value === "number" && Number.isFinite(value);
}

// The server's rule (presentation/formatting.py; both are checked against one table,
// tests/js/numbers.cases.json): whole numbers as integers; other numbers to 4 significant
// digits without trailing zeros (0.05, 36.3, 2206); from 10,000 up as whole numbers; below 0.001
// and from 1,000,000 up in a short exponent form (1.234e-4, 1.235e6). A tie rounds away from
// zero on the exact value (`toFixed`, as the server does with decimals).
export function formatNumber(value) {
  if (!finite(value)) return MISSING;
  const size = Math.abs(value);
  if (Number.isInteger(value) && size < EXACT_WHOLE) return String(value + 0); // -0 reads 0
  if (size < 1e-3 || size >= 1e6) {
    const [mantissa, exponent] = value.toExponential(DIGITS - 1).split("e");
    return `${trimmed(mantissa)}e${Number(exponent)}`;
  }
  if (size >= 1e4) return value.toFixed(0);
  // The decimal exponent of the shortest text that reads back as the value (Python's repr).
  const exponent = Number(value.toExponential().split("e")[1]);
  return trimmed(value.toFixed(Math.max(0, DIGITS - 1 - exponent)));
}

function trimmed(text) {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

// A change with its sign, a cue besides any colour: +0.5, -2, ±0 when there is none.
export function formatDelta(delta) {
  if (!finite(delta)) return MISSING;
  return signOf(delta) + formatNumber(Math.abs(delta));
}

// A share (0..1) as a percentage with one decimal: 0.125 -> "12.5 %".
export function formatShare(value) {
  if (!finite(value)) return MISSING;
  return `${(100 * value + 0).toFixed(1)}${NBSP}%`;
}

// A change of a share, in percentage points: 0.05 -> "+5.0 pp".
export function formatShareDelta(delta) {
  if (!finite(delta)) return MISSING;
  return `${signOf(delta)}${(100 * Math.abs(delta)).toFixed(1)}${NBSP}pp`;
}

// A number and its unit, held together: "927 timesteps/s".
export function formatUnit(value, unit) {
  return finite(value) ? `${formatNumber(value)}${NBSP}${unit}` : MISSING;
}

function signOf(delta) {
  if (delta > 0) return "+";
  return delta < 0 ? "-" : "±";
}

// A count with thousands separators (12,345).
export function formatCount(value) {
  return finite(value) ? COUNT.format(value) : MISSING;
}

// Seconds as people read them: 12.3 s, 4m 05s, 1h 02m 03s.
export function formatDuration(seconds) {
  if (!finite(seconds)) return MISSING;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n) => (n < 10 ? "0" : "") + n;
  return `${h ? `${h}h ${pad(m)}m ` : `${m}m `}${pad(s % 60)}s`;
}
