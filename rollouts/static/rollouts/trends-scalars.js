// Relax Rollout Viewer: the trends page's parts for the run's TensorBoard scalars
// (window.rvTrendsScalars): the note saying what was found and read, and the "with" select
// that draws a second curve (a scalar beside a rollout metric, say) on the same step axis.
// Text reaches the page only through textContent.
(function () {
  "use strict";

  var L = window.rvTrendsLines;

  // `source`: the trends JSON's "scalars" (what the TensorBoard directory gave); said only when
  // there is a directory, with any file not read to its end and how to install the package.
  function renderSource(note, source, series) {
    if (!note) return;
    note.hidden = !(source && source.found);
    if (note.hidden) return;
    var tags = series.filter(function (s) { return L.isScalarKind(s.kind); }).length;
    var files = source.files_total;  // `files` lists at most 100 of them
    var text = "TensorBoard: " + tags + " scalar" + (tags === 1 ? "" : "s") + " from " +
      source.directory + " (" + source.found_by + "; " + files + " event file" +
      (files === 1 ? "" : "s") + ")";
    var broken = source.files.filter(function (f) { return f.error; });
    if (broken.length) {
      text += ". Not read to the end: " + broken.map(function (f) {
        return f.name + ": " + f.error;
      }).join("; ");
    }
    if (source.message) text += ". " + source.message;
    note.textContent = text;
  }

  // The "with" select: every single series, grouped as the curve select groups them.
  function fillWith(select, series, optgroup) {
    if (!select) return;
    var groups = {};
    series.forEach(function (s) {
      var group = groups[s.kind] || (groups[s.kind] = optgroup(L.groupName(s.kind)));
      group.appendChild(new Option(s.label, s.key));
    });
    select.replaceChildren(new Option("nothing else", ""));
    Object.keys(groups).forEach(function (kind) { select.appendChild(groups[kind]); });
  }

  // The choice comes from the URL (?with=KEY) and goes back into it, like ?series=.
  var chosen = "";
  function initWith(select, changed) {
    chosen = new URLSearchParams(window.location.search).get("with") || "";
    if (!select) return;
    select.addEventListener("change", function () {
      chosen = select.value;
      var url = new URL(window.location.href);
      if (chosen) url.searchParams.set("with", chosen);
      else url.searchParams.delete("with");
      history.replaceState(history.state, "", url);
      changed();
    });
  }
  // The second curve, when it is a series of its own and not the curve itself.
  function withKey(choice, available) {
    return chosen && chosen !== choice && available(chosen).length ? chosen : null;
  }
  // Filled again only when the series change (an open list stays open), then set.
  var filledFor = null;
  function showWith(select, series, choice, available, optgroup) {
    if (!select) return;
    var key = series.map(function (s) { return s.key; }).join("\n");
    if (key !== filledFor) { filledFor = key; fillWith(select, series, optgroup); }
    select.value = withKey(choice, available) || "";
  }
  // The chosen lines plus the "with" curve (on the same step axis), noted on the chart.
  function addWith(lines, choice, available, chart) {
    var second = withKey(choice, available);
    chart.setAttribute("data-with", second || "");
    return second ? lines.concat(available(second)) : lines;
  }

  // Both parts, on every render of the trends (the note, then the "with" select).
  function render(source, series, choice, available, optgroup) {
    renderSource(document.getElementById("rv-trends-scalars"), source, series);
    showWith(document.getElementById("rv-series-with"), series, choice, available, optgroup);
  }

  window.rvTrendsScalars = { render: render, initWith: initWith, addWith: addWith };
})();
