// DOM helpers. Everything the console shows goes through h() and text nodes: data from
// the API (payloads, names, errors) is attacker-controlled and never becomes markup.

/**
 * Creates an element. `attrs`: `class`, `data` (an object of data-* values), `on` (an
 * object of event listeners), anything else as an attribute (false/null/undefined: left
 * out, true: present). Children: nodes, strings (as text), arrays, null (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'data') for (const [dk, dv] of Object.entries(v)) el.dataset[dk] = String(dv);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

/**
 * Scrolls `el` to the top of the window when it starts in the bottom half or below, as a panel
 * does on a narrow screen where it sits under the list that opened it (never on a wide one).
 */
export function revealIfBelow(el) {
  if (el.getBoundingClientRect().top > window.innerHeight / 2) el.scrollIntoView({ block: 'start' });
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** JSON, indented, for a <pre>. */
export function pretty(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}

export const pre = (value, cls = 'code') => h('pre', { class: cls }, pretty(value));

/** Milliseconds since the epoch → UTC, as the CLI and the logs give it: `2024-05-01 09:30:12.345 UTC`. */
export function fmtTime(ms) {
  if (ms === null || ms === undefined || ms === '') return '';
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) return String(ms);
  return d.toISOString().replace('T', ' ').replace('Z', ' UTC');
}

/** A duration, human: `12 s`, `3 min`, `5 h`, `2 d`. */
export function fmtDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/** How long ago `ms` was, or '' for none. */
export const fmtAge = (ms) => (ms === null || ms === undefined ? '' : fmtDuration(Date.now() - Number(ms)));

/** A count for a table cell: arrays count their length. */
export const count = (v) => (Array.isArray(v) ? v.length : Number(v ?? 0));

/** An issue (string or {field, code, message}) as one line of text. */
export function issueText(issue) {
  if (typeof issue === 'string') return issue;
  if (issue && typeof issue === 'object') {
    const parts = [issue.code, issue.field ?? issue.path, issue.message].filter((p) => p !== undefined && p !== null && p !== '');
    return parts.length ? parts.join(': ') : JSON.stringify(issue);
  }
  return String(issue);
}

/** A list of issues as <li>s of `cls`, or nothing. */
export function issueList(title, issues, cls) {
  if (!Array.isArray(issues) || issues.length === 0) return null;
  return h('div', { class: `issues ${cls}` }, h('h4', {}, `${title} (${issues.length})`), h('ul', {}, issues.map((i) => h('li', {}, issueText(i)))));
}

/** A table built from header labels and rows of cells (strings or nodes). */
export function table(headers, rows, attrs = {}) {
  return h('table', { class: 'grid', ...attrs },
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows));
}
