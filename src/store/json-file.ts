/**
 * Reads files from disk (a summary, a profile, a key) with typed errors for every way it can fail;
 * a FIFO or a device in a file's place is refused without blocking.
 */

import { AuraError } from '../errors.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { readRegularFile } from '../spine/regular-file.js';

/**
 * A file's text (UTF-8).
 * @param what names the file in messages ("profile").
 * @throws NotFoundError when it is not there, ReadError when it cannot be read or is not a regular file
 */
export function readTextFile(path: string, what: string): string {
  return readRegularFile(path, what).toString('utf8');
}

/** The file's text and its parsed value. */
export interface JsonFile {
  readonly text: string;
  readonly value: unknown;
}

/**
 * @param what names the file in messages ("summary").
 * @throws NotFoundError, ReadError; AuraError `READ_FAILED` when it is not JSON
 */
export function readJsonFile(path: string, what: string): JsonFile {
  const text = readTextFile(path, what);
  try {
    return { text, value: parseJsonStrict(text) };
  } catch (error) {
    throw new AuraError('READ_FAILED', `${path} is not a JSON ${what}: ${(error as Error).message}`, { data: { path } });
  }
}
