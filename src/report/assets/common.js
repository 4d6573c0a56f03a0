/*
 * Helpers shared by the report pages. Every value from the page data is untrusted (trail
 * payloads are whatever an agent sent): it reaches the DOM as textContent or as an attribute
 * set through the DOM, never as markup.
 */
'use strict';

/** The data embedded in the page's JSON block, which is then dropped: a big session's text would otherwise stay in memory twice. */
function pageData() {
  const block = document.getElementById('aura-data');
  const data = JSON.parse(block.textContent);
  block.remove();
  return data;
}

/** An element with a class and text content. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

/** Appends children (skipping null) and returns the parent. */
function put(parent, ...children) {
  for (const child of children) if (child !== null && child !== undefined) parent.append(child);
  return parent;
}

/** A verdict badge: PASS, WARN, FAIL or what the summary said. */
function verdictBadge(verdict) {
  const v = verdict === null || verdict === undefined ? '-' : String(verdict);
  return el('span', 'badge verdict-' + (['pass', 'warn', 'fail'].includes(v) ? v : 'none'), v.toUpperCase());
}

/** A hash shortened for people, in full on hover. */
function shortHash(hash) {
  const node = el('code', 'hash', hash ? hash.slice(0, 16) + '…' : '-');
  if (hash) node.title = hash;
  return node;
}

/** Sorts table rows by a column when its header is clicked (numbers as numbers); click again to reverse. */
function sortableTable(table, valueOf) {
  const headers = table.querySelectorAll('th');
  let sorted = { column: -1, direction: 1 };
  headers.forEach((th, column) => {
    th.tabIndex = 0;
    const sort = () => {
      const direction = sorted.column === column ? -sorted.direction : 1;
      sorted = { column, direction };
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      rows.sort((a, b) => {
        const x = valueOf(a, column);
        const y = valueOf(b, column);
        if (typeof x === 'number' && typeof y === 'number') return (x - y) * direction;
        return String(x).localeCompare(String(y)) * direction;
      });
      body.append(...rows);
      headers.forEach((h) => h.removeAttribute('aria-sort'));
      th.setAttribute('aria-sort', direction === 1 ? 'ascending' : 'descending');
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') sort();
    });
  });
}
