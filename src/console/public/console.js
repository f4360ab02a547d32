// The operator console: token form, navigation, one view at a time. Each view is a module
// with init(app) (wires its controls once) and show(arg) (called when it becomes visible).
import { api, report, setUnauthorizedHandler, token } from './api.js';
import { $, $$, fill, h } from './dom.js';
import { setAccounts } from './accounts.js';
import * as live from './live.js';
import * as trace from './trace.js';
import * as destinations from './destinations.js';
import * as rules from './rules.js';
import * as custom from './custom.js';

const VIEWS = { live, trace, destinations, rules, custom };
let current = null;

const app = {
  /** Shows a view; `arg` is passed to its show() (trace: the id to look up). */
  go(name, arg) {
    if (!VIEWS[name]) return;
    current = name;
    for (const v of $$('main > .view')) v.hidden = v.id !== `view-${name}`;
    for (const b of $$('#nav [data-view]')) b.setAttribute('aria-current', String(b.dataset.view === name));
    VIEWS[name].show?.(arg);
  },
  current: () => current,
};

function showLogin(message) {
  live.stop();
  trace.stop();
  current = null;
  $('#nav').hidden = true;
  $('#sign-out').hidden = true;
  for (const v of $$('main > .view')) v.hidden = v.id !== 'view-login';
  const msg = $('#token-message');
  msg.textContent = message ?? '';
  msg.hidden = !message;
  $('#token-input').value = '';
  $('#token-input').focus();
}

/** Fills every account filter from GET /admin/accounts (keeping the chosen value). */
async function loadAccounts() {
  try {
    const { items = [] } = (await api('/admin/accounts')) ?? {};
    setAccounts(items);
    const selects = [[$('#live-filter-account'), 'all'], [$('#dest-filter-account'), 'all'], [$('#rules-preview-account'), "the scope's account"]];
    for (const [sel, none] of selects) {
      const keep = sel.value;
      fill(sel, h('option', { value: '' }, none),
        items.map((a) => h('option', { value: a.script_id }, `${a.script_id} — ${a.name ?? ''}`)));
      sel.value = keep;
    }
  } catch (err) {
    report(err);
  }
}

function enter() {
  $('#nav').hidden = false;
  $('#sign-out').hidden = false;
  $('#token-message').hidden = true;
  app.go('live');
  live.start();
  void loadAccounts();
}

async function submitToken(e) {
  e.preventDefault();
  const t = $('#token-input').value.trim();
  if (!t) return;
  token.set(t);
  try {
    await api('/admin/overview');
  } catch (err) {
    // A 401 has already brought the form back with its message.
    if (err?.status !== 401) report(err);
    return;
  }
  enter();
}

function main() {
  setUnauthorizedHandler(showLogin);
  for (const view of Object.values(VIEWS)) view.init?.(app);
  $('#token-form').addEventListener('submit', submitToken);
  $('#nav').addEventListener('click', (e) => {
    const b = e.target.closest('[data-view]');
    if (b) app.go(b.dataset.view);
  });
  $('#toast').addEventListener('click', () => {
    $('#toast').hidden = true;
  });
  $('#sign-out').addEventListener('click', () => {
    token.clear();
    showLogin('Token forgotten.');
  });
  if (token.get()) enter();
  else showLogin();
}

main();
