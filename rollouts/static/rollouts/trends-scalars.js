// Relax Rollout Viewer: the trends page's parts for the run's TensorBoard scalars
// (renderScalars, initWith, addWith): the note saying what was found and read, and the "with" select
// that draws a second curve (a scalar beside a rollout metric, say) on the same step axis.
// Text reaches the page only through textContent.
import { replaceParam } from "./lib/url.js";
import { groupName, isScalarKind } from "./trends-lines.js";

// `source`: the trends JSON's "scalars" (what the TensorBoard directory gave); said only when
// there is a directory, with any file not read to its end and how to install the package.
function renderSource(note, source, series) {
  if (!note) return;
  note.hidden = !source?.found;
  if (note.hidden) return;
  const tags = series.filter((s) => isScalarKind(s.kind)).length;
  const files = source.files_total; // `files` lists at most 100 of them
  let text =
    "TensorBoard: " +
    tags +
    " scalar" +
    (tags === 1 ? "" : "s") +
    " from " +
    source.directory +
    " (" +
    source.found_by +
    "; " +
    files +
    " event file" +
    (files === 1 ? "" : "s") +
    ")";
  const broken = source.files.filter((f) => f.error);
  if (broken.length) {
    text += ". Not read to the end: " + broken.map((f) => f.name + ": " + f.error).join("; ");
  }
  if (source.message) text += ". " + source.message;
  note.textContent = text;
}

// The "with" select: every single series, grouped as the curve select groups them.
function fillWith(select, series, optgroup) {
  if (!select) return;
  const groups = {};
  series.forEach((s) => {
    if (!groups[s.kind]) groups[s.kind] = optgroup(groupName(s.kind));
    const group = groups[s.kind];
    group.appendChild(new Option(s.label, s.key));
  });
  select.replaceChildren(new Option("nothing else", ""));
  Object.keys(groups).forEach((kind) => {
    select.appendChild(groups[kind]);
  });
}

// The choice comes from the URL (?with=KEY) and goes back into it, like ?series=.
let chosen = "";
export function initWith(select, changed) {
  chosen = new URLSearchParams(window.location.search).get("with") || "";
  if (!select) return;
  select.addEventListener("change", () => {
    chosen = select.value;
    replaceParam("with", chosen);
    changed();
  });
}
// The second curve, when it is a series of its own and not the curve itself.
function withKey(choice, available) {
  return chosen && chosen !== choice && available(chosen).length ? chosen : null;
}
// Filled again only when the series change (an open list stays open), then set.
let filledFor = null;
function showWith(select, series, choice, available, optgroup) {
  if (!select) return;
  const key = series.map((s) => s.key).join("\n");
  if (key !== filledFor) {
    filledFor = key;
    fillWith(select, series, optgroup);
  }
  select.value = withKey(choice, available) || "";
}
// The chosen lines plus the "with" curve (on the same step axis), noted on the chart.
export function addWith(lines, choice, available, chart) {
  const second = withKey(choice, available);
  chart.setAttribute("data-with", second || "");
  return second ? lines.concat(available(second)) : lines;
}

// Both parts, on every render of the trends (the note, then the "with" select).
export function renderScalars(source, series, choice, available, optgroup) {
  renderSource(document.getElementById("rv-trends-scalars"), source, series);
  showWith(document.getElementById("rv-series-with"), series, choice, available, optgroup);
}
