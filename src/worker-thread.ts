/**
 * Worker threads running a module of this package. Built, the module is the `.js` beside its
 * caller; run from the TypeScript sources (tests, benchmarks, under tsx), a worker does not inherit
 * the main thread's loader, so it registers tsx's before it imports the module (a worker's
 * `--import` comes too late on Node 20 for its entry). node:worker_threads is required at the
 * first worker: with the perf_hooks it loads, it costs milliseconds of a start that needs no
 * worker, such as a Claude Code hook's.
 */

import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as WorkerThreads from 'node:worker_threads';
import { parseJson } from './spine/native-json.js';

/** Module `name` beside the module at `from` (its `import.meta.url`), with that module's extension: `.js` built, `.ts` from the sources. */
export function besideModule(name: string, from: string): URL {
  return new URL(`./${name}${path.extname(fileURLToPath(from))}`, from);
}

/** A worker thread running the module at `script`. */
export function startModuleWorker(script: URL, options: WorkerThreads.WorkerOptions = {}): WorkerThreads.Worker {
  const { Worker } = createRequire(import.meta.url)('node:worker_threads') as typeof WorkerThreads;
  if (!script.pathname.endsWith('.ts')) return new Worker(script, options);
  return new Worker(`import(${JSON.stringify(tsxEsmApi())}).then(({ register }) => { register(); return import(${JSON.stringify(script.href)}); });`, { ...options, eval: true });
}

/**
 * Where tsx's ESM API is, from its package's own exports. Not `import.meta.resolve`: the CLI's
 * CommonJS bundle is built from this module, and there `import.meta` is empty.
 */
function tsxEsmApi(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const { exports } = parseJson(fs.readFileSync(manifest, 'utf8')) as { exports: { './esm/api': { import: { default: string } } } };
  return pathToFileURL(path.join(path.dirname(manifest), exports['./esm/api'].import.default)).href;
}
