/**
 * What the fresh-process rows run in a child of their own, so that each run starts as a user's
 * process does (no JIT warmed by the runs before). Prints one JSON line: the figures of the run.
 *
 *   emit <home> <events>   milliseconds of `events` session.emit calls, trail on (close not timed)
 *   verify <trail>         CPU milliseconds of verifyTrail on the trail
 *   write <home>           writes to the store until stopped: an event every few milliseconds,
 *                          a session closed (a seal appended) and a new one opened every second;
 *                          prints {"ready": 1} once the first session is open
 */

import { agent, verifyTrail } from '../../src/index.js';
import { KIND, toolCallPayload } from './payload.js';

const [task, ...args] = process.argv.slice(2);

if (task === 'emit') {
  const [home, events] = [args[0] as string, Number(args[1])];
  const session = agent('bench/emit', { home }).session({ export: false });
  const start = performance.now();
  for (let i = 0; i < events; i++) session.emit(KIND, toolCallPayload(i));
  const ms = performance.now() - start;
  const result = await session.close();
  if (!result.chain.hash_chain_valid || result.chain.events !== events + 3) throw new Error(`the trail did not verify: ${JSON.stringify(result.chain)}`);
  console.log(JSON.stringify({ ms }));
} else if (task === 'verify') {
  const before = process.cpuUsage();
  const report = verifyTrail(args[0] as string);
  const used = process.cpuUsage(before);
  if (!report.hash_chain_valid || !report.complete) throw new Error(`the trail did not verify: ${JSON.stringify(report)}`);
  console.log(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, events: report.events }));
} else if (task === 'write') {
  const writer = agent('bench/writer', { home: args[0] as string });
  let session = writer.session({ fsync: 'none' });
  console.log(JSON.stringify({ ready: 1 }));
  let opened = performance.now();
  for (let n = 0; ; n++) {
    session.emit(KIND, toolCallPayload(n));
    if (performance.now() - opened >= 1000) {
      await session.close();
      session = writer.session({ fsync: 'none' });
      opened = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
} else {
  throw new Error(`unknown task ${String(task)}`);
}
