/** Reads files from disk (a summary, a profile, a key) with typed errors for every way it can fail. */

import * as fs from 'node:fs';
import { AuraError, NotFoundError, ReadError } from '../errors.js';
import { parseJsonStrict } from '../spine/fast-record.js';

/**
 * A file's text (UTF-8).
 * @param what names the file in messages ("profile").
 * @throws NotFoundError when it is not there, ReadError when it cannot be read
 */
export function readTextFile(path: string, what: string): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(what, path);
    throw new ReadError(path, error);
  }
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
