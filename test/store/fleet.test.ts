/**
 * The fleet store against a real PostgreSQL: push, pull, follow, a store stopped mid-push,
 * concurrent pushers, forged and conflicting sessions, a superuser editing rows, and the readers.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent } from '../../src/session/agent.js';
import { KeyRing } from '../../src/spine/signing.js';
import { openStore } from '../../src/store/postgres/connection.js';
import { AURA_BIN, aura, auraAsync, auraJson } from '../helpers/cli.js';
import { client, dropRoles, roleName, tempDatabase } from '../helpers/postgres.js';
import { pythonVerify } from '../helpers/python.js';
import { lines, rehash } from '../helpers/sessions.js';
import { anchoredHome, tempDir } from '../helpers/temp.js';
import { CLIENT_KEY_PASSPHRASE, TLS_FIXTURES, tlsRelay } from '../helpers/tls-relay.js';

/** A host: an AURA_HOME with closed sessions, signed when asked. */
async function host(ref: string, sessions: number, options: { readonly events?: number; readonly signed?: boolean } = {}): Promise<{ home: string; ids: string[] }> {
  const home = tempDir('aura-fleet-');
  if (options.signed === true) KeyRing.generate(path.join(home, 'keys'));
  const ag = agent(ref, { home });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const session = ag.session({ fsync: 'none' });
    for (let j = 0; j < (options.events ?? 6); j++) session.emit('tool.call', { tool: 'search', args: { q: `query ${i}.${j}`, text: 'naïve café ✓' } });
    ids.push((await session.close()).session_id);
  }
  return { home, ids };
}

const trail = (home: string, id: string): string => path.join(home, 'sessions', `${id}.jsonl`);
const summary = (home: string, id: string): string => path.join(home, 'sessions', `${id}.summary.json`);

async function initialized(): Promise<string> {
  const url = await tempDatabase();
  const init = auraJson(['store', 'init', '--store', url, '--ingest-role', ingestRole, '--reader-role', readerRole]);
  expect(init.status, init.stderr).toBe(0);
  return url;
}

/** A new store holding one signed host's `sessions` sessions of `events` events, pushed and verified, and a superuser's client of it. */
async function verifiedStore(ref: string, sessions: number, events: number): Promise<{ url: string; ids: string[]; sql: ReturnType<typeof client> }> {
  const url = await initialized();
  const { home, ids } = await host(ref, sessions, { events, signed: true });
  expect(aura(['--home', home, 'push', '--all', '--store', url]).status).toBe(0);
  expect(auraJson(['verify', 'store', '--store', url]).json).toMatchObject({ ok: true, counts: { verified: sessions } });
  return { url, ids, sql: client(url) };
}

const ingestRole = roleName('ingest');
const readerRole = roleName('reader');
const pusherLogin = roleName('pusher');
const auditorLogin = roleName('auditor');
afterAll(() => dropRoles([pusherLogin, auditorLogin, ingestRole, readerRole]), 60_000);

