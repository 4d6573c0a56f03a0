/**
 * Where a profile value came from, so every error names the file, the line and the key. A profile
 * read from YAML keeps the line of every node; one given in code says `<code>`.
 */

import { parseYamlSource, type KeyPath, type YamlSource } from '../config/yaml-source.js';
import { ProfileError } from '../errors.js';
import { readTextFile } from '../store/json-file.js';

export type { KeyPath } from '../config/yaml-source.js';

/** A profile's raw value, the file it came from, and how to locate its parts. */
export interface ProfileSource extends YamlSource {
  readonly path: string;
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
  return textSource(path, readTextFile(path, 'profile'));
}

/**
 * A profile file's text, parsed.
 * @throws ProfileError (YAML syntax, with its line)
 */
export function textSource(path: string, text: string): ProfileSource {
  return { path, ...parseYamlSource(text, (message, line) => new ProfileError(message, { path, line, key: '(root)' })) };
}

/** A {@link ProfileError} at `keys` in `source`. */
export function profileError(source: ProfileSource, keys: KeyPath, message: string): ProfileError {
  return new ProfileError(message, { path: source.path, line: source.lineOf(keys), key: keyText(keys) });
}
