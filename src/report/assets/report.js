/*
 * One session's report: verdict, chain, findings, scorecard, timeline, events over time.
 * The timeline is virtual: a spacer as tall as every row, and only the rows in view (plus a
 * margin) in the DOM, so a 100k-event session scrolls like a 100-event one.
 */
'use strict';

(function renderReport() {
  const data = pageData();
  const ROW_HEIGHT = 26;
  const OVERSCAN = 8;
  const FOLD_AT = 600;
  const SEVERITIES = ['critical', 'warn', 'info'];
  const app = document.getElementById('app');
  app.textContent = '';

  // Row fields (src/report/page-model.ts EventRow).
  const ID = 0, TIME = 1, KIND = 2, LATENCY = 3, MARKER = 4, PAYLOAD = 5;
  const events = data.events;
  const kindName = (row) => data.kinds[row[KIND]][0];
  const kindGroup = (row) => data.kinds[row[KIND]][1];
  let indexById = null;
  const indexOf = (id) => {
    if (indexById === null) {
      indexById = new Map();
      events.forEach((row, i) => indexById.set(row[ID], i));
    }
    return indexById.has(id) ? indexById.get(id) : -1;
  };

  // Header
  const header = el('header', 'top');
  if (data.back_href) {
    const back = el('a', 'back', '← sessions');
    back.href = data.back_href;
    header.append(back);
  }
  put(header, el('h1', null, 'Session ' + data.session_id));
  const facts = [
    'agent ' + (data.agent_ref || '-'),
    'policy v' + (data.policy_version || '-'),
    'opened ' + (data.opened_at || '-'),
    'closed ' + (data.closed_at || '-'),
    events.length + ' events',
  ];
  header.append(el('p', 'muted', facts.join(' · ')));
  app.append(header);

  // Verdict
  const verdict = put(el('section', 'card', null), el('h2', null, 'Verdict'));
  verdict.id = 'verdict';
  const verdictLine = put(el('p', 'verdict-line'), verdictBadge(data.verdict));
  if (data.verdict_reason) verdictLine.append(el('span', 'verdict-reason', ' (' + data.verdict_reason + ')'));
  const counts = SEVERITIES.map((s) => data.findings.filter((f) => f.severity === s).length);
  verdictLine.append(el('span', 'muted', ' ' + counts[0] + ' critical · ' + counts[1] + ' warn · ' + counts[2] + ' info'));
  verdict.append(verdictLine);
  // A summary beside a session its writer still holds was written while it ran: a snapshot, not a forgery.
  const snapshot = data.chain.status === 'open';
  if (data.source === 'summary') verdict.append(el('p', 'warn-text', 'The trail is missing: this report is the stored summary, not re-checked.'));
  else if (data.stored_by) verdict.append(el('p', 'muted', 'Re-checked from the trail; the stored summary (written by ' + data.stored_by + (snapshot ? ' while the session ran' : '') + ') ' + (data.disagreements.length === 0 ? 'agrees.' : snapshot ? 'differs:' : 'disagrees:')));
  else verdict.append(el('p', 'muted', 'Re-checked from the trail; no stored summary.'));
  if (data.disagreements.length > 0) {
    const list = el('ul', snapshot ? 'muted' : 'bad-text');
    for (const d of data.disagreements) list.append(el('li', null, d));
    verdict.append(list);
  }
  app.append(verdict);

  // Chain
  const chain = data.chain;
  const chainCard = put(el('section', 'card'), el('h2', null, 'Integrity and completeness'));
  chainCard.id = 'chain';
  const status = el('p', 'chain-status');
  // The status every surface shows (store/session-status.ts), then what the chain itself says.
  const statusClass = { verified: 'ok', intact: 'ok', open: 'warn', incomplete: 'warn', unsealed: 'warn' }[chain.status] || 'bad';
  status.append(el('span', 'badge ' + statusClass, chain.label));
  status.dataset.status = chain.status;
  if (chain.hash_chain_valid && chain.reason === null) {
    status.append(el('span', 'badge ok', 'hash chain valid'), el('span', chain.complete ? 'badge ok' : 'badge warn', chain.complete ? 'complete' : 'incomplete'));
  } else if (chain.hash_chain_valid) {
    status.append(el('span', 'badge ok', 'hash chain valid'));
  } else if (!chain.checked) {
    status.append(el('span', 'badge bad', 'not re-checked'));
  }
  const sigClass = { verified: 'ok', predates_signing: 'none', unchecked: 'warn', pending: 'warn', unsigned: 'none', invalid: 'bad' }[chain.signatures];
  const sigText = {
    verified: 'signatures verified',
    predates_signing: 'unsigned: predates signing',
    unchecked: 'signed, not checked (no trusted keys)',
    pending: 'signed, no signature written yet (unproven)',
    unsigned: 'unsigned',
    invalid: 'signature invalid',
  }[chain.signatures];
  status.append(el('span', 'badge ' + sigClass, sigText));
  chainCard.append(status);
  const dl = el('dl', 'facts');
  const fact = (term, value) => put(dl, el('dt', null, term), put(el('dd'), value instanceof Node ? value : document.createTextNode(String(value))));
  fact('events verified', chain.events === null ? '-' : chain.events);
  fact('first hash', shortHash(chain.first_hash));
  fact('head hash', shortHash(chain.head_hash));
  if (chain.key_id) fact('signing key', chain.key_id + ' · ' + chain.checkpoints + ' checkpoints');
  if (chain.seal) {
    fact('seal', chain.seal.events + ' events' + (chain.seal.signed ? ', signed' : ', unsigned'));
    if (chain.seal.head_hash) fact('sealed head', shortHash(chain.seal.head_hash));
  } else {
    fact('seal', 'none (no summary, or one without a seal)');
  }
  if (chain.message) fact('problem', chain.message + (chain.line ? ' (line ' + chain.line + ')' : ''));
  chainCard.append(dl);
  if (chain.event_id && indexOf(chain.event_id) >= 0) chainCard.append(eventLink(chain.event_id));
  app.append(chainCard);

  // Findings, grouped by severity
  const findingsCard = put(el('section', 'card'), el('h2', null, 'Findings (' + data.findings.length + ')'));
  findingsCard.id = 'findings';
  if (data.findings.length === 0) findingsCard.append(el('p', 'muted', 'No findings.'));
  for (const severity of SEVERITIES) {
    const group = data.findings.filter((f) => f.severity === severity);
    if (group.length === 0) continue;
    const block = put(el('div', 'severity-group sev-' + severity), el('h3', null, severity + ' (' + group.length + ')'));
    for (const finding of group) {
      const item = el('div', 'finding');
      put(item, el('span', 'badge sev-' + severity, finding.kind), el('span', 'message', finding.message));
      if (finding.aura_severity !== undefined) item.append(el('span', 'muted', ' (Aura graded it ' + String(finding.aura_severity) + ')'));
      const links = el('div', 'event-links');
      for (const id of finding.event_ids || []) links.append(eventLink(id));
      item.append(links);
      block.append(item);
    }
    findingsCard.append(block);
  }
  if (data.recommendations.length > 0) {
    const list = el('ul', 'recommendations');
    for (const r of data.recommendations) list.append(el('li', null, r));
    put(findingsCard, el('h3', null, 'Recommendations'), list);
  }
  app.append(findingsCard);

  // Scorecard
  const scoreCard = put(el('section', 'card'), el('h2', null, 'Scorecard'));
  scoreCard.id = 'scorecard';
  const scoreTable = el('table', 'scorecard');
  for (const [section, value] of Object.entries(data.scorecard)) {
    const row = scoreTable.insertRow();
    row.insertCell().append(el('strong', null, section));
    const cell = row.insertCell();
    if (value !== null && typeof value === 'object') {
      cell.textContent = Object.entries(value).map(([k, v]) => k.replace(/_/g, ' ') + ' ' + String(v)).join(' · ');
    } else {
      cell.textContent = String(value);
    }
  }
  scoreCard.append(scoreTable);
  app.append(scoreCard);

  // Timeline
  const timeline = put(el('section', 'card'), el('h2', null, 'Timeline'));
  timeline.id = 'timeline';
  const controls = el('div', 'controls');
  const kindFilter = el('select');
  kindFilter.id = 'kind-filter';
  kindFilter.setAttribute('aria-label', 'filter by kind');
  const kindCounts = new Map();
  for (const row of events) kindCounts.set(row[KIND], (kindCounts.get(row[KIND]) || 0) + 1);
  const option = (value, text) => {
    const o = el('option', null, text);
    o.value = value;
    kindFilter.append(o);
  };
  option('', 'all kinds (' + events.length + ')');
  const groups = [...new Set(data.kinds.map((k) => k[1]))].sort();
  for (const g of groups) option('group:' + g, 'group ' + g);
  data.kinds
    .map((k, i) => [k[0], i])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .forEach(([name, i]) => option('kind:' + i, name + ' (' + (kindCounts.get(i) || 0) + ')'));
  const search = el('input');
  search.id = 'search';
  search.type = 'search';
  search.placeholder = 'search kind, payload, event id';
  search.setAttribute('aria-label', 'search the timeline');
  const shown = el('span', 'muted');
  shown.id = 'shown';
  put(controls, kindFilter, search, shown);
  timeline.append(controls);
  const viewport = el('div', 'viewport');
  viewport.id = 'tl-viewport';
  const spacer = el('div', 'spacer');
  const rowsBox = el('div', 'rows');
  put(viewport, put(spacer, rowsBox));
  timeline.append(viewport);
  const detail = el('div', 'detail');
  detail.id = 'tl-detail';
  detail.append(el('p', 'muted', 'Click a row to see its event.'));
  timeline.append(detail);
  app.append(timeline);

  let visible = events.map((_, i) => i);
  let highlighted = -1;
  const latencyScale = data.max_latency_ms > 0 ? data.max_latency_ms : 1;

  function applyFilter() {
    const f = kindFilter.value;
    const needle = search.value.trim().toLowerCase();
    const group = f.startsWith('group:') ? f.slice(6) : null;
    const kind = f.startsWith('kind:') ? Number(f.slice(5)) : null;
    visible = [];
    for (let i = 0; i < events.length; i++) {
      const row = events[i];
      if (kind !== null && row[KIND] !== kind) continue;
      if (group !== null && kindGroup(row) !== group) continue;
      if (needle !== '' && !matches(row, needle)) continue;
      visible.push(i);
    }
    shown.textContent = visible.length === events.length ? events.length + ' events' : visible.length + ' of ' + events.length + ' events';
    spacer.style.height = visible.length * ROW_HEIGHT + 'px';
    renderRows(true);
  }

  function matches(row, needle) {
    return kindName(row).toLowerCase().includes(needle) || row[ID].includes(needle) || row[PAYLOAD].toLowerCase().includes(needle) || (row[MARKER] !== null && row[MARKER].toLowerCase().includes(needle));
  }

  let rendered = '';

  function renderRows(force) {
    // The window moves in steps of OVERSCAN rows, so a scroll within a step rebuilds nothing.
    const top = Math.floor(viewport.scrollTop / ROW_HEIGHT / OVERSCAN) * OVERSCAN;
    const first = Math.max(0, top - OVERSCAN);
    const last = Math.min(visible.length, top + Math.ceil(viewport.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN);
    const range = first + ':' + last;
    if (!force && range === rendered) return;
    rendered = range;
    // Row elements are reused from render to render: scrolling allocates next to nothing, so the
    // garbage collector of a page holding 100k events has no reason to pause it.
    while (rowPool.length < last - first) rowPool.push(newRow());
    for (let at = first; at < last; at++) fillRow(rowPool[at - first], visible[at], at);
    rowsBox.style.transform = 'translateY(' + first * ROW_HEIGHT + 'px)';
    if (rowsBox.childElementCount !== last - first) rowsBox.replaceChildren(...rowPool.slice(0, last - first));
  }

  const rowPool = [];

  function newRow() {
    const lat = put(el('span', 'lat'), el('span', 'bar'), el('span', 'lat-text'));
    return put(el('div', 'row'), el('span', 'idx'), el('span', 'time'), el('span', 'kind'), el('span', 'marker'), lat, el('span', 'text'));
  }

  function fillRow(node, index, position) {
    const row = events[index];
    node.className = 'row g-' + kindGroup(row) + (index === highlighted ? ' hl' : '');
    node.dataset.index = String(index);
    node.dataset.id = row[ID];
    node.dataset.position = String(position);
    const [idx, time, kind, marker, lat, text] = node.children;
    idx.textContent = String(index + 1);
    time.textContent = timeOf(row[TIME]);
    kind.textContent = kindName(row);
    marker.textContent = row[MARKER] || '';
    const [bar, latText] = lat.children;
    bar.hidden = row[LATENCY] === null;
    bar.style.width = row[LATENCY] === null ? '0' : Math.max(2, Math.round((row[LATENCY] / latencyScale) * 100)) + '%';
    latText.textContent = row[LATENCY] === null ? '' : formatMs(row[LATENCY]);
    text.textContent = row[PAYLOAD].length > 240 ? row[PAYLOAD].slice(0, 240) + '…' : row[PAYLOAD];
  }

  function showDetail(index) {
    const row = events[index];
    detail.textContent = '';
    const title = put(el('p', 'detail-title'), el('strong', null, '#' + (index + 1) + ' ' + kindName(row)), el('span', 'muted', ' ' + row[TIME]));
    detail.append(title);
    const dl = el('dl', 'facts');
    put(dl, el('dt', null, 'event id'), el('dd', 'mono', row[ID]));
    if (row[LATENCY] !== null) put(dl, el('dt', null, 'latency'), el('dd', null, formatMs(row[LATENCY])));
    if (row[MARKER]) put(dl, el('dt', null, 'marker'), el('dd', null, row[MARKER]));
    detail.append(dl);
    const fold = el('details', 'payload');
    fold.open = row[PAYLOAD].length <= FOLD_AT;
    put(fold, el('summary', null, 'payload (' + row[PAYLOAD].length + ' characters, as recorded)'), el('pre', null, row[PAYLOAD]));
    detail.append(fold);
  }

  /** Scrolls the timeline to an event, highlights it and shows it; clears a filter that hides it. */
  function showEvent(id) {
    const index = indexOf(id);
    if (index < 0) return;
    let position = visible.indexOf(index);
    if (position < 0) {
      kindFilter.value = '';
      search.value = '';
      applyFilter();
      position = index;
    }
    highlighted = index;
    viewport.scrollTop = Math.max(0, position * ROW_HEIGHT - viewport.clientHeight / 2 + ROW_HEIGHT / 2);
    renderRows(true);
    showDetail(index);
    timeline.scrollIntoView({ block: 'start' });
  }

  function eventLink(id) {
    const index = indexOf(id);
    const link = el('button', 'event-link', index < 0 ? 'event ' + id.slice(0, 8) + ' (not in the trail)' : '#' + (index + 1) + ' ' + kindName(events[index]) + ' ' + id.slice(0, 8));
    link.type = 'button';
    link.dataset.eventId = id;
    link.disabled = index < 0;
    link.addEventListener('click', () => showEvent(id));
    return link;
  }

  let searchTimer = 0;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(applyFilter, 120);
  });
  kindFilter.addEventListener('change', applyFilter);
  let frame = 0;
  viewport.addEventListener('scroll', () => {
    if (frame === 0)
      frame = requestAnimationFrame(() => {
        frame = 0;
        renderRows(false);
      });
  });
  rowsBox.addEventListener('click', (event) => {
    const row = event.target.closest('.row');
    if (row === null) return;
    highlighted = Number(row.dataset.index);
    renderRows(true);
    showDetail(highlighted);
  });
  applyFilter();

  // Events over time
  const chartCard = put(el('section', 'card'), el('h2', null, 'Events over time'));
  chartCard.id = 'chart';
  chartCard.append(eventsChart(data.chart));
  app.append(chartCard);
  app.append(el('footer', 'muted', 'Made by ' + data.generator + ' from the files as they were then. Payloads are shown as recorded (secrets already redacted).'));

  function eventsChart(chart) {
    if (chart.buckets.length === 0) return el('p', 'muted', 'No timed events.');
    const NS = 'http://www.w3.org/2000/svg';
    const width = 720, height = 160, bottom = 20;
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.setAttribute('class', 'chart');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'events over time');
    const max = Math.max(1, ...chart.buckets.map((b) => b.total));
    const barWidth = width / chart.buckets.length;
    chart.buckets.forEach((bucket, i) => {
      let y = height - bottom;
      for (const [group, count] of Object.entries(bucket.groups)) {
        const h = (count / max) * (height - bottom - 10);
        const rect = document.createElementNS(NS, 'rect');
        rect.setAttribute('x', String(i * barWidth + 1));
        rect.setAttribute('width', String(Math.max(1, barWidth - 2)));
        rect.setAttribute('y', String(y - h));
        rect.setAttribute('height', String(h));
        rect.setAttribute('class', 'g-' + group);
        const title = document.createElementNS(NS, 'title');
        title.textContent = count + ' ' + group;
        rect.append(title);
        svg.append(rect);
        y -= h;
      }
    });
    const label = (x, anchor, text) => {
      const t = document.createElementNS(NS, 'text');
      t.setAttribute('x', String(x));
      t.setAttribute('y', String(height - 4));
      t.setAttribute('text-anchor', anchor);
      t.textContent = text;
      svg.append(t);
    };
    label(0, 'start', chart.start);
    label(width, 'end', chart.end);
    const legend = el('p', 'legend');
    for (const group of groups) put(legend, el('span', 'swatch g-' + group), el('span', null, group + ' '));
    return put(el('div'), svg, el('p', 'muted', 'peak ' + max + ' events per ' + formatMs(spanMs(chart) / chart.buckets.length)), legend);
  }

  function spanMs(chart) {
    return Math.max(1, Date.parse(chart.end) - Date.parse(chart.start));
  }

  function timeOf(timestamp) {
    const match = /T(\d\d:\d\d:\d\d(?:\.\d{1,3})?)/.exec(timestamp);
    return match ? match[1] : timestamp;
  }

  function formatMs(ms) {
    return ms >= 1000 ? (ms / 1000).toFixed(2) + ' s' : ms.toFixed(ms < 10 ? 1 : 0) + ' ms';
  }
})();