describe('aura store init', () => {
  it('creates the schema once, then finds it current, and its tables refuse updates and deletes', async () => {
    const url = await tempDatabase();
    const first = auraJson(['store', 'init', '--store', url, '--ingest-role', ingestRole, '--reader-role', readerRole]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ from_version: 0, to_version: 6, applied: [{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }, { version: 6 }] });
    const again = auraJson(['store', 'init', '--store', url, '--ingest-role', ingestRole, '--reader-role', readerRole]);
    expect(again.json).toMatchObject({ from_version: 6, to_version: 6, applied: [] });
    const sql = client(url);
    await expect(sql`UPDATE aura.schema_version SET name = 'x'`).rejects.toThrow(/append-only: UPDATE/);
    await expect(sql`DELETE FROM aura.schema_version`).rejects.toThrow(/append-only: DELETE/);
    await expect(sql`TRUNCATE aura.pushes`).rejects.toThrow(/append-only: TRUNCATE/);
    // Autovacuum comes to the tables readers scan after a hundredth of new rows, not a fifth.
    const tuned = await sql<{ relname: string; reloptions: string[] | null }[]>`
      SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'aura' AND c.relkind = 'r' ORDER BY c.relname`;
    expect(tuned.filter((t) => t.reloptions?.includes('autovacuum_vacuum_insert_scale_factor=0.01') === true).map((t) => t.relname)).toEqual(['checks', 'closes', 'findings', 'lines', 'sessions']);
  });

  it('migrates a version 1 store to version 6: its rows kept, still append-only, first lines indexed, its closes pushed without reading the seal log and checked against no anchor copy; a line without its session is reported by verify', async () => {
    const url = await initialized();
    const a = await host('acme/migrated', 3);
    expect(aura(['--home', a.home, 'push', '--all', '--store', url]).status).toBe(0);
    const sql = client(url);
    // Version 1 as it was: a foreign key from every line to its session, the chain links copied beside each line, no index of first lines.
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`DELETE FROM aura.schema_version WHERE version > 1`;
      await tx`DROP INDEX aura.lines_first, aura.lines_naming_another`;
      await tx`DROP FUNCTION aura.line_session_id(bytea)`;
      await tx`DROP TRIGGER checks_of_stored_extent ON aura.checks`;
      await tx`DROP FUNCTION aura.check_of_stored_extent()`;
      await tx`DROP TRIGGER refusals_once ON aura.refusals`;
      await tx`DROP TRIGGER closes_of_stored_lines ON aura.closes`;
      await tx`DROP FUNCTION aura.close_of_stored_lines()`;
      await tx`DROP FUNCTION aura.refusal_once()`;
      await tx`DROP INDEX aura.refusals_by_session`;
      await tx`ALTER TABLE aura.lines ADD COLUMN prev_hash text, ADD COLUMN content_hash text`;
      await tx`ALTER TABLE aura.lines ADD CONSTRAINT lines_session_id_fkey FOREIGN KEY (session_id) REFERENCES aura.sessions`;
      await tx`ALTER TABLE aura.closes DROP CONSTRAINT closes_anchor_disagreement, DROP COLUMN log_read, DROP COLUMN anchored, DROP COLUMN anchor_disagreement`;
    });
    const old = aura(['--home', a.home, 'push', '--all', '--store', url]);
    expect(old.status).toBe(2);
    expect(old.stderr).toMatch(/schema is version 1, older than this aura's \(6\): run aura store init/);
    const lineCount = async (): Promise<unknown> => (await sql`SELECT count(*)::int AS n FROM aura.lines`)[0];
    const before = await lineCount();
    const migrated = auraJson(['store', 'init', '--store', url, '--ingest-role', ingestRole, '--reader-role', readerRole]);
    expect(migrated.status, migrated.stderr).toBe(0);
    expect(migrated.json).toMatchObject({ from_version: 1, to_version: 6, applied: [{ version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }, { version: 6 }] });
    expect(await lineCount()).toEqual(before);
    expect(await sql`SELECT DISTINCT log_read, anchored, anchor_disagreement FROM aura.closes`).toEqual([{ log_read: false, anchored: false, anchor_disagreement: null }]);
    expect(await sql`SELECT conname FROM pg_constraint WHERE conrelid = 'aura.lines'::regclass AND contype = 'f'`).toEqual([]);
    expect(await sql`SELECT tgname FROM pg_trigger WHERE tgrelid = 'aura.lines'::regclass AND NOT tgisinternal ORDER BY tgname`).toEqual([{ tgname: 'lines_append_only' }, { tgname: 'lines_no_truncate' }]);
    const columns = await sql<{ attname: string }[]>`SELECT attname FROM pg_attribute WHERE attrelid = 'aura.lines'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`;
    expect(columns.map((c) => c.attname)).toEqual(['session_id', 'line_no', 'line', 'event_id', 'kind', 'ts']);
    const indexes = await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = 'aura' AND tablename = 'lines' ORDER BY indexname`;
    expect(indexes.map((i) => i.indexname)).toEqual(['lines_first', 'lines_naming_another', 'lines_pkey']);
    await expect(sql`UPDATE aura.lines SET kind = 'x'`).rejects.toThrow(/append-only: UPDATE/);
    await expect(sql`DELETE FROM aura.lines`).rejects.toThrow(/append-only: DELETE/);
    expect(auraJson(['--home', a.home, 'push', '--all', '--store', url]).json['counts']).toMatchObject({ present: 3 });
    const b = await host('acme/migrated-next', 2);
    expect(auraJson(['--home', b.home, 'push', '--all', '--store', url]).json['counts']).toMatchObject({ stored: 2 });
    expect(auraJson(['verify', 'store', '--store', url]).json).toMatchObject({ ok: true, counts: { intact: 5 } });
    // Nothing in the database stops a line that names no stored session any more: verify does.
    await sql`INSERT INTO aura.lines (session_id, line_no, line) VALUES ('aura_sess_00000000dead', 1, ${Buffer.from('{}\n')})`;
    const orphan = auraJson(['verify', 'store', '--store', url]);
    expect(orphan.status).toBe(1);
    expect(orphan.json['ok']).toBe(false);
    expect(orphan.json['sessions']).toContainEqual(expect.objectContaining({ session_id: 'aura_sess_00000000dead', status: 'damaged', reason: 'rows', message: expect.stringMatching(/no record of/) }));
  });

  it('gives the ingest role insert without update or delete, and the reader role nothing but reads', async () => {
    const url = await initialized();
    const a = await host('acme/roles', 2);
    const sql = client(url);
    // Login roles granted the two roles, as docs/fleet.md sets them up: a host pushes, an auditor reads.
    await sql.unsafe(`CREATE ROLE ${pusherLogin} LOGIN IN ROLE ${ingestRole}`);
    await sql.unsafe(`CREATE ROLE ${auditorLogin} LOGIN IN ROLE ${readerRole}`);
    const as = (login: string): string => Object.assign(new URL(url), { username: login }).toString();
    const pushed = auraJson(['--home', a.home, 'push', '--all', '--store', as(pusherLogin)]);
    expect(pushed.status, pushed.stderr).toBe(0);
    expect(pushed.json['counts']).toMatchObject({ stored: 2 });
    expect(auraJson(['--home', a.home, 'push', '--all', '--store', as(pusherLogin)]).json['counts']).toMatchObject({ present: 2 });
    expect(auraJson(['verify', 'store', '--store', as(auditorLogin)]).json).toMatchObject({ ok: true, counts: { intact: 2 } });
    const denied = aura(['--home', a.home, 'push', '--all', '--store', as(auditorLogin)]);
    expect(denied.status).toBe(2);
    expect(denied.stderr).toMatch(/permission denied/);
    for (const statement of ['SELECT line FROM aura.lines LIMIT 1', `UPDATE aura.lines SET kind = 'x'`, 'DELETE FROM aura.lines', 'TRUNCATE aura.lines']) {
      await expect(sql.begin(async (tx) => [await tx.unsafe(`SET LOCAL ROLE ${ingestRole}`), await tx.unsafe(statement)])).rejects.toThrow(/permission denied/);
    }
    await sql.begin(async (tx) => {
      await tx.unsafe(`SET LOCAL ROLE ${ingestRole}`);
      await tx`INSERT INTO aura.pushes (host, sessions, lines) VALUES ('h', 0, 0)`;
    });
    await expect(sql.begin(async (tx) => [await tx.unsafe(`SET LOCAL ROLE ${readerRole}`), await tx`INSERT INTO aura.pushes (host, sessions, lines) VALUES ('h', 0, 0)`])).rejects.toThrow(/permission denied/);
    const [read] = await sql.begin(async (tx) => [await tx.unsafe(`SET LOCAL ROLE ${readerRole}`), await tx`SELECT count(*)::int AS n FROM aura.lines`]);
    expect(read).toBeDefined();
    // A pusher's check of another host's session, for lines the store does not hold or closed without its close record, is refused: the latest check stays the one pushed.
    const [id, other] = a.ids as [string, string];
    const forge = (lines: number, closed: boolean): Promise<unknown> =>
      sql.begin(async (tx) => [
        await tx.unsafe(`SET LOCAL ROLE ${ingestRole}`),
        await tx`INSERT INTO aura.checks (session_id, lines, closed, trail_sha256, status, verdict, events, hash_chain_valid, complete, signatures, detail) VALUES (${id}, ${lines}, ${closed}, 'x', 'verified', 'pass', ${lines}, true, true, 'verified', '{}')`,
      ]);
    const stored = lines(trail(a.home, id)).length;
    for (const [n, closed] of [[999_999, true], [999_999, false], [stored, false]] as const) await expect(forge(n, closed)).rejects.toThrow(/a check of session .* where the store holds/);
    await expect(forge(stored, true)).rejects.toThrow(/duplicate key/);
    const before = auraJson(['sessions', 'list', '--store', as(auditorLogin)]).json['sessions'] as { session_id: string; verdict: string }[];
    expect(before.find((row) => row.session_id === id)?.verdict).toBe(before.find((row) => row.session_id === other)?.verdict);
  });

  it('gives up on a port that takes the connection and drops it (a tunnel whose far end is down) with a clear error, not a retry without end', async () => {
    // Each connection ended at once, and let go of on this side too: the client opens them by the thousand.
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(() => socket.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const started = performance.now();
      const runs = await Promise.all([['sessions', 'list'], ['store', 'init']].map((command) => auraAsync([...command, '--store', `postgres://someone:pw-not-shown@127.0.0.1:${port}/db`])));
      for (const run of runs) {
        expect(run.status).toBe(2);
        expect(run.stderr).toMatch(/cannot connect \(no answer within 15 s|the connection was lost/);
        expect(run.stderr).not.toContain('pw-not-shown');
      }
      expect(performance.now() - started).toBeLessThan(40_000);
    } finally {
      server.close();
    }
  }, 60_000);

  it('refuses a store without the schema with a clear error, and never prints the password', async () => {
    const url = await tempDatabase();
    const run = aura(['sessions', 'list', '--store', url]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/no aura schema yet: run aura store init/);
    const secret = 'pw-that-must-not-show';
    const refused = aura(['push', '--all', '--store', `postgres://someone:${secret}@127.0.0.1:1/db`]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/cannot connect/);
    expect(refused.stderr).toContain('someone:***@127.0.0.1:1');
    expect(refused.stderr + refused.stdout).not.toContain(secret);
    // A password with a stray '%' (not percent-encoded) is a usage error that says so, and shows it not.
    const stray = aura(['sessions', 'list', '--store', 'postgres://someone:se%cret-pw@127.0.0.1:1/db']);
    expect(stray.status).toBe(2);
    expect(stray.stderr).toMatch(/percent-encoded/);
    expect(stray.stderr).not.toContain('cret-pw');
    const same = aura(['store', 'init', '--store', url, '--ingest-role', 'aura_both', '--reader-role', 'aura_both']);
    expect(same.status).toBe(2);
    expect(same.stderr).toMatch(/the ingest and reader roles are both aura_both/);
  });

  it('takes what the URL leaves out from the PG* variables, and never prints PGPASSWORD', async () => {
    const url = await initialized();
    const target = new URL(url);
    const env = { PGHOST: target.hostname, PGPORT: target.port || '5432', PGUSER: target.username, PGPASSWORD: 'pg-password-not-shown' };
    const run = await auraAsync(['sessions', 'list', '--json', '--store', `postgres:///${target.pathname.slice(1)}`], { env });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sessions: [] });
    const refused = await auraAsync(['sessions', 'list', '--store', 'postgres:///no_such_database_here'], { env });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/cannot connect/);
    expect(refused.stderr + refused.stdout).not.toContain('pg-password-not-shown');
  });

  it("reads libpq's connection parameters from the URL's query over the PG* variables, sends none to the server as a setting, and never prints the password", async () => {
    const url = await initialized();
    const target = new URL(url);
    const query = new URLSearchParams({ host: target.hostname, port: target.port || '5432', user: target.username, dbname: target.pathname.slice(1), password: 'query-password-not-shown' });
    const env = { PGHOST: '/nonexistent', PGPORT: '1', PGUSER: 'nobody', PGDATABASE: 'no_such_database_here' };
    const run = await auraAsync(['sessions', 'list', '--json', '--store', `postgres:///?${query}`], { env });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sessions: [] });
    // The query's database is taken over the path's, as libpq takes it.
    query.set('dbname', 'no_such_database_here');
    const refused = await auraAsync(['sessions', 'list', '--store', `postgres://${target.host}/${target.pathname.slice(1)}?${query}`], { env });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/database "no_such_database_here" does not exist/);
    expect(refused.stderr + refused.stdout + run.stderr).not.toContain('query-password-not-shown');
    expect(aura(['sessions', 'list', '--store', `${url}?port=99999`])).toMatchObject({ status: 2, stderr: expect.stringMatching(/invalid port "99999": expected a port number/) });
  });

  it('passes TLS settings through: a server without TLS refuses sslmode=require, and a bad setting is named', async () => {
    const url = new URL(await tempDatabase());
    url.searchParams.set('sslmode', 'require');
    expect(aura(['sessions', 'list', '--store', url.toString()])).toMatchObject({ status: 2, stderr: expect.stringMatching(/cannot connect over TLS/) });
    url.searchParams.set('sslmode', 'verify-full');
    url.searchParams.set('sslrootcert', '/nonexistent/root.crt');
    expect(aura(['sessions', 'list', '--store', url.toString()])).toMatchObject({ status: 2, stderr: expect.stringMatching(/invalid sslrootcert "\/nonexistent\/root.crt"/) });
    url.searchParams.set('sslmode', 'bogus');
    expect(aura(['sessions', 'list', '--store', url.toString()])).toMatchObject({ status: 2, stderr: expect.stringMatching(/invalid sslmode "bogus"/) });
    url.searchParams.set('sslmode', 'disable');
    url.searchParams.delete('sslrootcert');
    expect(aura(['sessions', 'list', '--store', url.toString()])).toMatchObject({ status: 2, stderr: expect.stringMatching(/no aura schema yet/) });
  });
  it('reaches a store over TLS with a client certificate whose key opens with sslpassword, and names a key that does not open', async () => {
    const url = new URL(await initialized());
    const relay = await tlsRelay(url.toString());
    try {
      url.host = `localhost:${relay.port}`;
      url.searchParams.set('sslmode', 'verify-full');
      url.searchParams.set('sslrootcert', path.join(TLS_FIXTURES, 'ca.crt'));
      url.searchParams.set('sslcert', path.join(TLS_FIXTURES, 'client.crt'));
      url.searchParams.set('sslkey', path.join(TLS_FIXTURES, 'client.key'));
      url.searchParams.set('sslpassword', CLIENT_KEY_PASSPHRASE);
      const listed = await auraAsync(['sessions', 'list', '--json', '--store', url.toString()]);
      expect(listed.status, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject({ sessions: [] });
      expect(relay.clients.length).toBeGreaterThan(0);
      expect(new Set(relay.clients)).toEqual(new Set(['aura-test-client']));
      expect(listed.stdout + listed.stderr).not.toContain(CLIENT_KEY_PASSPHRASE);
      const seen = relay.clients.length;
      url.searchParams.set('sslpassword', 'not-the-passphrase');
      const wrong = await auraAsync(['sessions', 'list', '--store', url.toString()]);
      expect(wrong.status).toBe(2);
      expect(wrong.stderr).toMatch(/invalid sslpassword "\(not shown\)": expected the passphrase of .*client\.key, which does not open it/);
      expect(wrong.stderr + wrong.stdout).not.toContain('not-the-passphrase');
      url.searchParams.delete('sslpassword');
      const missing = await auraAsync(['sessions', 'list', '--store', url.toString()]);
      expect(missing.status).toBe(2);
      expect(missing.stderr).toMatch(/invalid sslkey ".*client\.key": expected a key that opens: it is encrypted, give its passphrase as sslpassword/);
      // Neither reached the server: the key is opened before any connection.
      expect(relay.clients.length).toBe(seen);
    } finally {
      await relay.close();
    }
  });
});

