/**
 * A real PostgreSQL for the fleet store's tests: each test file gets its own database, dropped
 * when the file is done. The server is the one at AURA_TEST_PG (default: trust auth on
 * 127.0.0.1:5432 as `postgres`, which .ci/run sets up where none runs).
 */

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll } from 'vitest';

/** The maintenance database URL of the test server. */
export const PG_ADMIN_URL = process.env['AURA_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const made: string[] = [];
const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => undefined, idle_timeout: 5 });

// Dropping a database takes a checkpoint: a second or more on a busy machine.
afterAll(async () => {
  for (const name of made) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
}, 120_000);

/** A new empty database; returns its URL. */
export async function tempDatabase(): Promise<string> {
  const name = `aura_test_${randomBytes(6).toString('hex')}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  made.push(name);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A client of `url` for the test's own queries (as the superuser that can bypass the triggers). */
export function client(url: string): postgres.Sql {
  const sql = postgres(url, { max: 2, onnotice: () => undefined, idle_timeout: 5 });
  afterAll(() => sql.end({ timeout: 5 }));
  return sql;
}

/** A role name unique to this run (roles are shared by every database of the server). */
export function roleName(what: string): string {
  return `aura_test_${what}_${randomBytes(4).toString('hex')}`;
}

/** Drops test roles (after the databases that reference them). */
export async function dropRoles(names: readonly string[]): Promise<void> {
  for (const name of made) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  made.length = 0;
  for (const role of names) await admin.unsafe(`DROP ROLE IF EXISTS ${role}`);
}
