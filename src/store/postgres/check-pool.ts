/**
 * The worker threads that check a push's sessions (check-worker.ts): one session at a time each,
 * the rest queued in order, so every core checks while the main thread streams checked sessions
 * into the store. Checking costs several times what storing does; on one thread it was the push.
 *
 * A check that throws fails its session with a {@link CheckFailedError}; a worker that dies fails
 * the session it held and every one after it, since the pool is then one short and a push that
 * stops can be run again.
 */

import * as os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { CheckFailedError } from '../../errors.js';
import { besideModule, startModuleWorker } from '../../worker-thread.js';
import type { Checked, CheckTask } from './ingest-check.js';

/** What each worker starts with. */
export interface CheckWorkerData {
  /** The host's trusted public keys (PEM texts); none leaves signatures unchecked. */
  readonly publicKeys: readonly string[];
  /** Names where the keys came from, in messages. */
  readonly keysOrigin: string;
}

/** A session handed to a worker. */
export interface CheckRequest {
  readonly id: number;
  readonly task: CheckTask;
}

/** A worker's answer: the check, or why it threw. */
export type CheckReply = { readonly id: number; readonly checked: Checked } | { readonly id: number; readonly error: string };

/** How a pool starts. */
export interface CheckPoolOptions extends CheckWorkerData {
  /** Worker threads (default one a core but one, at least one, at most 8, at most `sessions`). */
  readonly size?: number;
  /** Sessions to check, when known: no more workers are started than there are sessions. */
  readonly sessions?: number;
  /** The worker's script (default check-worker's, beside this module). */
  readonly script?: URL;
}

interface Pending {
  readonly id: number;
  readonly task: CheckTask;
  readonly resolve: (checked: Checked) => void;
  readonly reject: (error: Error) => void;
}

// Beside this module, with its own extension: `.js` when built, `.ts` when run from the sources.
const WORKER_SCRIPT = besideModule('check-worker', import.meta.url);

/**
 * Sessions a worker holds at once: the one it checks and the next, already there when it is done.
 * With one, a worker waited for its answer to reach the main thread and the next session to come
 * back (a thread wake-up each way, longer while the main thread writes): a push of 10,000 small
 * sessions left each worker idle a third of the time.
 */
const HELD_PER_WORKER = 2;

/**
 * One worker a core but one: the main thread streams every checked row to the store (about a
 * third of a worker's work), and the store is often on the same machine. On two cores, one
 * worker pushes as fast as two did, on a fifth less CPU (docs/benchmarks.md).
 */
function defaultSize(): number {
  return Math.min(Math.max(1, os.availableParallelism() - 1), 8);
}

/** A pool of checking workers; {@link close} it when done. */
export class CheckPool {
  private readonly workers: Worker[] = [];
  /** What each worker holds, in the order it answers. */
  private readonly held = new Map<Worker, Pending[]>();
  private readonly queue: Pending[] = [];
  private next = 0;
  private broken: Error | null = null;
  private started = false;

  constructor(private readonly options: CheckPoolOptions) {}

  /** Starts the workers at the first check: a push with nothing to check starts none. */
  private start(): void {
    const options = this.options;
    const size = Math.max(1, Math.min(options.size ?? defaultSize(), options.sessions ?? Infinity));
    const workerData: CheckWorkerData = { publicKeys: options.publicKeys, keysOrigin: options.keysOrigin };
    for (let i = 0; i < size; i++) {
      const worker = startModuleWorker(options.script ?? WORKER_SCRIPT, { workerData });
      worker.on('message', (reply: CheckReply) => this.answered(worker, reply));
      // A worker's error comes on another port than its answers, and can overtake the answers it
      // sent before it: the session it held is known only at 'exit', once those were taken.
      let error: Error | null = null;
      worker.on('error', (thrown) => (error = thrown));
      worker.on('exit', (code) => this.died(worker, error?.message ?? `the worker thread exited with code ${code}`, error ?? undefined));
      this.workers.push(worker);
      this.held.set(worker, []);
    }
    this.started = true;
  }

  /**
   * Checks a session on the next free worker.
   * @throws CheckFailedError when its check threw, or a worker died
   */
  check(task: CheckTask): Promise<Checked> {
    return new Promise((resolve, reject) => {
      if (this.broken !== null) return reject(this.broken);
      if (!this.started) this.start();
      this.queue.push({ id: this.next++, task, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops the workers; what was still queued fails. */
  async close(): Promise<void> {
    this.broken ??= new CheckFailedError(this.queue[0]?.task.sessionId ?? '-', 'the push stopped');
    const workers = this.workers.splice(0);
    for (const pending of [...[...this.held.values()].flat(), ...this.queue.splice(0)]) pending.reject(new CheckFailedError(pending.task.sessionId, 'the push stopped'));
    this.held.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  /** Hands queued sessions, in order, to the workers holding the fewest. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let worker: Worker | null = null;
      let fewest = HELD_PER_WORKER;
      for (const candidate of this.workers) {
        const count = (this.held.get(candidate) as Pending[]).length;
        if (count < fewest) {
          worker = candidate;
          fewest = count;
        }
      }
      if (worker === null) return;
      const pending = this.queue.shift() as Pending;
      (this.held.get(worker) as Pending[]).push(pending);
      worker.postMessage({ id: pending.id, task: pending.task } satisfies CheckRequest);
    }
  }

  private answered(worker: Worker, reply: CheckReply): void {
    const held = this.held.get(worker);
    const pending = held?.[0];
    if (pending === undefined || pending.id !== reply.id) return;
    held?.shift();
    if ('checked' in reply) pending.resolve(reply.checked);
    else pending.reject(new CheckFailedError(pending.task.sessionId, `its check threw (${reply.error.split('\n')[0] ?? ''})`, reply.error));
    this.dispatch();
  }

  private died(worker: Worker, why: string, cause?: unknown): void {
    const held = this.held.get(worker) ?? [];
    if (this.broken !== null && held.length === 0) return;
    this.held.delete(worker);
    const index = this.workers.indexOf(worker);
    if (index >= 0) this.workers.splice(index, 1);
    const [first, ...after] = held;
    const error = new CheckFailedError(first?.task.sessionId ?? this.queue[0]?.task.sessionId ?? '-', `a worker thread checking sessions died (${why})`, cause);
    this.broken ??= error;
    first?.reject(error);
    for (const pending of [...after, ...this.queue.splice(0)]) pending.reject(new CheckFailedError(pending.task.sessionId, `a worker thread checking sessions died before it (${why})`, cause));
  }
}
