// Relax Rollout Viewer: when a page's keys stand aside. One rule for every key of every page.

// The <input> types that take typed text: a key pressed in one of them is the reader typing.
// A checkbox, button or the like is not typed into: after a click on "Follow latest" the
// page's keys still work (the focus stays on the checkbox).
const TEXT_INPUTS =
  /^(text|search|number|email|url|tel|password|date|datetime-local|month|time|week)$/;

// Whether a key pressed with `element` focused goes to what the reader is typing.
export function isTyping(element) {
  if (!element?.tagName) return false;
  const tag = element.tagName;
  if (tag === "INPUT") return TEXT_INPUTS.test(element.type || "text");
  return tag === "SELECT" || tag === "TEXTAREA" || element.isContentEditable === true;
}

// A plain left click: with a modifier the browser opens a link its own way (new tab, window).
export function isPlainClick(event) {
  return event.button === 0 && !event.ctrlKey && !event.metaKey && !event.shiftKey && !event.altKey;
}