describe('aura push and aura pull', () => {
  let url: string;
  let a: { home: string; ids: string[] };
  beforeAll(async () => {
    url = await initialized();
    a = await host('acme/pusher', 3, { signed: true });
  });

  it('stores closed sessions whole, and a second push stores nothing twice', async () => {
    const first = auraJson(['--home', a.home, 'push', '--all', '--store', url]);
    expect(first.status, first.stderr).toBe(0);
    expect(first.json['counts']).toEqual({ stored: 3, present: 0, open: 0, refused: 0 });
    const sql = client(url);
    const count = async (): Promise<unknown> => (await sql`SELECT (SELECT count(*)::int FROM aura.sessions) AS s, (SELECT count(*)::int FROM aura.lines) AS l, (SELECT count(*)::int FROM aura.checks) AS c`)[0];
    const before = await count();
    const expectedLines = a.ids.reduce((n, id) => n + lines(trail(a.home, id)).length, 0);
    expect(before).toEqual({ s: 3, l: expectedLines, c: 3 });
    const second = auraJson(['--home', a.home, 'push', '--all', '--store', url]);
    expect(second.json['counts']).toEqual({ stored: 0, present: 3, open: 0, refused: 0 });
    expect(await count()).toEqual(before);
    const statuses = await sql<{ status: string; signatures: string }[]>`SELECT status, signatures FROM aura.checks`;
    expect(statuses.every((s) => s.status === 'verified' && s.signatures === 'verified')).toBe(true);
  });

  it('pulls a session back byte for byte, and Python Aura accepts the trail', async () => {
    const out = tempDir('aura-pull-');
    const id = a.ids[1] as string;
    const pulled = auraJson(['pull', id, '--store', url, '-o', out]);
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(fs.readFileSync(path.join(out, `${id}.jsonl`)).equals(fs.readFileSync(trail(a.home, id)))).toBe(true);
    expect(fs.readFileSync(path.join(out, `${id}.summary.json`)).equals(fs.readFileSync(summary(a.home, id)))).toBe(true);
    expect(pythonVerify(path.join(out, `${id}.jsonl`))).toMatchObject({ valid: true, events: lines(trail(a.home, id)).length });
    expect(auraJson(['pull', id, '--store', url, '-o', out]).json['written']).toEqual([]);
    fs.appendFileSync(path.join(out, `${id}.jsonl`), '\n');
    const clash = aura(['pull', id, '--store', url, '-o', out]);
    expect(clash.status).toBe(2);
    expect(clash.stderr).toMatch(/exists with other bytes/);
    const file = path.join(tempDir(), 'a-file');
    fs.writeFileSync(file, '');
    expect(aura(['pull', id, '--store', url, '-o', file]).stderr).toContain(`cannot mkdir ${file}: a part of the path is a file, not a folder (ENOTDIR)`);
  });

  it('stores a session holding U+0000 (a tool named with it, its findings quoting it) beside the others, its bytes whole; a host name is letters, digits and dots', async () => {
    const b = await host('acme/nul', 1);
    const session = agent('acme/nul', { home: b.home, rules: [{ type: 'deny_tools', tools: ['shell*'] }] }).session({ fsync: 'none' });
    await expect(session.tool('shell\u0000exec', { cmd: 'x\u0000y' }, () => 'ran')).rejects.toThrow(/denied|not allowed/i);
    session.emit('tool\u0000call', { tool: 'a\u0000b' });
    const nul = (await session.close()).session_id;
    const run = auraJson(['--home', b.home, 'push', '--all', '--store', url]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.json['counts']).toEqual({ stored: 2, present: 0, open: 0, refused: 0 });
    const out = tempDir('aura-pull-');
    expect(auraJson(['pull', nul, '--store', url, '-o', out]).status).toBe(0);
    expect(fs.readFileSync(path.join(out, `${nul}.jsonl`)).equals(fs.readFileSync(trail(b.home, nul)))).toBe(true);
    const stored = await client(url)<{ kind: string }[]>`SELECT kind FROM aura.lines WHERE session_id = ${nul} AND kind LIKE 'tool%call'`;
    expect(stored.map((row) => row.kind)).toContain('tool\ufffdcall');
    for (const name of ['evil\u001b[2J', 'a b', 'x/../y']) {
      const refused = aura(['--home', b.home, 'push', '--all', '--store', url, '--host', name]);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/invalid --host/);
      expect(refused.stderr).not.toContain('\u001b');
    }
  });

  it('pushes only the sessions named, refuses a hostile id (pull and the reports too, before reaching the store), and reports a live session as open', async () => {
    const b = await host('acme/named', 2);
    const hostile = aura(['--home', b.home, 'push', '../x', '--store', url]);
    expect(hostile.status).toBe(2);
    expect(hostile.stderr).toMatch(/invalid session id/);
    // The readers of one session say so before they reach the store: here one nothing listens for.
    for (const command of [['pull'], ['report', 'show'], ['report', 'html']]) {
      const refused = aura(['--home', b.home, ...command, '../x', '--store', 'postgres://127.0.0.1:1/nowhere']);
      expect([command, refused.status, refused.stderr]).toEqual([command, 2, expect.stringMatching(/invalid session id "\.\.\/x"/)]);
    }
    const live = agent('acme/named', { home: b.home }).session();
    live.emit('tool.call', { tool: 'x' });
    const run = auraJson(['--home', b.home, 'push', b.ids[0] as string, live.id, '--store', url]);
    expect(run.json['counts']).toEqual({ stored: 1, present: 0, open: 1, refused: 0 });
    await live.close();
  });
});

