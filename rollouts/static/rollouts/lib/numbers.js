// Relax Rollout Viewer: numbers as the pages print them, the way the server prints them too.
// Pure functions: no DOM, so tests/js runs them under Node.

const MISSING = "–"; // what a missing value reads as (an en dash)
const COUNT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const RATE = new Intl.NumberFormat("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });

export function finite(value) {
  return typeof value === "number" && Number.isFinite(value);
}

// Ints plain, floats to 4 decimals, exponent form (two exponent digits, as Python's "%.3e")
// when tiny or huge.
export function formatNumber(value) {
  if (!finite(value)) return MISSING;
  if (Number.isInteger(value)) return String(value);
  const size = Math.abs(value);
  if (size < 1e-3 || size >= 1e6) return value.toExponential(3).replace(/e([+-])(\d)$/, "e$10$2");
  return value.toFixed(4);
}

// A change with its sign: +0.5000, -2, ±0 when there is none.
export function formatDelta(delta) {
  if (!finite(delta)) return MISSING;
  return signOf(delta) + formatNumber(Math.abs(delta));
}

// A share (0..1) as a percentage with one decimal: 0.125 -> "12.5 %".
export function formatShare(value) {
  if (!finite(value)) return MISSING;
  return `${(100 * value).toFixed(1)} %`;
}

// A change of a share, in percentage points: 0.05 -> "+5.0 pp".
export function formatShareDelta(delta) {
  if (!finite(delta)) return MISSING;
  return `${signOf(delta)}${(100 * Math.abs(delta)).toFixed(1)} pp`;
}

function signOf(delta) {
  if (delta > 0) return "+";
  return delta < 0 ? "-" : "±";
}

// A count with thousands separators (12,345).
export function formatCount(value) {
  return finite(value) ? COUNT.format(value) : MISSING;
}

// A rate with one decimal and thousands separators (1,234.5).
export function formatRate(value) {
  return finite(value) ? RATE.format(value) : MISSING;
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
