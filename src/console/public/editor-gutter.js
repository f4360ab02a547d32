// Line numbers beside a <textarea> (the rules editor), since errors cite line and column:
// a gutter element kept to the text's line count and scrolled with it; no editor library.
import { h } from './dom.js';

/**
 * Wraps `textarea` with a gutter. `refresh()` after setting its value from code (typing
 * refreshes by itself); `mark(lines)` flags those 1-based lines (an error's line).
 */
export function attachGutter(textarea) {
  const gutter = h('div', { class: 'editor-gutter', 'aria-hidden': 'true' });
  const wrap = h('div', { class: 'editor-wrap' });
  textarea.replaceWith(wrap);
  wrap.append(gutter, textarea);
  let marked = new Set();
  let shown = -1;

  function render() {
    const count = textarea.value.split('\n').length;
    if (count === shown) return;
    shown = count;
    const rows = [];
    for (let n = 1; n <= count; n++) rows.push(h('div', { class: marked.has(n) ? 'gutter-line gutter-error' : 'gutter-line', data: { line: n } }, String(n)));
    gutter.replaceChildren(...rows);
    gutter.scrollTop = textarea.scrollTop;
  }

  textarea.addEventListener('input', () => {
    marked = new Set();
    shown = -1;
    render();
  });
  textarea.addEventListener('scroll', () => {
    gutter.scrollTop = textarea.scrollTop;
  });
  render();
  return {
    refresh() {
      marked = new Set();
      shown = -1;
      render();
    },
    mark(lines) {
      marked = new Set(lines);
      shown = -1;
      render();
    },
  };
}
