/* The sessions list of `aura ui`: one row a session, sortable by any column. */
'use strict';

(function renderList() {
  const data = pageData();
  const app = document.getElementById('app');
  app.textContent = '';
  put(app, put(el('header', 'top'), el('h1', null, 'aura sessions'), el('p', 'muted', data.sessions_dir)));
  if (data.sessions.length === 0) {
    app.append(el('p', 'empty', 'No sessions in this folder yet.'));
    return;
  }
  const table = el('table', 'sessions');
  const head = table.createTHead().insertRow();
  for (const title of ['session', 'agent', 'opened', 'events', 'verdict', 'critical', 'warn', 'info', 'chain', 'state']) head.append(el('th', null, title));
  const body = table.createTBody();
  const values = new Map();
  for (const s of data.sessions) {
    const row = body.insertRow();
    row.className = 'session';
    // A deleted session has no page: its seal is all that is left.
    const link = s.state === 'deleted' ? document.createTextNode(s.session_id) : el('a', null, s.session_id);
    if (s.state !== 'deleted') link.href = 's/' + encodeURIComponent(s.session_id);
    const f = s.findings;
    const cells = [link, s.agent_ref || '-', s.opened_at || '-', s.events, verdictBadge(s.verdict), f ? f.critical : '-', f ? f.warn : '-', f ? f.info : '-', s.chain, s.state];
    for (const cell of cells) put(row.insertCell(), typeof cell === 'object' ? cell : document.createTextNode(String(cell)));
    values.set(row, [s.session_id, s.agent_ref || '', s.opened_at || '', s.events, s.verdict || '', f ? f.critical : -1, f ? f.warn : -1, f ? f.info : -1, s.chain, s.state]);
  }
  app.append(table);
  sortableTable(table, (row, column) => values.get(row)[column]);
  app.append(el('footer', 'muted', data.generator));
})();
