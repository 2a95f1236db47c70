// Relax Rollout Viewer: what a reader chose, kept as JSON in localStorage. Storage can be off
// (private mode, a policy): then a choice lasts for this page only, and nothing fails.

export function load(key, fallback) {
  try {
    const value = localStorage.getItem(key);
    return value === null ? fallback : JSON.parse(value);
  } catch (_error) {
    return fallback;
  }
}

export function store(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch (_error) {
    // Private mode or storage disabled: the choice lasts for this page only.
  }
}