describe('aura push --follow', () => {
  it("ships a live session as it grows, then closes it in the store with its seal-log entry and its anchor copy's word on it", async () => {
    const url = await initialized();
    const { home } = anchoredHome(tempDir('aura-follow-'));
    const sql = client(url);
    const follower = spawn(process.execPath, [AURA_BIN, '--home', home, 'push', '--follow', '--interval', '50', '--store', url, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    follower.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => follower.on('close', resolve));
    const session = agent('acme/follow', { home }).session();
    const stored = async (): Promise<number> => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM aura.lines WHERE session_id = ${session.id}`)[0]?.n ?? 0;
    const until = async (what: () => Promise<boolean>): Promise<void> => {
      for (let i = 0; i < 400 && !(await what()); i++) await sleep(50);
      expect(await what(), stderr).toBe(true);
    };
    session.emit('tool.call', { tool: 'step', n: 1 });
    await until(async () => (await stored()) >= 3);
    const [open] = await sql<{ status: string; closed: boolean }[]>`SELECT status, closed FROM aura.checks WHERE session_id = ${session.id} ORDER BY id DESC LIMIT 1`;
    expect(open).toEqual({ status: 'open', closed: false });
    // Every reader of the store says so, as verify_session does: the report too, not `incomplete`.
    const report = auraJson(['report', 'show', session.id, '--store', url]);
    expect(report.json, JSON.stringify(report.json)).toMatchObject({ session_id: session.id, status: 'open' });
    if (process.platform === 'linux') {
      // The push yields the CPU (niceness 10 by default), and so does the worker thread that checked the session.
      const niceness = fs.readdirSync(`/proc/${follower.pid}/task`).map((tid) => Number(fs.readFileSync(`/proc/${follower.pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]));
      expect(niceness.filter((n) => n === 10).length, JSON.stringify(niceness)).toBeGreaterThanOrEqual(2);
      expect(Number(fs.readFileSync(`/proc/${follower.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16])).toBe(10);
    }
    for (let i = 2; i <= 5; i++) session.emit('tool.call', { tool: 'step', n: i });
    await until(async () => (await stored()) >= 7);
    await session.close();
    await until(async () => (await sql`SELECT 1 FROM aura.closes WHERE session_id = ${session.id}`).length === 1);
    expect(await stored()).toBe(lines(trail(home, session.id)).length);
    // It closed after the follow began: its seal is read from the log as it is then.
    expect(await sql`SELECT seal_entry IS NOT NULL AS sealed, log_read, anchored, anchor_disagreement FROM aura.closes WHERE session_id = ${session.id}`).toEqual([{ sealed: true, log_read: true, anchored: true, anchor_disagreement: null }]);
    follower.kill('SIGTERM');
    expect(await exited).toBe(0);
    const verify = auraJson(['verify', 'store', '--store', url]);
    expect(verify.status, JSON.stringify(verify.json)).toBe(0);
    expect(verify.json['sessions']).toEqual([expect.objectContaining({ session_id: session.id, status: 'intact' })]);
  });
});

describe('a push the store stops in the middle', () => {
  it('fails with a clear error, stores nothing half, and the next push completes', async () => {
    const url = await initialized();
    const a = await host('acme/stopped', 8, { events: 40 });
    expect(aura(['--home', a.home, 'push', a.ids[0] as string, '--store', url]).status).toBe(0);
    const sql = client(url);
    // Hold the close records: the pusher's next transaction stops inside, after its session row and lines.
    const holder = client(url);
    const release = holder.begin(async (tx) => {
      await tx`LOCK TABLE aura.closes IN EXCLUSIVE MODE`;
      const push = auraAsync(['--home', a.home, 'push', '--all', '--store', url]);
      let waiting: { pid: number }[] = [];
      for (let i = 0; i < 400 && waiting.length === 0; i++) {
        await sleep(25);
        waiting = await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'aura push' AND wait_event_type = 'Lock'`;
      }
      expect(waiting.length).toBeGreaterThan(0);
      // Only this test's database: other pushes on the server are none of its business.
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'aura push'`;
      return push;
    });
    const run = await release;
    expect(run.status, run.stderr + run.stdout).toBe(2);
    expect(run.stderr).toMatch(/the connection was lost .*run the command again/);
    const half = await sql`SELECT s.session_id FROM aura.sessions s LEFT JOIN aura.closes c USING (session_id) WHERE c.session_id IS NULL`;
    expect(half).toEqual([]);
    const uneven = await sql`SELECT c.session_id FROM aura.closes c WHERE c.lines <> (SELECT count(*) FROM aura.lines l WHERE l.session_id = c.session_id)`;
    expect(uneven).toEqual([]);
    const again = auraJson(['--home', a.home, 'push', '--all', '--store', url]);
    expect(again.status, again.stderr).toBe(0);
    expect((await sql`SELECT count(*)::int AS n FROM aura.closes`)[0]).toEqual({ n: 8 });
    expect(auraJson(['verify', 'store', '--store', url]).json).toMatchObject({ ok: true, counts: { intact: 8 } });
  });
});

describe("a host whose seal log breaks", () => {
  it('is read by the push as the folder reads it: a seal after the break seals nothing, in the store as on the host', async () => {
    const url = await initialized();
    const { home, ids } = await host('acme/broken-log', 3);
    const log = path.join(home, 'seals.jsonl');
    const [first, ...rest] = fs.readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    fs.writeFileSync(log, [first, 'not an entry', ...rest, ''].join('\n'));
    const local = auraJson(['verify', 'store'], { home });
    const pushed = auraJson(['push', '--all', '--store', url], { home });
    expect(pushed.status, pushed.stderr).toBe(0);
    const stored = auraJson(['verify', 'store', '--store', url]);
    const statusOf = (report: Record<string, unknown>, id: string): unknown => (report['sessions'] as Record<string, unknown>[]).find((s) => s['session_id'] === id)?.['status'];
    for (const id of ids) expect([id, statusOf(stored.json, id)]).toEqual([id, statusOf(local.json, id)]);
    expect(ids.map((id) => statusOf(stored.json, id))).toEqual(['intact', 'unsealed', 'unsealed']);
  });
});

describe('two hosts pushing at once', () => {
  it('store each session once and whole', async () => {
    const url = await initialized();
    const [a, b] = await Promise.all([host('acme/one', 12, { events: 20 }), host('acme/two', 12, { events: 20 })]);
    const runs = await Promise.all([
      auraAsync(['--home', a.home, 'push', '--all', '--host', 'one', '--store', url]),
      auraAsync(['--home', b.home, 'push', '--all', '--host', 'two', '--store', url]),
      auraAsync(['--home', a.home, 'push', '--all', '--host', 'one', '--store', url]),
      auraAsync(['--home', b.home, 'push', '--all', '--host', 'two', '--store', url]),
    ]);
    for (const run of runs) expect(run.status, run.stderr).toBe(0);
    const sql = client(url);
    expect((await sql`SELECT count(*)::int AS n FROM aura.sessions`)[0]).toEqual({ n: 24 });
    expect((await sql`SELECT count(*)::int AS n FROM aura.refusals`)[0]).toEqual({ n: 0 });
    const perSession = await sql<{ session_id: string; host: string; n: number }[]>`SELECT s.session_id, s.host, count(l.*)::int AS n FROM aura.sessions s JOIN aura.lines l USING (session_id) GROUP BY 1, 2`;
    for (const row of perSession) expect(row.n).toBe(lines(trail(row.host === 'one' ? a.home : b.home, row.session_id)).length);
    expect(auraJson(['verify', 'store', '--store', url]).json).toMatchObject({ ok: true, counts: { intact: 24 } });
  });
});

describe('sessions the store refuses', () => {
  it('refuses a session whose events name another session, and one whose bytes differ from the stored one', async () => {
    const url = await initialized();
    const a = await host('acme/honest', 1);
    const id = a.ids[0] as string;
    expect(aura(['--home', a.home, 'push', '--all', '--store', url]).status).toBe(0);
    // A forged id: another session's trail under a new name.
    const forger = await host('acme/forger', 1);
    const forged = 'aura_sess_0000000f0e9d';
    fs.copyFileSync(trail(forger.home, forger.ids[0] as string), trail(forger.home, forged));
    // A conflict: the honest session's id, its chain rewritten and rehashed.
    const rewritten = lines(trail(a.home, id)).map((line) => line.replace('query 0.1', 'query 9.9'));
    fs.writeFileSync(trail(forger.home, id), `${rehash(rewritten).join('\n')}\n`);
    // Written a while ago: a trail with no summary that changed a moment ago is taken for one still closing.
    const earlier = new Date(Date.now() - 60_000);
    for (const file of [trail(forger.home, forged), trail(forger.home, id)]) fs.utimesSync(file, earlier, earlier);
    const run = auraJson(['--home', forger.home, 'push', forged, id, '--store', url]);
    expect(run.status).toBe(1);
    const refused = (run.json['sessions'] as { session_id: string; outcome: string; reason?: string }[]).filter((s) => s.outcome === 'refused');
    expect(refused.map((s) => [s.session_id, s.reason])).toEqual([
      [forged, 'forged_id'],
      [id, 'conflict'],
    ]);
    const sql = client(url);
    expect(await sql`SELECT session_id FROM aura.sessions WHERE session_id = ${forged}`).toEqual([]);
    const out = tempDir('aura-pull-');
    expect(aura(['pull', id, '--store', url, '-o', out]).status).toBe(0);
    expect(fs.readFileSync(path.join(out, `${id}.jsonl`)).equals(fs.readFileSync(trail(a.home, id)))).toBe(true);
    const findings = auraJson(['verify', 'store', '--store', url]).json;
    expect(findings['refusals']).toBe(2);
    // Pushed again and again, each refusal is recorded once: a new one is not crowded out of the findings channel's answer.
    for (let i = 0; i < 3; i++) expect(auraJson(['--home', forger.home, 'push', forged, id, '--store', url]).status).toBe(1);
    expect(auraJson(['verify', 'store', '--store', url]).json['refusals']).toBe(2);
    expect(await sql`SELECT count(*)::int AS n FROM aura.refusals`).toEqual([{ n: 2 }]);
  });
});

describe('hosts that sign and hosts that do not', () => {
  it("are each judged by their own host's keys on every surface: one host's key does not make another's sessions unsigned", async () => {
    const url = await initialized();
    const plain = await host('acme/plain', 1);
    const signing = await host('acme/signing', 1, { signed: true });
    for (const [h, name] of [[plain, 'plain'], [signing, 'signing']] as const) expect(aura(['--home', h.home, 'push', '--all', '--host', name, '--store', url]).status).toBe(0);
    const [plainId, signedId] = [plain.ids[0] as string, signing.ids[0] as string];
    const verify = auraJson(['verify', 'store', '--store', url]);
    expect(verify.status, JSON.stringify(verify.json)).toBe(0);
    const by = Object.fromEntries((verify.json['sessions'] as { session_id: string; status: string }[]).map((row) => [row.session_id, row.status]));
    expect(by).toEqual({ [plainId]: 'intact', [signedId]: 'verified' });
    const reader = tempDir('aura-reader-');
    expect(auraJson(['--home', reader, 'report', 'show', signedId, '--store', url]).json).toMatchObject({ status: 'verified', signatures: 'verified' });
    expect(auraJson(['--home', reader, 'report', 'show', plainId, '--store', url]).json).toMatchObject({ status: 'intact', signatures: 'unsigned' });
    const listed = auraJson(['--home', reader, 'sessions', 'list', '--store', url]).json['sessions'] as { session_id: string; status: string }[];
    expect(Object.fromEntries(listed.map((row) => [row.session_id, row.status]))).toEqual(by);
    // A reader whose own home signs (a host reading the store) judges the store's sessions by their hosts' keys, not its own.
    const signer = tempDir('aura-reader-');
    KeyRing.generate(path.join(signer, 'keys'));
    expect(auraJson(['--home', signer, 'report', 'show', signedId, '--store', url]).json).toMatchObject({ status: 'verified', signatures: 'verified' });
    expect(auraJson(['--home', signer, 'verify', 'store', '--store', url])).toMatchObject({ status: 0, json: { ok: true } });
  });
});

describe('a session another host pushes', () => {
  it("is refused: a live session pulled by another host and pushed by its routine --all neither closes it in the store nor blocks its own host's close", async () => {
    const url = await initialized();
    const home = tempDir('aura-owner-');
    const sql = client(url);
    const follower = spawn(process.execPath, [AURA_BIN, '--home', home, 'push', '--follow', '--interval', '50', '--host', 'owner', '--store', url], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => follower.on('close', resolve));
    const session = agent('acme/owner', { home }).session();
    session.emit('tool.call', { tool: 'step', n: 1 });
    const stored = async (): Promise<number> => (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM aura.lines WHERE session_id = ${session.id}`)[0]?.n ?? 0;
    for (let i = 0; i < 400 && (await stored()) < 3; i++) await sleep(50);
    expect(await stored()).toBeGreaterThanOrEqual(3);
    // A pusher cannot close it for its host: a close record must be of the bytes stored, which the ingest role cannot read.
    const count = await stored();
    await expect(sql.begin(async (tx) => [
      await tx.unsafe(`SET LOCAL ROLE ${ingestRole}`),
      await tx`INSERT INTO aura.closes (session_id, lines, trail_sha256, host) VALUES (${session.id}, ${count}, ${'0'.repeat(64)}, 'owner')`,
    ])).rejects.toThrow(/a close record of session .* that are not the \d+ stored/);
    // Another host pulls it while it runs, and pushes what it has as its own (no writer there: taken for closed).
    const other = tempDir('aura-other-');
    expect(aura(['--home', other, 'pull', session.id, '--store', url]).status).toBe(0);
    const earlier = new Date(Date.now() - 60_000);
    fs.utimesSync(trail(other, session.id), earlier, earlier);
    const pushed = auraJson(['--home', other, 'push', '--all', '--host', 'other', '--store', url]);
    expect(pushed.status).toBe(1);
    expect(pushed.json['sessions']).toEqual([expect.objectContaining({ session_id: session.id, outcome: 'refused', reason: 'conflict', message: expect.stringMatching(/host owner pushed it, not other/) })]);
    expect(await sql`SELECT 1 FROM aura.closes WHERE session_id = ${session.id}`).toEqual([]);
    await session.close();
    for (let i = 0; i < 400 && (await sql`SELECT 1 FROM aura.closes WHERE session_id = ${session.id}`).length === 0; i++) await sleep(50);
    follower.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await stored()).toBe(lines(trail(home, session.id)).length);
    expect(auraJson(['verify', 'store', '--store', url]).json['sessions']).toEqual(expect.arrayContaining([expect.objectContaining({ session_id: session.id, status: 'intact' })]));
  });
});

