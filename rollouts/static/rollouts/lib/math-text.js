// Relax Rollout Viewer: the LaTeX in a sample's text, taken out before Markdown renders the
// rest (Markdown would eat its backslashes) and put back after. Pure (no DOM): readable.js
// renders what this finds, and tests/js checks what it finds.

// Private-use characters around a placeholder's number: never in a sample's prose.
export const OPEN = "\uE000";
export const CLOSE = "\uE001";
// $$…$$, \[…\], \(…\), $…$ (not "$5 and $6": no space inside the dollars, no digit after), and
// \boxed{…}, whose braces are matched below.
const MATH_RE =
  /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$(?=\S)([^$\n]*?\S)\$(?!\d)|\\boxed\s*\{/g;
const BRACE_REACH = 2000; // characters a \boxed{ looks ahead for its closing brace

// {text, math}: the text with each formula replaced by OPEN + its index + CLOSE, and the
// formulas as {tex, display, source}.
export function extractMath(text) {
  const math = [];
  let out = "";
  let last = 0;
  MATH_RE.lastIndex = 0;
  for (let match = MATH_RE.exec(text); match; match = MATH_RE.exec(text)) {
    let tex;
    let display = false;
    let end = MATH_RE.lastIndex;
    if (match[0].charAt(0) === "\\" && match[0].indexOf("boxed") === 1) {
      end = closingBrace(text, MATH_RE.lastIndex);
      if (end < 0) continue;
      tex = text.slice(match.index, end);
      MATH_RE.lastIndex = end;
    } else {
      tex = match[1] || match[2] || match[3] || match[4];
      display = match[1] !== undefined || match[2] !== undefined;
    }
    out += text.slice(last, match.index) + OPEN + math.length + CLOSE;
    math.push({ tex, display, source: text.slice(match.index, end) });
    last = end;
  }
  return { text: out + text.slice(last), math };
}

// The index just past the brace that closes one opened before `from`, or -1 within reach.
export function closingBrace(text, from) {
  let depth = 1;
  for (let i = from; i < text.length && i < from + BRACE_REACH; i++) {
    const c = text.charAt(i);
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  return -1;
}
