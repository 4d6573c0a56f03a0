/**
 * Secrets that a text lays out rather than assigns, so no `name = value` pattern sees them: the
 * cells of a table's column whose header names a secret (what `psql`, `mysql`, a Markdown table,
 * a CSV or TSV file print for `SELECT * FROM users`), a `psql` expanded record's `password | …`
 * row, and a Kubernetes Secret's `data` as `kubectl get secret -o yaml` prints it, whatever its
 * keys are called. The layout around each value is kept: a reader still sees the table.
 */

import { REDACTED } from '../spine/redactor.js';
import { isSecretLikeKey } from './secret-names.js';

/** The cells' separator of a table's header line. */
type Separator = '|' | ',' | '\t';

/** A cell of a line: where its text starts and ends (without the spaces and quotes around it). */
interface Cell {
  readonly start: number;
  readonly end: number;
}

// A header line must hold one of these for its table to be read at all (isSecretLikeKey decides).
const SECRET_WORD = /pass|pwd|pw|psk|secret|token|key|auth|cookie|credential|dsn|jwt|otp|pin|cv[cv]/i;
// A column's name: words, at most 64 characters.
const COLUMN_NAME = /^[A-Za-z_][\w .#-]{0,63}$/;
// A table's rule line: `----+----`, `+----+`, `|---|:--:|`.
const RULE_LINE = /^[ \t]*[|+]?[ \t]*:?-{2,}[-+|: \t]*$/;
// What a cell holds when there is no secret in it.
const EMPTY_CELL = /^(?:|NULL|null|\(null\)|None|-|\*+|\[redacted\])$/;
// psql's expanded display (`\x`): `-[ RECORD 1 ]-----`, then `name | value` lines.
const EXPANDED_RECORD = /^-\[ RECORD \d+ \]-*[+-]*\s*$/;
// A Kubernetes Secret as YAML prints it.
const SECRET_KIND = /^[ \t]*(?:- )?kind:[ \t]*["']?Secret["']?[ \t]*$/m;
const DATA_KEY = /^([ \t]*(?:- )?)(?:data|stringData):[ \t]*$/;
const MAPPING_ENTRY = /^([ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s:#][^:\r\n]*?):(?:[ \t]+(.*?))?[ \t]*$/;


/** The text with the secret cells of its tables, and a Kubernetes Secret's data values, replaced. */
export function redactLayouts(text: string): string {
  if (!text.includes('\n')) return text;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (EXPANDED_RECORD.test(line)) {
      i = expandedRecord(lines, i + 1) - 1;
      continue;
    }
    const header = SECRET_WORD.test(line) ? tableHeader(line) : null;
    if (header !== null) i = tableRows(lines, i + 1, header) - 1;
  }
  const tables = lines.join('\n');
  return SECRET_KIND.test(tables) ? secretData(tables) : tables;
}

/** The header a table starts with: its separator, how many cells, and which of them name a secret. */
function tableHeader(line: string): { readonly separator: Separator; readonly count: number; readonly secret: readonly number[] } | null {
  const separator: Separator | null = line.includes('|') ? '|' : line.includes('\t') ? '\t' : line.includes(',') ? ',' : null;
  if (separator === null) return null;
  const cells = cellsOf(line, separator);
  if (cells === null || cells.length < 2) return null;
  const names = cells.map((cell) => line.slice(cell.start, cell.end));
  // A CSV's or TSV's header names its columns in single words: prose with commas is not one.
  if (!names.every((name) => COLUMN_NAME.test(name) && (separator === '|' || !/\s/.test(name)))) return null;
  const secret = names.flatMap((name, i) => (isSecretLikeKey(name) ? [i] : []));
  return secret.length === 0 ? null : { separator, count: cells.length, secret };
}

/** Replaces the secret cells of the rows from `from` on; returns the index of the first line after the table. */
function tableRows(lines: string[], from: number, header: NonNullable<ReturnType<typeof tableHeader>>): number {
  let i = from;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (header.separator !== ',' && RULE_LINE.test(line)) continue;
    const cells = line.trim() === '' ? null : cellsOf(line, header.separator);
    if (cells === null || cells.length !== header.count) break;
    lines[i] = cellsRedacted(line, header.secret.map((index) => cells[index] as Cell));
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
    if (isSecretLikeKey(name)) lines[i] = cellsRedacted(line, [{ start: bar + 3, end: line.trimEnd().length }]);
  }
  return i;
}

/** The line with the text of each cell replaced, where it holds any. */
function cellsRedacted(line: string, cells: readonly Cell[]): string {
  let out = line;
  for (const cell of [...cells].sort((a, b) => b.start - a.start)) {
    if (EMPTY_CELL.test(out.slice(cell.start, cell.end))) continue;
    out = out.slice(0, cell.start) + REDACTED + out.slice(cell.end);
  }
  return out;
}

/**
 * The cells of a line split at `separator`: a pipe table's outer bars are borders, not cells;
 * a CSV cell may be quoted (`"a, b"`, a quote doubled inside). Null for a line a table row cannot be
 * (a quote left open).
 */
function cellsOf(line: string, separator: Separator): Cell[] | null {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const cells: Cell[] = [];
  let start = 0;
  if (separator === '|') {
    const first = text.search(/\S/);
    if (first >= 0 && text[first] === '|') start = first + 1;
  }
  for (;;) {
    let at = start;
    while (at < text.length && (text[at] === ' ' || text[at] === '\t') && text[at] !== separator) at++;
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
      // A closing border is not a cell.
      if (separator !== '|' || at < stop) cells.push({ start: at, end });
      return cells;
    }
    cells.push({ start: at, end });
    start = next + 1;
  }
}

/** Every entry under a `data:` or `stringData:` key of a text that prints a Kubernetes Secret, its value replaced. */
function secretData(text: string): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const key = DATA_KEY.exec(lines[i] as string);
    if (key === null) continue;
    const indent = (key[1] as string).length;
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
      if (value === undefined || EMPTY_CELL.test(value) || /^[|>][-+0-9]*$/.test(value)) continue;
      lines[i] = entry === null ? line.slice(0, lineIndent) + REDACTED : `${entry[1]}${entry[2]}: ${REDACTED}`;
    }
  }
  return lines.join('\n');
}
