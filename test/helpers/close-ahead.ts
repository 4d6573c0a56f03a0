/** The close-ahead thread seen from outside, for tests and their fixtures (no test runner needed). */

import * as fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits, up to `ms`, for the close-ahead thread to stage spans beside `otel` (it reads in the
 * session's pauses, and starts late on a machine busy with other tests). The thread makes the
 * file before it writes to it: staged means some spans are in it.
 * @returns the staging file's path once it holds spans, or null
 */
export async function stagedSpans(otel: string, ms = 30_000): Promise<string | null> {
  const staging = `${otel}.staging`;
  const holdsSpans = (): boolean => (fs.statSync(staging, { throwIfNoEntry: false })?.size ?? 0) > 0;
  for (let waited = 0; !holdsSpans() && waited < ms; waited += 50) await sleep(50);
  return holdsSpans() ? staging : null;
}
