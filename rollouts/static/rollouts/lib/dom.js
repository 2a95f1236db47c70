// Relax Rollout Viewer: building elements. Text is always set as text (textContent), never as
// HTML; SVG geometry is attributes and looks are CSS classes: nothing sets an inline style (the
// Content-Security-Policy forbids it).

const SVG_NS = "http://www.w3.org/2000/svg";

export function byId(id) {
  return document.getElementById(id);
}

// A new HTML element, with a class and its text when given.
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

// A new SVG element with these attributes, appended to `parent` when given.
export function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const name of Object.keys(attrs)) node.setAttribute(name, attrs[name]);
  return parent ? parent.appendChild(node) : node;
}
