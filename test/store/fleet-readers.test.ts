/**
 * The readers over the fleet store: the findings channel across three hosts (one with a broken
 * trail) through the MCP SDK client, and `sessions list`, `report show`, `report html`, `aura ui`
 * and the config key `store`.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agent } from '../../src/session/agent.js';
import { AURA_BIN, aura, auraAsync, auraJson } from '../helpers/cli.js';
import { client, dropRoles, roleName, tempDatabase } from '../helpers/postgres.js';
import { lines } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

const roles = { ingest: roleName('ingest'), reader: roleName('reader') };
afterAll(() => dropRoles([roles.ingest, roles.reader]), 60_000);

async function host(ref: string, sessions: number): Promise<{ home: string; ids: string[] }> {
  const home = tempDir('aura-fleet-');
  const ag = agent(ref, { home });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const session = ag.session({ fsync: 'none' });
    session.emit('tool.call', { tool: 'search', args: { q: `query ${i}` } });
    session.emit('constraint.violated', { tool: 'shell.exec', rule: { type: 'deny_tools' }, message: 'denied' });
    ids.push((await session.close()).session_id);
  }
  return { home, ids };
}

let url: string;
let a: { home: string; ids: string[] };
let b: { home: string; ids: string[] };
let c: { home: string; ids: string[] };
let broken: string;

beforeAll(async () => {
  url = await tempDatabase();
  expect(aura(['store', 'init', '--store', url, '--ingest-role', roles.ingest, '--reader-role', roles.reader]).status).toBe(0);
  [a, b, c] = await Promise.all([host('acme/alpha', 2), host('acme/beta', 2), host('acme/gamma', 2)]);
  // Host gamma's first trail was edited on its disk before it was pushed.
  broken = c.ids[0] as string;
  const file = path.join(c.home, 'sessions', `${broken}.jsonl`);
  fs.writeFileSync(file, `${lines(file).map((line, i) => (i === 2 ? line.replace('query 0', 'query 7') : line)).join('\n')}\n`);
  expect(aura(['--home', a.home, 'push', '--all', '--host', 'alpha', '--store', url]).status).toBe(0);
  // Host beta pushes only its second session: the store lacks the one its seal links to.
  expect(aura(['--home', b.home, 'push', b.ids[1] as string, '--host', 'beta', '--store', url]).status).toBe(0);
  const pushed = auraJson(['--home', c.home, 'push', '--all', '--host', 'gamma', '--store', url]);
  expect(pushed.status).toBe(0);
  expect(pushed.json['sessions']).toContainEqual(expect.objectContaining({ session_id: broken, outcome: 'stored', status: 'damaged' }));
}, 120_000);

describe('aura mcp --store', () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'aura-fleet-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, 'mcp', '--store', url, '--silent-after', '0.0002'], stderr: 'pipe' }));
    // Every host's last push is now older than the 0.72 s the server was told to allow.
    await sleep(1000);
  });
  afterAll(() => client.close());

  const call = async (name: string, args: Record<string, unknown>): Promise<{ isError: boolean; json: Record<string, unknown>; text: string }> => {
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as { text: string }[])[0]?.text ?? '';
    return { isError: result.isError === true, json: (result.structuredContent ?? {}) as Record<string, unknown>, text };
  };

  it('gives the findings of every host, the broken trail and the fleet probes among them', async () => {
    const { isError, json } = await call('get_session_findings', { per_kind_limit: 10 });
    expect(isError).toBe(false);
    const findings = json['findings'] as { kind: string; severity: string; session_id?: string; host?: string }[];
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'HASH_CHAIN_BROKEN', severity: 'critical', session_id: broken }));
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'PUSH_GAP', severity: 'warn', session_id: b.ids[1], host: 'beta' }));
    expect(findings.filter((f) => f.kind === 'HOST_SILENT').map((f) => f.host)).toEqual(['alpha', 'beta', 'gamma']);
    const policy = findings.filter((f) => f.kind === 'POLICY_VIOLATION').map((f) => f.session_id);
    expect(new Set(policy)).toEqual(new Set([...a.ids, b.ids[1], ...c.ids]));
    expect(json['_meta']).toMatchObject({ superauditor: '1.1' });
  });

  it('scopes session findings to a key, while store findings still cover the fleet', async () => {
    const key = a.ids[0] as string;
    const { json } = await call('get_session_findings', { session_key: key, per_kind_limit: 10 });
    const findings = json['findings'] as { kind: string; session_id?: string }[];
    expect(findings.filter((f) => f.kind === 'POLICY_VIOLATION').map((f) => f.session_id)).toEqual([key]);
    expect(findings).toContainEqual(expect.objectContaining({ kind: 'HASH_CHAIN_BROKEN', session_id: broken }));
  });

  it('trims per kind and observes capping at limit + 1', async () => {
    const { json } = await call('get_session_findings', { per_kind_limit: 1 });
    expect(json['counts_by_kind']).toMatchObject({ HOST_SILENT: 1, POLICY_VIOLATION: 1 });
    expect(json['capped_kinds']).toEqual(expect.arrayContaining(['HOST_SILENT', 'POLICY_VIOLATION']));
    expect(json['capped_kinds']).not.toContain('PUSH_GAP');
  });

  it('refuses a bad per_kind_limit and a key that is not a string as tool errors; a key naming nothing scopes to the store findings', async () => {
    expect(await call('get_session_findings', { per_kind_limit: 0 })).toMatchObject({ isError: true, text: expect.stringMatching(/per_kind_limit must be an integer >= 1/) });
    expect(await call('get_session_findings', { session_key: 7 })).toMatchObject({ isError: true, text: expect.stringMatching(/expected string/) });
    const nothing = await call('get_session_findings', { session_key: 'aura_sess_00000000dead', per_kind_limit: 10 });
    expect(nothing.isError).toBe(false);
    expect(nothing.json['scope']).toEqual({ session_key: 'aura_sess_00000000dead', sessions: [] });
    const kinds = new Set((nothing.json['findings'] as { kind: string }[]).map((f) => f.kind));
    expect(kinds.has('POLICY_VIOLATION')).toBe(false);
    expect(kinds.has('HASH_CHAIN_BROKEN')).toBe(true);
  });

  it('takes a key a session declared as a label for it', async () => {
    const home = tempDir('aura-fleet-');
    const session = agent('acme/labelled', { home }).session({ sessionKey: 'ticket-4711' });
    session.emit('constraint.violated', { tool: 'shell.exec', rule: { type: 'deny_tools' }, message: 'denied' });
    const id = (await session.close()).session_id;
    expect(aura(['--home', home, 'push', '--all', '--host', 'delta', '--store', url]).status).toBe(0);
    const { json } = await call('get_session_findings', { session_key: 'ticket-4711', per_kind_limit: 10 });
    expect(json['scope']).toEqual({ session_key: 'ticket-4711', sessions: [id] });
    expect((json['findings'] as { kind: string; session_id?: string }[]).filter((f) => f.kind === 'POLICY_VIOLATION').map((f) => f.session_id)).toEqual([id]);
  });

  it('lists, reports and verifies sessions from the stored bytes', async () => {
    const listed = (await call('list_sessions', {})).json['sessions'] as { session_id: string; state: string }[];
    expect(listed.map((s) => s.session_id)).toEqual(expect.arrayContaining([...a.ids, b.ids[1], ...c.ids]));
    expect((await call('verify_session', { session_key: broken })).json).toMatchObject({ hash_chain_valid: false, reason: 'edited', status: 'damaged', host: 'gamma' });
    expect((await call('verify_session', { session_key: a.ids[1] })).json).toMatchObject({ hash_chain_valid: true, complete: true, status: 'intact' });
    const local = auraJson(['--home', a.home, 'report', 'show', a.ids[0] as string]).json;
    const stored = (await call('get_session_report', { session_key: a.ids[0] })).json;
    expect(stored['audit_report']).toEqual(local['audit_report']);
    expect(stored).toMatchObject({ session_id: a.ids[0], summary_agrees: true });
  });
});

describe('the CLI readers with --store', () => {
  it('lists every host\'s sessions, and reports one from the stored bytes', () => {
    const listed = auraJson(['sessions', 'list', '--store', url]);
    expect(listed.json['store']).toBe(url.replace(/\/$/, ''));
    // Five from the three hosts, and the labelled one the channel's tests pushed.
    expect((listed.json['sessions'] as { session_id: string }[]).length).toBe(6);
    const report = auraJson(['report', 'show', broken, '--store', url]);
    expect(report.status).toBe(1);
    expect(report.json).toMatchObject({ session_id: broken, source: 'trail', audit_report: { hash_chain_valid: false, verdict: 'fail' } });
    expect(aura(['report', 'show', 'aura_sess_00000000dead', '--store', url])).toMatchObject({ status: 2, stderr: expect.stringMatching(/session not found/) });
  });

  it('writes the report page of a stored session', () => {
    const out = path.join(tempDir(), 'page.html');
    const run = auraJson(['report', 'html', a.ids[0] as string, '--store', url, '-o', out]);
    expect(run.status, run.stderr).toBe(0);
    expect(fs.readFileSync(out, 'utf8')).toContain(a.ids[0]);
  });

  it('serves the sessions list and each report in aura ui', async () => {
    const ui = spawn(process.execPath, [AURA_BIN, 'ui', '--store', url, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const [first] = await new Promise<string[]>((resolve) => createInterface({ input: ui.stdout }).once('line', (line) => resolve([line])));
      const { url: address } = JSON.parse(first as string) as { url: string };
      const signIn = await fetch(address, { redirect: 'manual' });
      expect(signIn.status).toBe(303);
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const base = new URL(address);
      base.search = '';
      const list = await fetch(base, { headers: { cookie } });
      const html = await list.text();
      for (const id of [...a.ids, ...c.ids]) expect(html).toContain(id);
      expect((await fetch(`${base.href}s/${broken}`, { headers: { cookie } })).status).toBe(200);
      expect((await fetch(`${base.href}s/aura_sess_00000000dead`, { headers: { cookie } })).status).toBe(404);
    } finally {
      ui.kill('SIGTERM');
    }
  });

  it('reads the store the config key names, and the folder with --no-store', async () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'store: env:AURA_FLEET_TEST_URL\n');
    const fromConfig = await auraAsync(['sessions', 'list', '--json'], { home, env: { AURA_FLEET_TEST_URL: url } });
    expect(fromConfig.status, fromConfig.stderr).toBe(0);
    expect((JSON.parse(fromConfig.stdout) as { sessions: unknown[] }).sessions.length).toBe(6);
    const local = await auraAsync(['sessions', 'list', '--no-store', '--json'], { home, env: { AURA_FLEET_TEST_URL: url } });
    expect(JSON.parse(local.stdout)).toEqual({ sessions_dir: path.join(home, 'sessions'), sessions: [] });
    const unset = await auraAsync(['sessions', 'list', '--json'], { home });
    expect(unset.status).toBe(2);
    expect(unset.stderr).toBe('');
    expect((JSON.parse(unset.stdout) as { error: { message: string } }).error.message).toMatch(/AURA_FLEET_TEST_URL is not set/);
  });
});

/** One `get_session_findings` call to `aura ...args` (an MCP server over stdio), with the SDK client. */
async function findingsOf(args: readonly string[], call: Record<string, unknown> = {}): Promise<{ kind: string; severity: string; message: string; session_id?: string }[]> {
  const mcp = new Client({ name: 'aura-fleet-test', version: '1.0.0' });
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, ...args], stderr: 'pipe' }));
  try {
    const result = await mcp.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50, ...call } });
    expect(result.isError).not.toBe(true);
    return (result.structuredContent as { findings: { kind: string; severity: string; message: string; session_id?: string }[] }).findings;
  } finally {
    await mcp.close();
  }
}