describe('aura verify store --store', () => {
  it('catches a row edited, deleted, reordered, a field edited beside its bytes, and a session removed', async () => {
    const { url, ids, sql } = await verifiedStore('acme/tampered', 8, 8);
    const [edited, deleted, reordered, beside, removed, next, untouched, unchecked] = ids as [string, string, string, string, string, string, string, string];
    // A superuser can switch the append-only triggers off for a transaction.
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`UPDATE aura.lines SET line = convert_to(replace(convert_from(line, 'UTF8'), 'query 0.2', 'query 0.X'), 'UTF8') WHERE session_id = ${edited} AND line_no = 5`;
      await tx`DELETE FROM aura.lines WHERE session_id = ${deleted} AND line_no = 6`;
      await tx`UPDATE aura.lines SET line_no = line_no + 1000 WHERE session_id = ${reordered} AND line_no IN (4, 7)`;
      await tx`UPDATE aura.lines SET line_no = CASE line_no WHEN 1004 THEN 7 ELSE 4 END WHERE session_id = ${reordered} AND line_no IN (1004, 1007)`;
      await tx`UPDATE aura.lines SET kind = 'tool.result' WHERE session_id = ${beside} AND line_no = 5`;
      for (const table of ['findings', 'checks', 'closes', 'lines']) {
        if (table === 'findings') await tx`DELETE FROM aura.findings WHERE session_id = ${removed}`;
        else await tx.unsafe(`DELETE FROM aura.${table} WHERE session_id = $1`, [removed]);
      }
      await tx`DELETE FROM aura.sessions WHERE session_id = ${removed}`;
      // Its close record, checks and findings gone, its lines kept (and cut): it would read as a session still open.
      await tx`DELETE FROM aura.findings WHERE session_id = ${unchecked}`;
      await tx`DELETE FROM aura.checks WHERE session_id = ${unchecked}`;
      await tx`DELETE FROM aura.closes WHERE session_id = ${unchecked}`;
      await tx`DELETE FROM aura.lines WHERE session_id = ${unchecked} AND line_no > 5`;
    });
    const run = auraJson(['verify', 'store', '--store', url]);
    expect(run.status).toBe(1);
    const by = Object.fromEntries((run.json['sessions'] as { session_id: string; status: string; reason?: string }[]).map((s) => [s.session_id, s]));
    expect(by[edited]).toMatchObject({ status: 'damaged', reason: 'edited' });
    expect(by[deleted]).toMatchObject({ status: 'damaged', reason: 'deleted_or_reordered' });
    expect(by[reordered]).toMatchObject({ status: 'damaged', reason: 'deleted_or_reordered' });
    expect(by[beside]).toMatchObject({ status: 'damaged', reason: 'rows' });
    expect(by[removed]).toBeUndefined();
    expect(run.json['gaps']).toEqual([expect.objectContaining({ session_id: next })]);
    expect(by[next]).toMatchObject({ status: 'verified' });
    expect(by[untouched]).toMatchObject({ status: 'verified' });
    expect(by[unchecked]).toMatchObject({ status: 'damaged', reason: 'rows', message: expect.stringMatching(/no check/) });
    // Pull writes back only what was pushed: a session whose rows were edited or cut is named, and no file written.
    for (const [id, problem] of [[edited, /digest differs from its close record/], [deleted, /holds 11 lines of it where 12 were pushed/]] as const) {
      const out = tempDir('aura-pull-');
      const pulled = auraJson(['pull', id, '--store', url, '-o', out]);
      expect(pulled.status).toBe(1);
      expect(String(pulled.json['problem'])).toMatch(problem);
      expect(fs.readdirSync(out)).toEqual([]);
    }
  });
});

