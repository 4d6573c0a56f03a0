/**
 * What a command returns, and how `main.ts` prints it: `--json` gives one stable JSON object for
 * machines; otherwise text for people, coloured when stdout is a terminal.
 */

import { randomBytes } from 'node:crypto';

/** Exit codes (README "Exit codes"). */
export const EXIT = {
  ok: 0,
  /** The check failed: a broken or damaged chain, a failing verdict. */
  checkFailed: 1,
  /** Usage or input error: bad arguments, a refused session id, a missing or unreadable file. */
  usage: 2,
  /** A bug in aura: the message says what happened. */
  internal: 70,
} as const;

/** The outcome of one command. */
export interface CommandResult {
  readonly exitCode: (typeof EXIT)[keyof typeof EXIT];
  /** Printed as JSON with `--json`. */
  readonly json: unknown;
  /** Printed for people otherwise; made only then when it is a function (a table of 10,000 rows costs a `--json` caller nothing). */
  readonly human: string | (() => string);
  /** Print nothing (a server whose stdout carries a protocol). */
  readonly quiet?: boolean;
}

const COLORED = process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined;

// aura's own colours are written as a mark no record can hold (a private-use character and this
// process's random nonce) and turned into the terminal's escapes only when the text is printed,
// after every control character a record holds was escaped: a record's own colour codes (black
// on black) never reach the terminal, whatever they look like.
const COLOR_MARK = `\u{F0000}${randomBytes(8).toString('hex')}[`;
const COLOR_MARKS = new RegExp(`${COLOR_MARK.replace('[', '\\[')}(\\d+)m`, 'gu');

function paint(open: number, close: number): (text: string) => string {
  const closing = `${COLOR_MARK}${close}m`;
  // A colour closed inside the text (a part of it coloured otherwise) is opened again after it.
  return (text) => (COLORED ? `${COLOR_MARK}${open}m${text.replaceAll(closing, `${closing}${COLOR_MARK}${open}m`)}${closing}` : text);
}

/** Colours for human output: on only when stdout is a terminal and NO_COLOR is unset. */
export const colors = { bold: paint(1, 22), green: paint(32, 39), red: paint(31, 39), yellow: paint(33, 39) } as const;

/** Prints a result the way the command line asked for it. */
export function printResult(result: CommandResult, asJson: boolean): void {
  if (result.quiet === true) return;
  process.stdout.write(asJson ? `${JSON.stringify(result.json, null, 2)}\n` : `${terminalText(typeof result.human === 'string' ? result.human : result.human())}\n`);
}

// What a record may hold that a terminal acts on: every control character but a line break and a
// tab, and the bidirectional overrides.
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for people, safe on their terminal: a line break and a tab stay, and the colours this
 * program wrote; any other control character (what a trail, a summary or a host name may hold: a
 * screen clear, a window title, a colour, a carriage return that hides a line) is written as its
 * `\u` escape.
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_CONTROL, escaped).replace(COLOR_MARKS, '\u001b[$1m');
}

/** A cell's width on the terminal: without the marks of its colours. */
function width(cell: string): number {
  return cell.replace(COLOR_MARKS, '').length;
}

function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

// Control characters and the bidirectional overrides: recorded text that would clear, retitle or
// reorder the terminal of the person reading it.
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Text from a record, safe on a terminal: each control character written as its `\u` escape. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escaped);
}

/** Shortens a hash for people. */
export function short(hash: string | null | undefined): string {
  return hash === null || hash === undefined ? '-' : `${hash.slice(0, 12)}…`;
}

/** Lays out rows as aligned columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => width(row[i] ?? ''))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - width(cell))))
      .join('  ')
      .trimEnd();
  return [colors.bold(line(header)), ...rows.map(line)].join('\n');
}

/** One line a file named like a trail that was not read, naming it and why. */
export function skippedLines(skipped: readonly { readonly path: string; readonly why: string }[]): string[] {
  return skipped.map((file) => colors.yellow(`not read: ${file.path}: ${file.why}`));
}
