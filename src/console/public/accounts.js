// Account names by script id, from GET /admin/accounts once the token is accepted: views show
// the name beside a script id, and re-label what they already drew when the names arrive.
import { h } from './dom.js';

const names = new Map();
const listeners = new Set();

export function setAccounts(items) {
  names.clear();
  for (const a of items) names.set(a.script_id, a.name ?? '');
  for (const fn of listeners) fn();
}

/** Calls `fn` whenever the names are (re)loaded. */
export function onAccounts(fn) {
  listeners.add(fn);
}

/** A script id followed by its account's name (muted), for a cell or a fact. */
export function accountLabel(scriptId) {
  const name = names.get(scriptId);
  return [scriptId ?? '', name ? [' ', h('span', { class: 'muted account-name' }, name)] : null];
}
