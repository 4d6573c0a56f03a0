/**
 * Secrets that a text lays out rather than assigns, so no `name = value` pattern sees them: the
 * cells of a table's column whose header names a secret (what `psql`, `mysql`, DuckDB, `sqlite3`,
 * `sqlcmd`, a Markdown table, a CSV or TSV file print for `SELECT * FROM users`), the value beside a secret's name in a
 * two-column table or a `psql` expanded record, and a Kubernetes Secret's `data` as `kubectl get
 * secret -o yaml` prints it, whatever its keys are called. The layout around each value is kept:
 * a reader still sees the table.
 */

import { REDACTED } from '../spine/redactor.js';
import { isSecretLikeKey, SECRET_WORDS } from './secret-names.js';

/** The cells' separator of a table's header line. */
type Separator = '|' | ',' | '\t';

/** A cell of a line: where its text starts and ends (without the spaces and quotes around it). */
interface Cell {
  readonly start: number;
  readonly end: number;
}

/** What a table's header says of its rows. */
interface Header {
  readonly separator: Separator;
  /** Lines between the header and its rows: a bar table's rule line, and a box table's line of column types (DuckDB) before it. */
  readonly skip: number;
  /** Its lines start and end with a bar (MySQL, Markdown), which are borders, not cells. */
  readonly bordered: boolean;
  readonly count: number;
  /** The columns a secret's name heads; none for a two-column table of names and values. */
  readonly secret: readonly number[];
}