describe('aura verify store --store and a stored summary', () => {
  it('catches a summary a superuser rewrote with its digest, naming the session and how it disagrees with its lines, as verify_session does', async () => {
    const { url, ids, sql } = await verifiedStore('acme/summary', 2, 6);
    const [forged, kept] = ids as [string, string];
    const [row] = await sql<{ summary: Buffer }[]>`SELECT summary FROM aura.closes WHERE session_id = ${forged}`;
    const original = (row as { summary: Buffer }).summary.toString('utf8');
    const verdict = /"verdict": "(\w+)"/.exec(original)?.[1];
    const text = original.replace(`"verdict": "${verdict}"`, `"verdict": "${verdict === 'pass' ? 'fail' : 'pass'}"`);
    expect(text).not.toBe(original);
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`UPDATE aura.closes SET summary = ${Buffer.from(text)}, summary_sha256 = encode(sha256(${Buffer.from(text)}), 'hex') WHERE session_id = ${forged}`;
    });
    const run = auraJson(['verify', 'store', '--store', url]);
    expect(run.status).toBe(1);
    const by = Object.fromEntries((run.json['sessions'] as { session_id: string }[]).map((s) => [s.session_id, s]));
    expect(by[forged]).toMatchObject({ status: 'verified', summary_mismatch: expect.stringMatching(/^the stored summary disagrees with the trail: .*verdict/) as unknown });
    expect(by[kept]).not.toHaveProperty('summary_mismatch');
    // MCP's verify_session over the store says so too.
    const mcp = new Client({ name: 'aura-fleet-test', version: '1.0.0' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, 'mcp', '--store', url], stderr: 'pipe' }));
    try {
      expect((await mcp.callTool({ name: 'verify_session', arguments: { session_key: forged } })).structuredContent).toMatchObject({ status: 'verified', summary_mismatch: (by[forged] as { summary_mismatch?: string } | undefined)?.summary_mismatch });
      expect((await mcp.callTool({ name: 'verify_session', arguments: { session_key: kept } })).structuredContent).not.toHaveProperty('summary_mismatch');
    } finally {
      await mcp.close();
    }
  });
});

describe('json values the store gives back', () => {
  it('keep a key written with an escape (on Node 24, JSON.parse reads the second as the first)', async () => {
    const store = openStore(await tempDatabase());
    try {
      // jsonb keeps shorter keys first: q, then the key under test; the first value's key poisons the second's reading.
      const [row] = await store.sql.unsafe<{ first: object; second: object }[]>(String.raw`SELECT '{"q": 0, "a\\": 0}'::jsonb AS first, '{"q": 1, "a\"": 2}'::jsonb AS second`);
      expect([Object.keys(row?.first ?? {}), Object.keys(row?.second ?? {})]).toEqual([['q', 'a\\'], ['q', 'a"']]);
    } finally {
      await store.sql.end({ timeout: 5 });
    }
  });
});
