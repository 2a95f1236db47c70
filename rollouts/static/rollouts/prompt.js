// Relax Rollout Viewer: the prompt page's chart of the prompt's mean reward per step (chart.js).
// The points come from the server in the chart's data-chart attribute; a point opens the
// prompt's first sample in that step. Without this script the table below has the numbers.
import { createChart } from "./chart.js";
import { formatNumber } from "./lib/numbers.js";

export function startPromptChart() {
  const svg = document.getElementById("rv-prompt-chart");
  if (!svg) return;
  const data = JSON.parse(svg.getAttribute("data-chart") || "[]");
  const chart = createChart(svg, {
    tooltip: document.getElementById("rv-prompt-crosshair"),
    href: (point) => point.url,
    format: (v) => formatNumber(v), // "–" when missing
  });
  const points = data.map((d) => ({ step: d.step, url: d.url }));
  const values = data.map((d) => d.mean_reward);
  chart.draw(points, [{ key: "mean_reward", label: "mean reward", values, connect: true }], 0);
}