// A line must hold one of these to be read as a header or a name's row (isSecretLikeKey decides).
const SECRET_WORD = new RegExp(SECRET_WORDS, 'i');
// A column's name: words, at most 64 characters.
const COLUMN_NAME = /^[A-Za-z_][\w .#-]{0,63}$/;
// A table's rule line: `----+----`, `+----+`, `|---|:--:|`.
const RULE_LINE = /^[ \t]*[|+]?[ \t]*:?-{2,}[-+|: \t]*\r?$/;
// What a cell holds when there is no secret in it: nothing, a NULL, a mask, a name in backticks
// as docs write one; in a bar table (docs' Markdown as well as a database's), also a short word
// (`Yes`, `YYYY`, `3.3V`) or words.
const NO_SECRET_CELL = /^(?:|NULL|null|\(null\)|None|\*+|\[redacted\]|`[^`]*`)$/;
const NO_SECRET_BAR_CELL = /^(?:.{0,4}|.*\s.*)$/;
// A box-drawn table's lines (DuckDB, `sqlite3 -box`, Python's rich and tabulate): its vertical
// lines are read as bars, every other drawing character as a rule's dash. One UTF-16 unit each, so
// a cell stands at the same place in the line and in its reading.
const BOX_BAR = /[\u2502\u2503\u2551]/;
const BOX_BARS = /[\u2502\u2503\u2551]/g;
const BOX_RULE = /[\u2500\u2501\u2504-\u254f\u2550\u2552-\u257f]/g;
// The rule under a fixed-width table's header (`sqlite3 -column`, `sqlcmd`, SQL*Plus, PowerShell's
// Format-Table): a run of dashes a column, spaces between.
const DASH_RULE = /^ *-{2,}(?: +-{2,})+ *\r?$/;
// psql's expanded display (`\x`): `-[ RECORD 1 ]-----`, then `name | value` lines.
const EXPANDED_RECORD = /^-\[ RECORD \d+ \]-*[+-]*\s*$/;
// A Kubernetes Secret as YAML prints it.
const SECRET_KIND = /^[ \t]*(?:- )?kind:[ \t]*["']?Secret["']?[ \t]*\r?$/m;
const DATA_KEY = /^[ \t]*(?:- )?(?:data|stringData):[ \t]*\r?$/;
const MAPPING_ENTRY = /^([ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s:#][^:\r\n]*?):(?:[ \t]+(.*?))?[ \t]*\r?$/;

/** The text with the secret cells of its tables, and a Kubernetes Secret's data values, replaced. */
export function redactLayouts(text: string): string {
  if (!text.includes('\n')) return text;
  const lines = text.split('\n');
  const boxed = BOX_BAR.test(text);
  // What the table readers see: box-drawn lines as bars and dashes; the replacements go to `lines`.
  const shapes = boxed ? lines.map((line) => line.replace(BOX_BARS, '|').replace(BOX_RULE, '-')) : lines;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (EXPANDED_RECORD.test(line)) {
      i = expandedRecord(lines, i + 1) - 1;
      continue;
    }
    if (DASH_RULE.test(lines[i + 1] ?? '')) {
      i = columnTable(lines, i) - 1;
      continue;
    }
    const header = tableHeader(shapes, i, boxed && BOX_BAR.test(line));
    if (header !== null) i = tableRows(lines, shapes, i + 1 + header.skip, header) - 1;
  }
  const tables = lines.join('\n');
  return SECRET_KIND.test(tables) ? secretData(tables) : tables;
}

/**
 * The header a table starts with at line `i`, when its rows can hold a secret: a bar table's is
 * followed by its rule line (a row of another table, a pipeline, a log line are not), a CSV's or
 * TSV's starts the text or follows a blank line and names its columns in single words. A box-drawn
 * table's header (`boxed`) may have a line of column types between it and its rule.
 */
function tableHeader(lines: readonly string[], i: number, boxed: boolean): Header | null {
  const line = lines[i] as string;
  const separator: Separator | null = line.includes('|') ? '|' : line.includes('\t') ? '\t' : line.includes(',') ? ',' : null;
  if (separator === null) return null;
  const skip = separator !== '|' ? 0 : RULE_LINE.test(lines[i + 1] ?? '') ? 1 : boxed && RULE_LINE.test(lines[i + 2] ?? '') ? 2 : -1;
  if (skip < 0 || (separator !== '|' && i > 0 && (lines[i - 1] as string).trim() !== '')) return null;
  const bordered = separator === '|' && line.trimStart().startsWith('|');
  const cells = cellsOf(line, separator, bordered);
  if (cells === null || cells.length < 2) return null;
  const names = cells.map((cell) => line.slice(cell.start, cell.end));
  if (!names.every((name) => COLUMN_NAME.test(name) && (separator === '|' || !/\s/.test(name)))) return null;
  const secret = SECRET_WORD.test(line) ? names.flatMap((name, n) => (isSecretLikeKey(name) ? [n] : [])) : [];
  if (secret.length === 0 && !(separator === '|' && cells.length === 2)) return null;
  return { separator, skip, bordered, count: cells.length, secret };
}

/** Replaces the secret cells of the rows from `from` on, read from their `shapes`; returns the index of the first line after the table. */
function tableRows(lines: string[], shapes: readonly string[], from: number, header: Header): number {
  let i = from;
  const bars = header.separator === '|';
  for (; i < lines.length; i++) {
    const shape = shapes[i] as string;
    if (bars && RULE_LINE.test(shape)) continue;
    const cells = shape.trim() === '' ? null : cellsOf(shape, header.separator, header.bordered);
    if (cells === null || cells.length !== header.count) break;
    lines[i] = rowRedacted(lines[i] as string, cells, header.secret, bars);
  }
  return i;
}

/** A row with its cells under a secret's column replaced, or, in a two-column table of names and values (no such column), its value when its name is a secret's. */
function rowRedacted(line: string, cells: readonly Cell[], secret: readonly number[], bars: boolean): string {
  if (secret.length > 0) return cellsRedacted(line, secret.map((n) => cells[n] as Cell), bars);
  const name = cells[0] as Cell;
  return SECRET_WORD.test(line) && isSecretLikeKey(line.slice(name.start, name.end)) ? cellsRedacted(line, [cells[1] as Cell], bars) : line;
}

/**
 * A fixed-width table whose header is line `at`, its rule under it: each column spans its run of
 * dashes and the spaces after it. Its rows run to a blank line, or to a line whose text crosses
 * a gap between columns (not a row). Returns the index of the first line after the table.
 */
function columnTable(lines: string[], at: number): number {
  const rule = lines[at + 1] as string;
  const starts: number[] = [];
  for (const run of rule.matchAll(/-+/g)) starts.push(run.index);
  const spans = (line: string): Cell[] | null => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    const cells: Cell[] = [];
    for (let n = 0; n < starts.length; n++) {
      const start = starts[n] as number;
      if (n > 0 && start <= text.length && text[start - 1] !== ' ') return null;
      const stop = Math.min(starts[n + 1] ?? text.length, text.length);
      let from = start;
      let end = stop;
      while (from < end && text[from] === ' ') from++;
      while (end > from && text[end - 1] === ' ') end--;
      cells.push({ start: from, end: Math.max(from, end) });
    }
    return cells;
  };
  const header = lines[at] as string;
  const names = spans(header)?.map((cell) => header.slice(cell.start, cell.end)) ?? [];
  if (names.length !== starts.length || !names.every((name) => COLUMN_NAME.test(name))) return at + 1;
  const secret = SECRET_WORD.test(header) ? names.flatMap((name, n) => (isSecretLikeKey(name) ? [n] : [])) : [];
  if (secret.length === 0 && names.length !== 2) return at + 2;
  let i = at + 2;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    const cells = line.trim() === '' ? null : spans(line);
    if (cells === null) break;
    lines[i] = rowRedacted(line, cells, secret, false);
  }
  return i;
}

/** psql's `name | value` lines of expanded records, from `from` on: the values of secret names replaced. */
function expandedRecord(lines: string[], from: number): number {
  let i = from;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (EXPANDED_RECORD.test(line)) continue;
    const bar = line.indexOf(' | ');
    if (bar < 0) break;
    const name = line.slice(0, bar).trim();
    if (isSecretLikeKey(name)) lines[i] = cellsRedacted(line, [{ start: bar + 3, end: line.trimEnd().length }], false);
  }
  return i;
}

/** The line with the text of each cell (in order) replaced, where it can hold a secret (`bars`: a bar table's cell). */
function cellsRedacted(line: string, cells: readonly Cell[], bars: boolean): string {
  let out = '';
  let copied = 0;
  for (const cell of cells) {
    const text = line.slice(cell.start, cell.end);
    if (NO_SECRET_CELL.test(text) || (bars && NO_SECRET_BAR_CELL.test(text))) continue;
    out += line.slice(copied, cell.start) + REDACTED;
    copied = cell.end;
  }
  return out + line.slice(copied);
}

/**
 * The cells of a line split at `separator`: a bordered table's outer bars are not cells; a CSV
 * cell may be quoted (`"a, b"`, a quote doubled inside). Null for a line a table row cannot be
 * (a quote left open).
 */
function cellsOf(line: string, separator: Separator, bordered: boolean): Cell[] | null {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const cells: Cell[] = [];
  let start = 0;
  if (bordered) {
    const first = text.search(/\S/);
    if (first < 0 || text[first] !== '|') return null;
    start = first + 1;
  }
  for (;;) {
    let at = start;
    while (at < text.length && (text[at] === ' ' || (text[at] === '\t' && separator !== '\t'))) at++;
    if (separator === ',' && text[at] === '"') {
      let close = at + 1;
      for (;;) {
        close = text.indexOf('"', close);
        if (close < 0) return null;
        if (text[close + 1] !== '"') break;
        close += 2;
      }
      cells.push({ start: at + 1, end: close });
      const next = text.indexOf(',', close);
      if (next < 0) return cells;
      start = next + 1;
      continue;
    }
    const next = text.indexOf(separator, at);
    const stop = next < 0 ? text.length : next;
    let end = stop;
    while (end > at && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
    if (next < 0) {
      // A bordered table's closing bar ends its last cell: nothing after it is one.
      if (!bordered || at < stop) cells.push({ start: at, end });
      return cells;
    }
    cells.push({ start: at, end });
    start = next + 1;
  }
}

/** How far in a YAML line's key stands: its indent, and a list item's `- `. */
function keyIndent(line: string): number {
  const indent = line.length - line.trimStart().length;
  return line.startsWith('- ', indent) ? indent + 2 : indent;
}

/** True when the mapping the key at line `at` belongs to has `kind: Secret` among its keys. */
function inSecret(lines: readonly string[], at: number): boolean {
  const indent = keyIndent(lines[at] as string);
  const sibling = (line: string): boolean => keyIndent(line) === indent && SECRET_KIND.test(line);
  // Up to the mapping's first key (a list item's `- `, or a line less indented), and down to its last.
  for (let i = at; i >= 0; i--) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    if (keyIndent(line) < indent || line.trimStart() === '---') break;
    if (sibling(line)) return true;
    if (keyIndent(line) === indent && line.trimStart().startsWith('- ')) break;
  }
  for (let i = at + 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.trim() === '') continue;
    if (keyIndent(line) < indent || line.trimStart() === '---' || (keyIndent(line) === indent && line.trimStart().startsWith('- '))) break;
    if (sibling(line)) return true;
  }
  return false;
}

/** Every entry under a `data:` or `stringData:` key of a Kubernetes Secret, its value replaced. */
function secretData(text: string): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!DATA_KEY.test(lines[i] as string) || !inSecret(lines, i)) continue;
    const indent = keyIndent(lines[i] as string);
    for (i++; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.trim() === '') continue;
      const lineIndent = line.length - line.trimStart().length;
      if (lineIndent <= indent) {
        i--;
        break;
      }
      // An entry's value, or a line of a block scalar's text (`config.yaml: |`) taken whole.
      const entry = MAPPING_ENTRY.exec(line);
      const value = entry === null ? line.trim() : entry[3];
      if (value === undefined || value === '' || /^[|>][-+0-9]*$/.test(value)) continue;
      const end = line.endsWith('\r') ? '\r' : '';
      lines[i] = (entry === null ? line.slice(0, lineIndent) + REDACTED : `${entry[1]}${entry[2]}: ${REDACTED}`) + end;
    }
  }
  return lines.join('\n');
}
