/**
 * Loads `aura hook claude-code` from its one-file bundle (dist/claude-code-hook.cjs, built by
 * scripts/build-hook.mjs) with a V8 code cache: the hook is a process of its own before every tool
 * call a person waits on, and compiling the bundle's 600 kB again each time is a large share of
 * its start. Node 22's module compile cache does this for modules; Node 20 has none, so the
 * bundle is compiled here with `vm.Script`, from `cachedData` kept in the aura home.
 *
 * The cache is named by a hash of the bundle's text, Node's version and the architecture (V8
 * itself checks little more than the text's length): a new build or a new Node never reads an old
 * cache. A cache V8 rejects is written again. It is an optimisation only: a cache that cannot be
 * read or written leaves the hook as it was, compiled from source.
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as vm from 'node:vm';
import { auraHome } from '../config/home.js';
import type { claudeCodeHook } from './hook-claude-code.js';

const BUNDLE = fileURLToPath(new URL('../claude-code-hook.cjs', import.meta.url));
const CACHE_PREFIX = 'claude-code-hook-';
const CACHE_SUFFIX = '.v8cache';

/** The hook, loaded, and what keeps its compiled code for the next process. */
export interface LoadedHook {
  readonly claudeCodeHook: typeof claudeCodeHook;
  /** Writes the code cache when this process had none it could use (call once the hook has answered). */
  saveCache(): void;
}

/** Loads the hook's bundle; `argv` is the hook's own arguments (its `--home` says where the cache is). */
export function loadClaudeCodeHook(argv: readonly string[]): LoadedHook {
  const bytes = fs.readFileSync(BUNDLE);
  const source = bytes.toString('utf8');
  const cacheDir = path.join(auraHome(homeArg(argv)), 'cache');
  const key = createHash('sha256').update(`${process.version}\u0000${process.arch}\u0000`).update(bytes).digest('hex').slice(0, 16);
  const cacheFile = path.join(cacheDir, `${CACHE_PREFIX}${key}${CACHE_SUFFIX}`);
  const cachedData = readOrNull(cacheFile);
  // The wrapper Node puts around a CommonJS module.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: BUNDLE, ...(cachedData === null ? {} : { cachedData }) });
  const module = { exports: {} as { claudeCodeHook?: typeof claudeCodeHook } };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(BUNDLE), module, BUNDLE, path.dirname(BUNDLE));
  const hook = module.exports.claudeCodeHook;
  if (typeof hook !== 'function') throw new Error(`${BUNDLE} has no claudeCodeHook: run npm run build`);
  return {
    claudeCodeHook: hook,
    saveCache: () => {
      if (cachedData !== null && !script.cachedDataRejected) return;
      writeCache(cacheDir, cacheFile, script.createCachedData());
    },
  };
}

/** The value of `--home` among the hook's arguments (the hook checks them all itself). */
function homeArg(argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--home');
  return at === -1 ? undefined : argv[at + 1];
}

function readOrNull(file: string): Buffer | null {
  try {
    return fs.readFileSync(file);
  } catch {
    return null;
  }
}

/** Writes the cache whole (parallel hooks each rename a complete file) and drops older ones. */
function writeCache(dir: string, file: string, data: Buffer): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const partial = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(partial, data, { mode: 0o600 });
    fs.renameSync(partial, file);
    for (const name of fs.readdirSync(dir)) {
      if (name.startsWith(CACHE_PREFIX) && name.endsWith(CACHE_SUFFIX) && name !== path.basename(file)) fs.rmSync(path.join(dir, name), { force: true });
    }
  } catch {
    // Without a cache the next hook compiles from source, as this one did.
  }
}
