// Relax Rollout Viewer: a page's state in its URL (the step, sort and filters, the chosen curve,
// the runs overlaid), so a reload or a shared link lands on the same view. Pure functions of
// strings: every URL they start from is one the server rendered.

// `url` (resolved against `base`) with each of `params` set, or deleted where it is null.
export function withParams(url, params, base) {
  const parsed = new URL(url, base);
  for (const [key, value] of Object.entries(params)) {
    if (value === null) parsed.searchParams.delete(key);
    else parsed.searchParams.set(key, value);
  }
  return parsed.toString();
}

// Another step's page with this page's query carried over (sort and filters), less the
// parameters that belong to one step (`dropped`: the sample `i`, the table's page...).
export function carryQuery(stepUrl, search, dropped) {
  const params = new URLSearchParams(search);
  for (const name of dropped) params.delete(name);
  const query = params.toString();
  return stepUrl + (query ? `?${query}` : "");
}

// The query of a submitted form's entries ([name, value] pairs): empty values left out, and
// the default order ("asc") too, so the URL says only what differs.
export function formQuery(entries) {
  const params = new URLSearchParams();
  for (const [key, value] of entries) {
    if (value !== "" && !(key === "order" && value === "asc")) params.append(key, value);
  }
  return params.toString();
}

// The step named by a "#step=N" fragment, or null.
export function stepFromHash(hash) {
  const match = /^#step=(\d+)$/.exec(hash);
  return match ? Number(match[1]) : null;
}

// The names in a comma-separated parameter (?runs=a,b), in order; [] when it is absent.
export function listParam(search, name) {
  const value = new URLSearchParams(search).get(name);
  return value ? value.split(",") : [];
}

// Set (or, when empty, delete) one parameter of the page's URL in place: no history entry,
// as a choice of curve or runs is not a page of its own.
export function replaceParam(name, value) {
  const url = new URL(window.location.href);
  if (value) url.searchParams.set(name, value);
  else url.searchParams.delete(name);
  history.replaceState(history.state, "", url);
}
