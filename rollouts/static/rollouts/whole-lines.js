// Relax Rollout Viewer: a text box opens on whole lines. viewer.js opens each box scrolled to
// its end; its top edge then falls wherever the text does, often through a line. Shorten the
// box by the part of that line that shows, so it opens on the next whole line (the end stays
// in view). readable.js does it once a sample's <main> is set up.

function charRect(node, i) {
  const range = document.createRange();
  range.setStart(node, i);
  range.setEnd(node, Math.min(i + 1, node.length));
  const rects = range.getClientRects();
  return rects.length ? rects[0] : null;
}

function cutAtTop(box) {
  const top = box.getBoundingClientRect().top + box.clientTop;
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.nodeValue.trim() && node.parentElement.getClientRects().length) nodes.push(node);
  }
  function below(node, i) {
    // does this character end below the box's top edge?
    const rect = charRect(node, i);
    return !!rect && rect.bottom > top + 0.5;
  }
  let lo = 0;
  let hi = nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (below(nodes[mid], nodes[mid].length - 1)) hi = mid;
    else lo = mid + 1;
  }
  if (lo === nodes.length) return 0;
  const text = nodes[lo];
  let a = 0;
  let b = text.length - 1;
  while (a < b) {
    const m = (a + b) >> 1;
    if (below(text, m)) b = m;
    else a = m + 1;
  }
  const rect = charRect(text, a);
  return rect && rect.top < top - 0.5 ? rect.bottom - top : 0;
}

export function openOnWholeLines(main) {
  main.querySelectorAll(".rv-text").forEach((box) => {
    if (box.scrollTop <= 0 || box.scrollTop + box.clientHeight < box.scrollHeight - 1) return;
    const cut = cutAtTop(box);
    if (cut <= 0) return;
    box.style.maxHeight = Math.floor(box.clientHeight - cut) + "px";
    box.scrollTop = box.scrollHeight;
  });
}
