/**
 * The forms an injected secret's value is written back in, and their replacement in a text: as
 * given, with an encoder's escapes read, and in hex or base64 laid out over lines.
 */

import { REDACTED } from '../spine/redactor.js';

// Shorter values would scrub ordinary words out of recorded text; Aura uses the same bound.
export const MIN_SCRUB_LENGTH = 8;

/**
 * The text a secret's value is written back in. `text`: the value as given, trimmed (without the
 * line end a file or a vault gave it), with a form's `+` for each space; looked for in a text as it
 * is and with its escapes read ({@link ESCAPE}), which covers every encoder whichever characters
 * it escapes. `encoded`: its bytes in hex and in base64 (and base64url), wherever they stand in
 * the bytes encoded: a tool that echoes a token base64-encoded, or inside an encoded blob (`Basic
 * base64(user:secret)`, a JWT's payload). Of each of the three alignments, only the characters
 * made of the secret's bits alone: those at its edges also hold its neighbours' bits. They are
 * looked for in a text without its layout too ({@link LAYOUT}).
 */
export interface SecretForms {
  readonly value: string;
  readonly text: readonly string[];
  readonly encoded: readonly string[];
}

/** The forms of `value` long enough to scrub, or null when it is too short to scrub once trimmed. */
export function formsOf(value: string): SecretForms | null {
  const secret = value.trim();
  if (secret.length < MIN_SCRUB_LENGTH) return null;
  const bytes = Buffer.from(secret, 'utf8');
  const hex = bytes.toString('hex');
  const encoded = [hex, hex.toUpperCase()];
  for (let shift = 0; shift < 3; shift++) {
    const shifted = Buffer.concat([Buffer.alloc(shift), bytes]);
    const core = shifted.toString('base64').slice(Math.ceil((shift * 8) / 6), Math.floor((shifted.length * 8) / 6));
    encoded.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  const scrubbable = (forms: readonly string[]): string[] => forms.filter((form, i) => form.length >= MIN_SCRUB_LENGTH && forms.indexOf(form) === i);
  return { value, text: scrubbable([value, secret, secret.replace(/ /g, '+')]), encoded: scrubbable(encoded) };
}

/**
 * The patterns of some values' forms, each longest first (a prefixed value before the value it
 * holds), the text forms in any case, and the length of the shortest: a shorter text holds none in any reading (escapes and
 * layout only lengthen one), which spares most keys and words any search.
 */
export interface FormsPatterns {
  readonly text: RegExp;
  readonly encoded: RegExp;
  readonly shortest: number;
}

export function patternsOf(forms: readonly SecretForms[]): FormsPatterns | null {
  if (forms.length === 0) return null;
  const text = forms.flatMap((known) => known.text);
  const encoded = forms.flatMap((known) => known.encoded);
  const alternatives = (literals: readonly string[], flags: string): RegExp => new RegExp(longestFirst([...new Set(literals)]).map(escapedForPattern).join('|'), flags);
  // The text in any case: a tool that echoes a token upper-cased (`tr a-z A-Z`) still holds it. An
  // encoding's case is its value (hex has both cases among its forms already).
  return { text: alternatives(text, 'gi'), encoded: alternatives(encoded, 'g'), shortest: Math.min(...[...text, ...encoded].map((form) => form.length)) };
}

function escapedForPattern(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

/**
 * An escape of JSON text (`\/` as PHP's json_encode writes it, `\"`, `\u002B` as .NET writes `+`,
 * `\u00e9` as Python's ensure_ascii writes what is past ASCII), of a URL (`%2F` or `%2f`; the bytes
 * of a character past ASCII together) or of HTML (`&#39;`, `&#x27;`, `&amp;`). Encoders differ in
 * which characters they escape (Python's quote keeps `/`, URLSearchParams `*`, PHP's urlencode
 * `~` not), not in how: reading every escape finds the secret whichever they chose.
 */
const ESCAPE = /%[0-7][0-9A-Fa-f]|(?:%[89A-Fa-f][0-9A-Fa-f])+|\\u[0-9A-Fa-f]{4}|\\["\\/bfnrt]|&#\d{1,7};|&#[xX][0-9A-Fa-f]{1,6};|&(?:amp|lt|gt|quot|apos);/g;
const JSON_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** What an {@link ESCAPE} stands for. */
function unescaped(escape: string): string {
  if (escape.startsWith('%')) {
    try {
      return decodeURIComponent(escape);
    } catch {
      // Bytes that are no UTF-8: no secret's text.
      return escape;
    }
  }
  if (escape.startsWith('\\u')) return String.fromCharCode(Number.parseInt(escape.slice(2), 16));
  if (escape.startsWith('\\')) return JSON_ESCAPES[escape.charAt(1)] ?? escape;
  if (escape.startsWith('&#')) {
    const code = /^&#[xX]/.test(escape) ? Number.parseInt(escape.slice(3, -1), 16) : Number.parseInt(escape.slice(2, -1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
  }
  return ENTITIES[escape.slice(1, -1)] ?? escape;
}

/**
 * What an encoder lays its characters out with: line breaks and indents (escaped too, as JSON text
 * holds them), as MIME's 76 columns and PEM's 64 wrap base64; the spaces or colons between hex's bytes.
 */
const LAYOUT = /(?:[\s:]|\\[rn])+/g;
const LINE_BREAK = /[\r\n]|\\[rn]/;

/**
 * `text` with each form `patterns` match replaced. Each is looked for in the text as it is, and,
 * when it holds escapes, with them read: a raw secret after a backslash (`C:\keys\n…`) would not
 * be found in the second.
 */
export function replaced(text: string, patterns: FormsPatterns | null): string {
  if (patterns === null || text.length < patterns.shortest) return text;
  const out = readingReplaced(text, patterns, false);
  return out.search(ESCAPE) < 0 ? out : readingReplaced(out, patterns, true);
}

/** `text` with the text forms found in its reading replaced, then the encoded ones found in it without its layout. */
function readingReplaced(text: string, patterns: FormsPatterns, escapes: boolean): string {
  const out = reading(text, escapes, false).search(patterns.text) < 0 ? text : spansReplaced(text, patterns.text, escapes, false);
  return reading(out, escapes, true).search(patterns.encoded) < 0 ? out : spansReplaced(out, patterns.encoded, escapes, true);
}

/** `text` with its escapes read, and without its layout. */
function reading(text: string, escapes: boolean, laidOut: boolean): string {
  const read = escapes ? text.replace(ESCAPE, unescaped) : text;
  return laidOut ? read.replace(LAYOUT, '') : read;
}

/**
 * A reading of a text (as {@link reading} has it), with the span of the text each of its
 * characters stands for. Made only for a text a form was found in: most are read as strings alone.
 */
interface SpannedReading {
  readonly text: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/** `text` with each match of `pattern` in its reading replaced: by `[redacted]`, or, laid out over lines, each line's part of it, its line breaks and indents kept. */
function spansReplaced(text: string, pattern: RegExp, escapes: boolean, laidOut: boolean): string {
  let read: SpannedReading = { text, starts: Array.from({ length: text.length }, (_, i) => i), ends: Array.from({ length: text.length }, (_, i) => i + 1) };
  if (escapes) read = rewritten(read, ESCAPE, unescaped);
  if (laidOut) read = rewritten(read, LAYOUT, () => '');
  let out = '';
  let copied = 0;
  for (const match of read.text.matchAll(pattern)) {
    // Two matches may share an escape that stands for two characters.
    const start = Math.max(read.starts[match.index] as number, copied);
    const end = read.ends[match.index + match[0].length - 1] as number;
    out += text.slice(copied, start);
    if (laidOut) for (const layout of text.slice(start, end).matchAll(LAYOUT)) if (LINE_BREAK.test(layout[0])) out += REDACTED + layout[0];
    out += REDACTED;
    copied = end;
  }
  return out + text.slice(copied);
}

/** `read` with each match of `pattern` rewritten; what it writes stands for the span of the whole match. */
function rewritten(read: SpannedReading, pattern: RegExp, rewrite: (match: string) => string): SpannedReading {
  let text = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let from = 0;
  const kept = (to: number): void => {
    text += read.text.slice(from, to);
    for (let i = from; i < to; i++) {
      starts.push(read.starts[i] as number);
      ends.push(read.ends[i] as number);
    }
  };
  for (const match of read.text.matchAll(pattern)) {
    kept(match.index);
    const written = rewrite(match[0]);
    from = match.index + match[0].length;
    text += written;
    for (let i = 0; i < written.length; i++) {
      starts.push(read.starts[match.index] as number);
      ends.push(read.ends[from - 1] as number);
    }
  }
  kept(read.text.length);
  return { text, starts, ends };
}

function longestFirst(values: readonly string[]): string[] {
  return [...values].sort((a, b) => b.length - a.length);
}
