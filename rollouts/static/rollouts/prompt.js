// Relax Rollout Viewer: the prompt page's chart of the prompt's mean reward per step (chart.js).
// The points come from the server in the chart's data-chart attribute; a point opens the
// prompt's first sample in that step. Without this script the table below has the numbers.
(function () {
  "use strict";

  function start() {
    var svg = document.getElementById("rv-prompt-chart");
    if (!svg || !window.rvChart) return;
    var data = JSON.parse(svg.getAttribute("data-chart") || "[]");
    var chart = window.rvChart.create(svg, {
      tooltip: document.getElementById("rv-prompt-crosshair"),
      href: function (point) { return point.url; },
      format: function (v) { return window.rv.finite(v) ? (+v).toFixed(4) : "–"; },
    });
    var points = data.map(function (d) { return { step: d.step, url: d.url }; });
    var values = data.map(function (d) { return d.mean_reward; });
    chart.draw(points, [{ key: "mean_reward", label: "mean reward", values: values, connect: true }], 0);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
