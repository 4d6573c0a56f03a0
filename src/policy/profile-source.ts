/**
 * Where a profile value came from, so every error names the file, the line and the key. A profile
 * read from YAML keeps the line of every node; one given in code says `<code>`.
 */

import { LineCounter, parseDocument, isMap, isNode, isScalar, type Document } from 'yaml';
import { ProfileError } from '../errors.js';
import { readTextFile } from '../store/json-file.js';

/** A key path inside a profile: `['rules', 2, 'tools']`. */
export type KeyPath = readonly (string | number)[];

/** A profile's raw value and how to locate its parts. */
export interface ProfileSource {
  readonly path: string;
  readonly value: unknown;
  /** The 1-based line of the value at `keys`, or null when unknown. */
  lineOf(keys: KeyPath): number | null;
}

/** The dotted form of a key path: `rules[2].tools`. */
export function keyText(keys: KeyPath): string {
  let text = '';
  for (const key of keys) text += typeof key === 'number' ? `[${key}]` : text === '' ? key : `.${key}`;
  return text === '' ? '(root)' : text;
}

/** A profile given in code. */
export function codeSource(value: unknown): ProfileSource {
  return { path: '<code>', value, lineOf: () => null };
}

/**
 * Reads a YAML (or JSON) profile file.
 * @throws NotFoundError, ReadError, ProfileError (YAML syntax, with its line)
 */
export function fileSource(path: string): ProfileSource {
  const text = readTextFile(path, 'profile');
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const [problem] = document.errors;
  if (problem !== undefined) {
    throw new ProfileError((problem.message.split('\n')[0] ?? 'invalid YAML').replace(/:$/, ''), {
      path,
      line: problem.linePos?.[0].line ?? null,
      key: '(root)',
    });
  }
  return { path, value: document.toJS() as unknown, lineOf: (keys) => lineIn(document, lineCounter, keys) };
}

function lineIn(document: Document, lineCounter: LineCounter, keys: KeyPath): number | null {
  // The deepest node that exists on the path (a missing key is reported where its parent is);
  // for a mapping entry, the line of its key, which is where a reader looks.
  for (let depth = keys.length; depth >= 0; depth--) {
    const parent = depth === 0 ? null : depth === 1 ? document.contents : document.getIn(keys.slice(0, depth - 1), true);
    const last = keys[depth - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
      const range = isNode(pair?.key) ? pair.key.range : undefined;
      if (range !== undefined && range !== null) return lineCounter.linePos(range[0]).line;
    }
    const node = depth === 0 ? document.contents : document.getIn(keys.slice(0, depth), true);
    if (isNode(node) && node.range !== undefined && node.range !== null) return lineCounter.linePos(node.range[0]).line;
  }
  return null;
}

/** A {@link ProfileError} at `keys` in `source`. */
export function profileError(source: ProfileSource, keys: KeyPath, message: string): ProfileError {
  return new ProfileError(message, { path: source.path, line: source.lineOf(keys), key: keyText(keys) });
}
