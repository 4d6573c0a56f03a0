/** Reads a JSON file from disk (a summary, say) with typed errors for every way it can fail. */

import * as fs from 'node:fs';
import { AuraError, NotFoundError, ReadError } from '../errors.js';

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
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(what, path);
    throw new ReadError(path, error);
  }
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (error) {
    throw new AuraError('READ_FAILED', `${path} is not a JSON ${what}: ${(error as Error).message}`, { data: { path } });
  }
}
