// Relax Rollout Viewer: the trends page's metric cards: each metric's latest value, its change
// since the step before (green or red by the metric's own direction: better or worse), a
// sparkline, and why a change was flagged as abnormal. Text goes in through textContent only.
//
//   renderCards(box, cards, {format(value, key), formatDelta(delta, key), direction(key)})
//     cards: the trends JSON's "cards"; direction: +1 higher is better, -1 lower, 0 neutral
//     (for a card that does not say its own)
import { sparkline } from "./chart.js";
import { element as html } from "./lib/dom.js";
import { finite } from "./lib/numbers.js";

export function renderCards(box, cards, how) {
  box.replaceChildren(
    ...cards.map((card) => {
      const node = html(
        "section",
        "rv-card rv-metric-card" + (card.abnormal ? " rv-abnormal" : ""),
      );
      node.setAttribute("data-key", card.key);
      node.appendChild(html("h2", "rv-card-title", card.label));
      node
        .appendChild(html("p", "rv-big rv-card-latest", how.format(card.latest, card.key)))
        .setAttribute("data-value", card.latest);
      const delta = node.appendChild(
        html("p", "rv-card-delta", how.formatDelta(card.delta, card.key)),
      );
      // Red only when the change is bad by the card's own direction; a neutral metric's
      // unusual change is flagged, not painted as bad.
      const direction = "direction" in card ? card.direction : how.direction(card.key);
      const good = finite(card.delta) ? card.delta * direction : 0;
      if (good) delta.classList.add(good > 0 ? "rv-delta-good" : "rv-delta-bad");
      node.setAttribute("data-direction", direction);
      if (card.abnormal && !direction) node.classList.add("rv-abnormal-neutral");
      const spark = card.spark;
      delta.appendChild(
        html(
          "span",
          "rv-meta",
          card.delta === null ? " first step" : " since step " + spark[spark.length - 2].step,
        ),
      );
      node.appendChild(sparkline(spark.map((s) => s.value)));
      const flag = finite(card.threshold)
        ? "; a change beyond ±" + how.formatDelta(card.threshold, card.key).slice(1) + " is flagged"
        : "";
      node.appendChild(html("p", "rv-note", "step " + card.step + flag));
      if (card.abnormal) node.appendChild(html("p", "rv-card-why", card.why));
      return node;
    }),
  );
}
