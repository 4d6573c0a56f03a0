/**
 * Pushes an aura home's sessions into a store, in a process of its own: the pushes that go on
 * while the fleet scenario measures the findings channel. `push-child.ts <store url> <home> <host>`.
 */

import * as path from 'node:path';
import { openStore } from '../../src/store/postgres/connection.js';
import { pushSessions } from '../../src/store/push.js';

const [url, home, host] = process.argv.slice(2) as [string, string, string];
const store = openStore(url, { applicationName: 'aura bench pusher' });
const report = await pushSessions(store, { sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl'), keysDir: path.join(home, 'keys'), host, ids: null });
await store.sql.end({ timeout: 5 });
process.stdout.write(`${JSON.stringify(report.counts)}\n`);
