/**
 * A worker thread of a push: checks the sessions its pool (check-pool.ts) hands it, one at a time,
 * and hands back their rows, the line rows' memory transferred rather than copied.
 */

import { parentPort, workerData } from 'node:worker_threads';
import { KeyRing } from '../../spine/signing.js';
import type { CheckReply, CheckRequest, CheckWorkerData } from './check-pool.js';
import { checkSession } from './ingest-check.js';

const port = parentPort;
if (port === null) throw new Error('check-worker.ts runs as a worker thread of a push');
const data = workerData as CheckWorkerData;
const keys = data.publicKeys.length === 0 ? null : KeyRing.ofPublicKeyTexts(data.publicKeys, data.keysOrigin);

port.on('message', ({ id, task }: CheckRequest) => {
  let reply: CheckReply;
  try {
    reply = { id, checked: checkSession(task, keys) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  const copy = 'checked' in reply && reply.checked.outcome === 'ready' ? reply.checked.write.copy : null;
  port.postMessage(reply, copy === null ? [] : [copy.buffer as ArrayBuffer]);
});
