// Relax Rollout Viewer: a run's colour, the same on every page, derived from its name alone
// (rollouts/presentation/runcolour.py is its twin on the server; both are tested against one
// list, tests/support/run-colours.json).
//
// The rule: the 32-bit FNV-1a hash of the name's UTF-8 bytes (offset basis 0x811C9DC5, prime
// 0x01000193; for each byte: xor it in, then multiply by the prime modulo 2**32), modulo
// RUN_COLOURS. The index names a palette colour, --rv-run-<index> in viewer.css, applied by
// the class rv-run-colour-<index>.

export const RUN_COLOURS = 8; // --rv-run-0 ... --rv-run-7 (viewer.css)

export function fnv1a32(text) {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

export function runColourIndex(name) {
  return fnv1a32(String(name)) % RUN_COLOURS;
}

export function runColourClass(name) {
  return "rv-run-colour-" + runColourIndex(name);
}