describe('the findings over rows a superuser changed after ingest', () => {
  let store: string;
  let h: { home: string; ids: string[] };
  // A trail with nothing in it, closed long ago: pushed as it is, with no line.
  const empty = 'aura_sess_00000000e0e0';

  beforeAll(async () => {
    store = await tempDatabase();
    expect(aura(['store', 'init', '--store', store, '--ingest-role', roles.ingest, '--reader-role', roles.reader]).status).toBe(0);
    h = await host('acme/changed', 3);
    const trail = path.join(h.home, 'sessions', `${empty}.jsonl`);
    fs.writeFileSync(trail, '');
    fs.utimesSync(trail, new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T00:00:00Z'));
    const pushed = auraJson(['--home', h.home, 'push', '--all', '--host', 'changed', '--store', store]);
    expect(pushed.status, pushed.stderr).toBe(0);
  }, 60_000);

  it('names a sealed session whose lines were all deleted (TRAIL_MISSING) and rows that are another session\'s (HASH_CHAIN_BROKEN), as over the folder with the same damage and as verify store', async () => {
    const [kept, gone, over] = h.ids as [string, string, string];
    const copy = 'aura_sess_0000c0b1ed00';
    const before = await findingsOf(['mcp', '--store', store]);
    expect(before.filter((f) => f.severity === 'critical')).toEqual([]);
    // A superuser: every line of one session deleted; another session's rows copied under a new id,
    // and over the rows of a third (whose seal and summary stay).
    const sql = client(store);
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`DELETE FROM aura.lines WHERE session_id IN ${sql([gone, over])}`;
      await tx`INSERT INTO aura.sessions (session_id, host) VALUES (${copy}, 'changed')`;
      for (const id of [copy, over]) await tx`INSERT INTO aura.lines (session_id, line_no, line, event_id, kind, ts) SELECT ${id}, line_no, line, event_id, kind, ts FROM aura.lines WHERE session_id = ${kept}`;
    });
    // The same hand on the folder the sessions came from.
    const sessions = path.join(h.home, 'sessions');
    for (const name of fs.readdirSync(sessions).filter((file) => file.startsWith(gone))) fs.rmSync(path.join(sessions, name));
    for (const id of [copy, over]) fs.copyFileSync(path.join(sessions, `${kept}.jsonl`), path.join(sessions, `${id}.jsonl`));

    const fleet = await findingsOf(['mcp', '--store', store]);
    const folder = await findingsOf(['--home', h.home, 'mcp']);
    const critical = (findings: typeof fleet, id: string): { kind: string; severity: string }[] =>
      findings.filter((f) => f.session_id === id && f.severity === 'critical').map((f) => ({ kind: f.kind, severity: f.severity }));
    expect(critical(fleet, gone)).toEqual([{ kind: 'TRAIL_MISSING', severity: 'critical' }]);
    expect(critical(fleet, copy)).toEqual([{ kind: 'HASH_CHAIN_BROKEN', severity: 'critical' }]);
    // Over its own seal, the seal speaks first, on both.
    expect(critical(fleet, over).map((f) => f.kind)).toContain('TRAIL_TRUNCATED');
    for (const id of [gone, copy, over]) expect(critical(fleet, id), id).toEqual(critical(folder, id));
    const named = `its events name session ${kept}, not ${copy}`;
    expect(fleet.find((f) => f.session_id === copy && f.kind === 'HASH_CHAIN_BROKEN')?.message).toBe(named);
    expect(folder.find((f) => f.session_id === copy && f.kind === 'HASH_CHAIN_BROKEN')?.message).toBe(named);
    expect(fleet.find((f) => f.session_id === gone)?.message).toMatch(/no line of it \(its rows were deleted\)/);
    expect(critical(fleet, kept)).toEqual([]);
    // Store findings, whatever session a key names.
    const scoped = await findingsOf(['mcp', '--store', store], { session_key: kept });
    expect(scoped.filter((f) => f.severity === 'critical').map((f) => [f.session_id, f.kind])).toEqual(expect.arrayContaining([[gone, 'TRAIL_MISSING'], [copy, 'HASH_CHAIN_BROKEN']]));
    // verify store --store says the same of the same rows.
    const verified = auraJson(['verify', 'store', '--store', store]);
    expect(verified.status).toBe(1);
    const by = Object.fromEntries((verified.json['sessions'] as { session_id: string }[]).map((s) => [s.session_id, s]));
    expect(by[gone]).toMatchObject({ status: 'missing_trail', reason: 'missing_trail' });
    expect(by[copy]).toMatchObject({ status: 'damaged', reason: 'malformed_record', message: named });
    expect(by[over]).toMatchObject({ status: 'damaged', reason: 'truncated' });
  });

  it('takes a session pushed with no line for an empty trail, as ingest did, not for one whose rows were deleted', async () => {
    const verified = auraJson(['verify', 'store', '--store', store]);
    expect((verified.json['sessions'] as { session_id: string }[]).find((s) => s.session_id === empty)).toMatchObject({ status: 'incomplete', recorded: 'incomplete' });
    expect((await findingsOf(['mcp', '--store', store])).filter((f) => f.session_id === empty && f.kind === 'TRAIL_MISSING')).toEqual([]);
  });
});
