/**
 * Secrets that a text lays out rather than assigns, so no `name = value` pattern sees them: the
 * cells of a table's column whose header names a secret (what `psql`, `mysql`, DuckDB, Polars,
 * `sqlite3`, `sqlcmd`, a Markdown table, a CSV or TSV file print for `SELECT * FROM users`, also
 * as a tool that reads files numbers their lines), the value beside a secret's name in a
 * two-column table or a `psql` expanded record, and a Kubernetes Secret's `data` as `kubectl get
 * secret -o yaml` prints it, whatever its keys are called. The layout around each value is kept:
 * a reader still sees the table.
 */

import { REDACTED } from '../spine/redactor.js';
import { isSecretLikeKey, SECRET_WORDS } from './secret-names.js';

/** The cells' separator of a table's header line (`;`: a CSV as Excel writes it where a comma is the decimal point). */
type Separator = '|' | ',' | ';' | '\t';

/**
 * Which cells of a table are kept as holding no secret, beyond {@link NO_SECRET_CELL}'s: in docs'
 * Markdown, a short word or words (`Yes`, `3.3V`, `The DB login`); beside a name in a fixed-width
 * table of names and values, words (a command's help lists its options so); in a database's
 * output, and under a secret's name in a fixed-width table, none (a password may hold spaces).
 */
type CellReading = 'docs' | 'text' | 'data';

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
  /** A Markdown table: its rule is bars and dashes, and a row followed by such a rule heads the next table. */
  readonly markdown: boolean;
  readonly count: number;
  /** The columns a secret's name heads; none for a two-column table of names and values. */
  readonly secret: readonly number[];
}

