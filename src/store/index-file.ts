/**
 * An index's work kept between processes, so `aura sessions list` reads only the sessions that
 * changed since the last reader ran. It is the reader's cache, not evidence: it lives in the
 * reader's own cache folder (`AURA_CACHE_DIR`, else `$XDG_CACHE_HOME/aura`, else `~/.cache/aura`),
 * never beside the sessions, so it never travels with them, and it is taken only under a MAC by a
 * secret there that only its owner may read. A cache that anyone else wrote, or that a copied home
 * brought along, is not read: its views are computed again from the files. Whoever can read the
 * secret can forge the cache, as they can read the signing keys of a home of their own.
 */

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sha256 } from '../spine/hash.js';
import { parseJson } from '../spine/native-json.js';
import { VERSION } from '../version.js';
import { makeFolder, removeFile, replaceWhole } from './fs-write.js';

/** The reader's cache folder. */
export function cacheDir(): string {
  const own = process.env['AURA_CACHE_DIR'];
  if (own !== undefined && own !== '') return path.resolve(own);
  const xdg = process.env['XDG_CACHE_HOME'];
  return path.join(xdg !== undefined && xdg !== '' ? xdg : path.join(os.homedir(), '.cache'), 'aura');
}

/** The file an index of these inputs is kept in: a folder, its seal log, the keys, and the code that computed the views. */
export function indexFileOf(parts: readonly string[]): string {
  const name = sha256([VERSION, ...parts].join('\0')).slice(0, 32);
  return path.join(cacheDir(), 'index', `${name}.json`);
}

const SECRET_BYTES = 32;

/** The cache's secret, made on first use; null when it cannot be had or is readable by others. */
function secret(): Buffer | null {
  const file = path.join(cacheDir(), 'secret');
  try {
    const held = fs.readFileSync(file);
    const stats = fs.statSync(file);
    return held.length === SECRET_BYTES && (stats.mode & 0o077) === 0 && stats.uid === process.getuid?.() ? held : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null;
  }
  try {
    makeFolder(cacheDir(), 0o700);
    // Written aside, then linked: a reader never sees it half written, and two writers keep one.
    const aside = `${file}.${process.pid}.${crypto.randomUUID()}`;
    fs.writeFileSync(aside, crypto.randomBytes(SECRET_BYTES), { mode: 0o600, flag: 'wx' });
    try {
      fs.linkSync(aside, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      removeFile(aside);
    }
    return secret();
  } catch {
    return null;
  }
}

function macOf(key: Buffer, body: string | Uint8Array): string {
  return crypto.createHmac('sha256', key).update(body).digest('hex');
}

/** What was kept, or null when there is none this reader may take (none, unreadable, not signed by its secret). */
export function loadIndexFile(file: string): unknown {
  const key = secret();
  if (key === null) return null;
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    return null;
  }
  // The MAC is checked over the bytes as read, and the body decoded once: a large index (10,000
  // sessions: 12 MB) is not turned into text and back to bytes for its MAC.
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return null;
  const body = bytes.subarray(newline + 1);
  const mac = bytes.subarray(0, newline);
  const expected = Buffer.from(macOf(key, body), 'utf8');
  if (mac.length !== expected.length || !crypto.timingSafeEqual(mac, expected)) return null;
  try {
    return parseJson(body.toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

/** Keeps `value` for the next reader; a cache that cannot be written is simply not kept. */
export function saveIndexFile(file: string, value: unknown): void {
  const key = secret();
  if (key === null) return;
  const body = JSON.stringify(value);
  try {
    makeFolder(path.dirname(file), 0o700);
  } catch {
    return;
  }
  replaceWhole(file, `${macOf(key, body)}\n${body}`);
}
