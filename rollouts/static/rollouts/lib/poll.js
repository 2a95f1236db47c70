// Relax Rollout Viewer: how often a page asks the server again. The server says it (the
// header's data-poll-ms, or <main>'s on the Training page): ROLLOUTS_POLL_MS.

export const DEFAULT_POLL_MS = 3000;

// A data-poll-ms value as milliseconds: a whole number of at least 1, else the default.
export function parsePollMs(raw) {
  const value = /^\d+$/.test(raw || "") ? Number.parseInt(raw, 10) : 0;
  return value >= 1 ? value : DEFAULT_POLL_MS;
}

// The server's poll interval (data-poll-ms on the header), in ms.
export function pollMs() {
  const header = document.getElementById("rv-header");
  return parsePollMs(header ? header.getAttribute("data-poll-ms") : null);
}