// A line must hold one of these to be read as a header or a name's row (isSecretLikeKey decides).
const SECRET_WORD = new RegExp(SECRET_WORDS, 'i');
// A CSV's or TSV's column name: a word, at most 64 characters. A bar table's, whose rule line marks
// its header, may be anything of that length (`count(*)`, DuckDB's `…` for columns left out, an
// index's empty name).
const COLUMN_NAME = /^[A-Za-z_][\w.#-]{0,63}$/;
// A message of the database server that psql prints before its rows (`NOTICE:  …`, and
// `psql:FILE:LINE: WARNING:  …` as it runs a file), to stderr, which a tool gives with its output.
const SERVER_MESSAGE = /^(?:psql:[^\s:]+:\d+: )?(?:NOTICE|WARNING|INFO|LOG|DEBUG\d?|DETAIL|HINT|CONTEXT|LOCATION|STATEMENT|QUERY|ERROR): /;
const MAX_HEADER_CELL = 64;
// A table's rule line: `----+----`, `+----+`, `|---|:--:|`, `+====+` (tabulate's grid). Each part
// read once: two runs that could both take a space or a dash made its time the square of the run.
const RULE_LINE = /^[ \t]*(?:[|+][ \t]*)?:?(?:--|==)[-=+|: \t]*\r?$/;
// Markdown's: bars and dashes.
const MARKDOWN_RULE = /^[ \t]*\|[ \t]*:?-[-:| \t]*\r?$/;
// What a cell holds when there is no secret in it: nothing, a NULL, a mask, a placeholder for a
// value not set (`(not set)`, `<none>`), a name in backticks as docs write one, a yes or no, a
// version or an address (`2.23.0`, `10.0.0.1`).
const NO_SECRET_CELL = /^(?:|NULL|null|None|\*+|\[redacted\]|\((?:null|none|not set|unset|empty|hidden)\)|<(?:none|not set|unset|empty|hidden)>|`[^`]*`|true|false|True|False|TRUE|FALSE|v?\d+(?:\.\d+)+)$/;
const NO_SECRET_DOCS_CELL = /^(?:.{0,4}|.*\s.*)$/;
const NO_SECRET_TEXT_CELL = /\s/;
// A box-drawn table's lines (DuckDB, Polars, `sqlite3 -box`, Python's rich and tabulate, psql's
// unicode lines): its vertical lines, dashed ones too, are read as bars, every other drawing
// character as a rule's dash, and a bar written in a cell as a character of its text. One UTF-16
// unit each, so a cell stands at the same place in the line and in its reading.
const BOX_BAR = /[\u2502\u2503\u2506\u2507\u250a\u250b\u254e\u254f\u2551]/;
const BOX_BARS = /[\u2502\u2503\u2506\u2507\u250a\u250b\u254e\u254f\u2551]/g;
const BOX_RULE = /[\u2500\u2501\u2504\u2505\u2508\u2509\u250c-\u254d\u2550\u2552-\u257f]/g;
// A box's bottom border: its table ends there, whatever follows.
const BOX_BOTTOM = /[\u2514-\u251b\u2558-\u255d\u256f\u2570]/;
// A box's top border that names its columns (ClickHouse's default `┌─name─┬─password─┐`): read as
// a header line, its corners and joints as bars and its rule as spaces.
const NAMED_BORDER = /^[ \t]*[\u250c\u250f\u256d\u2554][\u2500\u2501\u2550]*[^\s\u2500-\u257f][^\r\n]*[\u2510\u2513\u256e\u2557][ \t]*\r?$/;
const BORDER_JOINTS = /[\u250c\u250f\u256d\u2554\u252c\u2533\u2566\u2510\u2513\u256e\u2557]/g;
const BORDER_RULE = /[\u2500\u2501\u2550]/g;
// The rule under a fixed-width table's header (`sqlite3 -column`, `sqlcmd`, SQL*Plus, PowerShell's
// Format-Table, `pip list`): a run of dashes a column, spaces between.
const DASH_RULE = /^ *-{2,}(?: +-{2,})+ *\r?$/;
// One rule across the whole table (Python rich's bar-less styles, `━━━`): its columns are where the
// header's names start, two spaces or more apart.
const FULL_RULE = /^[ \t]*(?:-{3,}|={3,}|[\u2500\u2501\u2550]{3,})[ \t]*\r?$/;
const HEADER_NAMES = /\S+(?: \S+)*/g;
// The count a database prints after its rows: `(2 rows)`, `(1 rows affected)`.
const ROW_COUNT = /^\s*\(\d+ rows?\b/;
// A line's number, as `cat -n` and an agent's file reader put it before each line (a tab or `→` after it).
const LINE_NUMBER = /^ *(\d+)(?:\t|\u2192)/;
// psql's expanded display (`\x`): `-[ RECORD 1 ]-----`, then `name | value` lines. One run after
// the bracket: two that could both take a dash made a long one take the square of its length.
const EXPANDED_RECORD = /^-\[ RECORD \d+ \][-+]*\s*$/;
// A Kubernetes Secret as YAML prints it.
const SECRET_KIND = /^[ \t]*(?:- )?kind:[ \t]*["']?Secret["']?[ \t]*\r?$/m;
const DATA_KEY = /^[ \t]*(?:- )?(?:data|stringData):[ \t]*\r?$/;
// An entry's value runs to its last non-space, read greedily: read lazily, each space of a run
// inside it was read again to the run's end.
const MAPPING_ENTRY = /^([ \t]+)("[^"\r\n]*"|'[^'\r\n]*'|[^\s:#][^:\r\n]*?):(?:[ \t]+(.*\S))?[ \t]*\r?$/;

/** The text with the secret cells of its tables, and a Kubernetes Secret's data values, replaced. */
export function redactLayouts(text: string): string {
  if (!text.includes('\n')) return text;
  const lines = text.split('\n');
  // What the table readers see (box-drawn lines as bars and dashes, lines' numbers as spaces); the
  // replacements go to `lines`, at the same places.
  const shapes = shapesOf(lines, BOX_BAR.test(text));
  for (let i = 0; i < lines.length; i++) {
    const shape = shapes[i] as string;
    if (EXPANDED_RECORD.test(shape)) {
      i = expandedRecord(lines, shapes, i + 1) - 1;
      continue;
    }
    const next = shapes[i + 1] ?? '';
    if (DASH_RULE.test(next)) {
      i = columnTable(lines, shapes, i, [...next.matchAll(/-+/g)]) - 1;
      continue;
    }
    if (FULL_RULE.test(next) && !shape.includes('|') && !FULL_RULE.test(shape)) {
      i = columnTable(lines, shapes, i, [...shape.matchAll(HEADER_NAMES)]) - 1;
      continue;
    }
    const line = lines[i] as string;
    const header = tableHeader(shapes, i, BOX_BAR.test(line), NAMED_BORDER.test(line));
    if (header !== null) i = tableRows(lines, shapes, i + 1 + header.skip, header) - 1;
  }
  const tables = lines.join('\n');
  return SECRET_KIND.test(tables) ? secretData(tables) : tables;
}

/** The lines as the table readers see them, each as long as it is. */
function shapesOf(lines: readonly string[], boxed: boolean): readonly string[] {
  const numbered = numberedLines(lines);
  if (!boxed && !numbered) return lines;
  return lines.map((line) => {
    let shape = line;
    if (numbered) {
      const number = LINE_NUMBER.exec(shape);
      if (number !== null) shape = ' '.repeat(number[0].length) + shape.slice(number[0].length);
    }
    if (!boxed) return shape;
    if (NAMED_BORDER.test(shape)) return shape.replace(BORDER_JOINTS, '|').replace(BORDER_RULE, ' ');
    // A bar written in a box's cell is its text; elsewhere (a Markdown table beside a tree) a bar.
    return (BOX_BAR.test(shape) ? shape.replaceAll('|', '\u00a6').replace(BOX_BARS, '|') : shape).replace(BOX_RULE, '-');
  });
}

/** True when the text's first two lines are numbered one after the other, as a tool that reads a file gives them. */
function numberedLines(lines: readonly string[]): boolean {
  const first = LINE_NUMBER.exec(lines[0] as string);
  const second = first === null ? null : LINE_NUMBER.exec(lines[1] ?? '');
  return second !== null && Number(second?.[1]) === Number(first?.[1]) + 1;
}

/**
 * The header a table starts with at line `i`, when its rows can hold a secret: a bar table's is
 * followed by its rule line (a row of another table, a pipeline, a log line are not), a CSV's or
 * TSV's starts the text or follows a blank line or a server's message and names its columns in
 * single words, as does a bar table printed without a rule (`psql -A`), whose rows are read only
 * under a secret's name. A box-drawn table's header (`boxed`) may have a line of column types
 * between it and its rule (DuckDB); one in a box's top border (`named`) has its rows right under it.
 */
function tableHeader(lines: readonly string[], i: number, boxed: boolean, named: boolean): Header | null {
  const line = lines[i] as string;
  const separator: Separator | null = line.includes('|') ? '|' : line.includes('\t') ? '\t' : line.includes(',') ? ',' : line.includes(';') ? ';' : null;
  if (separator === null) return null;
  const bordered = separator === '|' && line.trimStart().startsWith('|');
  const ruled = separator !== '|' || named ? 0 : RULE_LINE.test(lines[i + 1] ?? '') ? 1 : boxed && RULE_LINE.test(lines[i + 2] ?? '') ? 2 : -1;
  // Words for names, at the text's start or after a blank line or a server's message: a CSV's, a TSV's, `psql -A`'s.
  const delimited = separator !== '|' || (ruled < 0 && !bordered && !boxed);
  const above = i > 0 ? (lines[i - 1] as string) : '';
  if ((ruled < 0 && !delimited) || (delimited && above.trim() !== '' && !SERVER_MESSAGE.test(above))) return null;
  const cells = cellsOf(line, separator, bordered);
  if (cells === null || cells.length < 2) return null;
  const names = cells.map((cell) => line.slice(cell.start, cell.end));
  if (!names.every((name) => (delimited ? COLUMN_NAME.test(name) : name.length <= MAX_HEADER_CELL))) return null;
  const secret = secretColumns(line, names);
  if (secret.length === 0 && !(separator === '|' && ruled >= 0 && cells.length === 2)) return null;
  const skip = Math.max(ruled, 0);
  const markdown = bordered && !boxed && MARKDOWN_RULE.test(lines[i + skip] as string);
  return { separator, skip, bordered, markdown, count: cells.length, secret };
}

/** The columns of a header line whose names are a secret's, in order. */
function secretColumns(header: string, names: readonly string[]): number[] {
  return SECRET_WORD.test(header) ? names.flatMap((name, n) => (isSecretLikeKey(name) ? [n] : [])) : [];
}

/**
 * Replaces the secret cells of the rows from `from` on, read from their `shapes`; returns the index
 * of the first line after the table: at a line that is no row of it, a box's bottom border, or a
 * Markdown row with a rule under it (the header of the next table, printed with no line between).
 */
function tableRows(lines: string[], shapes: readonly string[], from: number, header: Header): number {
  let i = from;
  const bars = header.separator === '|';
  for (; i < lines.length; i++) {
    const shape = shapes[i] as string;
    if (bars && RULE_LINE.test(shape)) {
      if (BOX_BOTTOM.test(lines[i] as string)) return i + 1;
      continue;
    }
    if (header.markdown && MARKDOWN_RULE.test(shapes[i + 1] ?? '')) break;
    const cells = shape.trim() === '' ? null : cellsOf(shape, header.separator, header.bordered);
    if (cells === null || cells.length !== header.count) break;
    lines[i] = rowRedacted(lines[i] as string, cells, header.secret, header.markdown ? 'docs' : 'data');
  }
  return i;
}

/** A row with its cells under a secret's column replaced, or, in a two-column table of names and values (no such column), its value when its name is a secret's. */
function rowRedacted(line: string, cells: readonly Cell[], secret: readonly number[], reading: CellReading): string {
  if (secret.length > 0) {
    // A short row reaches only its first columns: the rest of the secret ones are not looked for.
    const reached: Cell[] = [];
    for (const n of secret) {
      const cell = cells[n];
      if (cell === undefined) break;
      reached.push(cell);
    }
    return cellsRedacted(line, reached, reading);
  }
  const [name, value] = cells;
  if (name === undefined || value === undefined) return line;
  return SECRET_WORD.test(line) && isSecretLikeKey(line.slice(name.start, name.end)) ? cellsRedacted(line, [value], reading) : line;
}

/** A row of a fixed-width table: its cells, and which of them are under a secret's name. */
interface Row {
  readonly cells: readonly Cell[];
  readonly secret: readonly number[];
  /** Read word by word, of more words than the table has columns: which words are whose is not known. */
  readonly loose: boolean;
}

/**
 * A fixed-width table whose header is line `at`, its rule under it: each column starts at its
 * `runs` (the rule's runs of dashes, or the header's names) and spans the spaces after it. Its rows
 * run to a blank line, a row count, or a line whose text crosses a gap between columns (not a
 * row). A table whose rule is as wide as its names (`sqlcmd -W`, and rich's, whose columns start
 * where its names do) may have its cells trimmed or centred, its columns out of line: such a row is
 * read word by word. Returns the index of the first line after the table.
 */
function columnTable(lines: string[], shapes: readonly string[], at: number, runs: readonly RegExpMatchArray[]): number {
  const starts = runs.map((run) => run.index as number);
  // The cells of a line, as far as it reaches: a short line is not read for the columns after its end.
  const spans = (line: string): Cell[] | null => {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    const cells: Cell[] = [];
    for (let n = 0; n < starts.length && (starts[n] as number) < text.length; n++) {
      const start = starts[n] as number;
      if (n > 0 && text[start - 1] !== ' ') return null;
      let from = start;
      let end = Math.min(starts[n + 1] ?? text.length, text.length);
      while (from < end && text[from] === ' ') from++;
      while (end > from && text[end - 1] === ' ') end--;
      cells.push({ start: from, end });
    }
    return cells;
  };
  const header = shapes[at] as string;
  const names = spans(header)?.map((cell) => header.slice(cell.start, cell.end)) ?? [];
  if (starts.length < 2 || names.length !== starts.length || !names.every((name) => name.length <= MAX_HEADER_CELL)) return at + 1;
  const secret = secretColumns(header, names);
  if (secret.length === 0 && names.length !== 2) return at + 2;
  const trimmed = names.every((name, n) => name.length === (runs[n] as RegExpMatchArray)[0].length);
  // A row of more words than columns holds a cell of words: the columns from the first secret one
  // to the last take every word they may hold (a name's beside them too), the others one word each;
  // in a table of names and values, the value takes the words after the name.
  const words = (line: string): Row | null => {
    const found = [...line.matchAll(/\S+/g)].map((word) => ({ start: word.index, end: word.index + word[0].length }));
    const extra = found.length - starts.length;
    if (extra <= 0) return extra === 0 ? { cells: found, secret, loose: false } : null;
    const first = secret[0] ?? starts.length - 1;
    const last = (secret.at(-1) ?? first) + extra;
    const cells = [...found.slice(0, first), { start: (found[first] as Cell).start, end: (found[last] as Cell).end }, ...found.slice(last + 1)];
    return { cells, secret: secret.length > 0 ? [first] : [], loose: true };
  };
  const rowAt = (i: number): Row | null => {
    const shape = shapes[i];
    if (shape === undefined || shape.trim() === '' || ROW_COUNT.test(shape)) return null;
    const cells = spans(shape);
    return cells !== null ? { cells, secret, loose: false } : trimmed ? words(shape) : null;
  };
  const rows: Row[] = [];
  let next = rowAt(at + 2);
  while (next !== null) {
    rows.push(next);
    next = rowAt(at + 2 + rows.length);
  }
  // Loose rows the table ends with are its own only when its row count follows them (`sqlcmd`
  // prints one after a blank line): else they are text under it, a note, kept.
  const after = at + 2 + rows.length;
  const counted = ROW_COUNT.test(shapes[after] ?? '') || ((shapes[after] ?? '').trim() === '' && ROW_COUNT.test(shapes[after + 1] ?? ''));
  if (!counted) while (rows.at(-1)?.loose === true) rows.pop();
  // Secret columns hold values, words too; a table of names and values may be a help text's, its values words.
  const reading = secret.length > 0 ? 'data' : 'text';
  rows.forEach((row, n) => {
    lines[at + 2 + n] = rowRedacted(lines[at + 2 + n] as string, row.cells, row.secret, reading);
  });
  return at + 2 + rows.length;
}

/** psql's `name | value` lines of expanded records, from `from` on: the values of secret names replaced. */
function expandedRecord(lines: string[], shapes: readonly string[], from: number): number {
  let i = from;
  for (; i < lines.length; i++) {
    const shape = shapes[i] as string;
    if (EXPANDED_RECORD.test(shape)) continue;
    const bar = shape.indexOf(' | ');
    if (bar < 0) break;
    const name = shape.slice(0, bar).trim();
    if (isSecretLikeKey(name)) lines[i] = cellsRedacted(lines[i] as string, [{ start: bar + 3, end: shape.trimEnd().length }], 'data');
  }
  return i;
}

/** The line with the text of each cell (in order) replaced, where, read as `reading` says, it can hold a secret. */
function cellsRedacted(line: string, cells: readonly Cell[], reading: CellReading): string {
  let out = '';
  let copied = 0;
  for (const cell of cells) {
    const text = line.slice(cell.start, cell.end);
    if (NO_SECRET_CELL.test(text) || (reading === 'docs' && NO_SECRET_DOCS_CELL.test(text)) || (reading === 'text' && NO_SECRET_TEXT_CELL.test(text))) continue;
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
    if ((separator === ',' || separator === ';') && text[at] === '"') {
      let close = at + 1;
      for (;;) {
        close = text.indexOf('"', close);
        if (close < 0) return null;
        if (text[close + 1] !== '"') break;
        close += 2;
      }
      cells.push({ start: at + 1, end: close });
      const next = text.indexOf(separator, close);
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
