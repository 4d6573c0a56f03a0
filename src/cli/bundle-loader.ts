/**
 * Loads the `aura` command from its one-file bundles (dist/claude-code-hook.cjs for `aura hook
 * claude-code`, dist/verify-chain.cjs for `aura verify chain`, dist/cli.cjs for every other
 * command; scripts/build-bundles.mjs) with a V8 code
 * cache: each command is a process of its own, and compiling a bundle again each time is a large
 * share of its start. Node 22's module compile cache does this for modules; Node 20 has none, so a
 * bundle is compiled here with `vm.Script`, from `cachedData` kept in the aura home.
 *
 * A cache is named by a hash of the bundle file's identity (its device, inode, size, modification
 * and change times), Node's version and the architecture (V8 itself checks little more than the text's
 * length): a new build or a new Node never reads an old cache. The file's identity, not its text:
 * hashing 600 kB took a millisecond or two of every command's start, and any build or install
 * writes the file anew.
 * A cache V8 rejects is written again, and one another user could have written is not read. It is
 * an optimisation only: a cache that cannot be read or written leaves the command as it was,
 * compiled from source.
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vm from 'node:vm';
import { auraHome } from '../config/home.js';
import { removeFile, replaceWhole } from '../store/fs-write.js';

const CACHE_SUFFIX = '.v8cache';

/** The bundles scripts/build-bundles.mjs writes into dist/. */
export type BundleName = 'claude-code-hook' | 'cli' | 'verify-chain';

/** A bundle's exports, and what keeps its compiled code for the next process. */
export interface LoadedBundle<Exports> {
  readonly exports: Partial<Exports>;
  /** Writes the code cache when this process had none it could use (call once the command has answered). */
  saveCache(): void;
}

/**
 * Loads a bundle; `home` is the `--home` the command was given, if any (the cache is in the aura
 * home). A cache holds the code its process compiled: `command` names the one the cache is for,
 * where commands of one bundle differ (a `demo`'s cache is twice a `verify`'s, all of which a
 * `verify` would load).
 */
export function loadBundle<Exports>(name: BundleName, home: string | undefined, command?: string): LoadedBundle<Exports> {
  const file = fileURLToPath(new URL(`../${name}.cjs`, import.meta.url));
  const { bytes, identity } = readBundle(file);
  // An empty --home names no home (the command refuses it): the current folder must not get a cache.
  const cacheDir = home === '' ? null : path.join(auraHome(home), 'cache');
  const key = createHash('sha256').update(`${process.version}\u0000${process.arch}\u0000${identity}`).digest('hex').slice(0, 16);
  const cacheFile = cacheDir === null ? null : path.join(cacheDir, `${name}-${key}${command === undefined ? '' : `-${command}`}${CACHE_SUFFIX}`);
  const cachedData = cacheFile === null ? null : readOwnCache(cacheFile);
  // The wrapper Node puts around a CommonJS module. The bundles are ASCII (the build checks it), so
  // latin1 reads them as UTF-8 would, without decoding.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString('latin1')}\n})`, { filename: file, ...(cachedData === null ? {} : { cachedData }) });
  const module = { exports: {} as Partial<Exports> };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(file), module, file, path.dirname(file));
  return {
    exports: module.exports,
    saveCache: () => {
      if (cacheDir === null || cacheFile === null || (cachedData !== null && !script.cachedDataRejected)) return;
      writeCache(cacheDir, cacheFile, `${name}-`, `${name}-${key}`, script.createCachedData());
    },
  };
}

/** A bundle's bytes, and its identity: what changes whenever the file is written. */
function readBundle(file: string): { bytes: Buffer; identity: string } {
  const fd = fs.openSync(file, 'r');
  try {
    const stats = fs.fstatSync(fd, { bigint: true });
    return { bytes: fs.readFileSync(fd), identity: `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}` };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The cache, when this user wrote it and no one else may change it: it is code that runs, and the
 * aura home may be writable by others (a group, an agent's sandbox) who must not run code as the
 * person who checks the evidence.
 */
function readOwnCache(file: string): Buffer | null {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const stats = fs.fstatSync(fd);
    const uid = process.getuid?.();
    if ((uid !== undefined && stats.uid !== uid) || (stats.mode & 0o022) !== 0) return null;
    return fs.readFileSync(fd);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Writes the cache whole (parallel processes each rename a complete file) and drops the bundle's
 * caches of other builds (`prefix` without `current`). Only into an aura home that exists: a
 * command that writes nothing does not create one.
 */
function writeCache(dir: string, file: string, prefix: string, current: string, data: Buffer): void {
  try {
    if (!fs.existsSync(dir)) fs.mkdirSync(dir, { mode: 0o700 });
    if (!replaceWhole(file, data)) return;
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(prefix) && !name.startsWith(current) && name.endsWith(CACHE_SUFFIX)) removeFile(path.join(dir, name));
    }
  } catch {
    // Without a cache the next process compiles from source, as this one did.
  }
}
