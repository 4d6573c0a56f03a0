import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, describeCause, describeNaming, ReadError } from '../../src/errors.js';
import { FindingsService } from '../../src/mcp/findings-service.js';
import { readTokens } from '../../src/mcp/http.js';
import { agent } from '../../src/session/agent.js';
import { STORE_KINDS } from '../../src/store/store-findings.js';
import { AURA_BIN, listeningUrl, shellQuote } from '../helpers/cli.js';
import { expectAuraError } from '../helpers/errors.js';
import { AURA_PY, REPO } from '../helpers/fixtures.js';
import { schemaErrors } from '../helpers/superauditor.js';
import { demoSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

type Response = {
  findings: { kind: string; severity: string; session_id?: string }[];
  capped_kinds: string[];
  identity_shared?: boolean;
  summary?: string;
  scope?: { session_key: string; sessions: string[] };
  _meta: Record<string, unknown>;
};

/** A store with demo sessions of two agents, Python sessions, and each kind of damage. */
async function damagedStore(): Promise<{ home: string; ids: Record<string, string> }> {
  const home = tempDir();
  const a = await demoSession(home);
  const b = await demoSession(home);
  const sessions = path.join(home, 'sessions');
  for (const name of ['aura_sess_7b0064268f4b.jsonl', 'aura_sess_7b0064268f4b.summary.json']) fs.copyFileSync(path.join(AURA_PY, 'sessions', name), path.join(sessions, name));
  // Torn tail, a trail edited, an abandoned writer, a closed trail with no summary, a summary with no trail.
  fs.copyFileSync(path.join(AURA_PY, 'tampered', 'last_line_partial.jsonl'), path.join(sessions, 'aura_sess_000000000001.jsonl'));
  fs.copyFileSync(path.join(AURA_PY, 'tampered', 'payload_edited_mid.jsonl'), path.join(sessions, 'aura_sess_000000000002.jsonl'));
  fs.copyFileSync(path.join(AURA_PY, 'tampered', 'last_event_deleted.jsonl'), path.join(sessions, 'aura_sess_000000000003.jsonl'));
  fs.writeFileSync(path.join(sessions, 'aura_sess_000000000003.jsonl.lock'), JSON.stringify({ pid: 2 ** 22 + 777, host: os.hostname(), session_id: 'x' }));
  fs.copyFileSync(path.join(AURA_PY, 'sessions', 'aura_sess_69b55aaf3209.jsonl'), path.join(sessions, 'aura_sess_69b55aaf3209.jsonl'));
  fs.writeFileSync(path.join(sessions, 'aura_sess_000000000005.summary.json'), '{}');
  return { home, ids: { a, b } };
}

async function stdioClient(home: string): Promise<Client> {
  const client = new Client({ name: 'aura-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, '--home', home, 'mcp'], stderr: 'pipe' }));
  return client;
}

async function findings(client: Client, args: Record<string, unknown>): Promise<{ isError: boolean; body: Response; text: string }> {
  const result = await client.callTool({ name: 'get_session_findings', arguments: args });
  const text = (result.content as { text: string }[])[0]?.text ?? '';
  return { isError: result.isError === true, body: result.structuredContent as Response, text };
}

describe('aura mcp over stdio, with the SDK client', () => {
  let store: Awaited<ReturnType<typeof damagedStore>>;
  let client: Client;

  beforeAll(async () => {
    store = await damagedStore();
    client = await stdioClient(store.home);
  });
  afterAll(async () => {
    await client.close();
  });

  it('lists four read-only tools with input and output schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_session_findings', 'get_session_report', 'list_sessions', 'verify_session']);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
      expect(tool.outputSchema, tool.name).toBeDefined();
    }
  });

  it('reports every store-level kind, each with its session, in a response the schema accepts', async () => {
    const { body, text, isError } = await findings(client, { per_kind_limit: 200 });
    expect(isError).toBe(false);
    expect(JSON.parse(text)).toEqual(body);
    expect(schemaErrors(body)).toEqual([]);
    const kinds = new Map(body.findings.map((f) => [f.session_id, f.kind]));
    expect(kinds.get('aura_sess_000000000001')).toBe('TRAIL_TORN_TAIL');
    expect(kinds.get('aura_sess_000000000002')).toBe('HASH_CHAIN_BROKEN');
    expect(kinds.get('aura_sess_000000000003')).toBe('SESSION_ABANDONED');
    expect(kinds.get('aura_sess_69b55aaf3209')).toBe('SUMMARY_MISSING');
    expect(kinds.get('aura_sess_000000000005')).toBe('ORPHAN_ARTIFACT');
    expect(body.findings.find((f) => f.kind === 'HASH_CHAIN_BROKEN')?.severity).toBe('critical');
    expect(body._meta).toMatchObject({ superauditor: '1.1' });
    expect(body).not.toHaveProperty('identity_shared');
  });

  it('scopes session findings to session_key and keeps store findings of every session, whatever agent (C7)', async () => {
    const { body } = await findings(client, { session_key: store.ids['a'], per_kind_limit: 200 });
    const bySession = body.findings.map((f) => f.session_id);
    expect(bySession).toContain(store.ids['a']);
    expect(bySession).not.toContain(store.ids['b']);
    // Store findings of other sessions are never filtered away by the key.
    expect(bySession).toEqual(expect.arrayContaining(['aura_sess_000000000001', 'aura_sess_000000000002', 'aura_sess_000000000005']));
    const all = await findings(client, { per_kind_limit: 200 });
    expect(all.body.findings.map((f) => f.session_id)).toContain(store.ids['b']);
  });

  it('caps honestly: limit 1 names the kinds that had more', async () => {
    const one = await findings(client, { per_kind_limit: 1, include_summary: false });
    expect(one.body.capped_kinds).toContain('POLICY_VIOLATION');
    expect(one.body).not.toHaveProperty('summary');
    expect(one.body.findings.filter((f) => f.kind === 'POLICY_VIOLATION')).toHaveLength(1);
  });

  for (const bad of [0, -1, 1.5, '5', true, 2 ** 53, 1e308]) {
    it(`refuses per_kind_limit ${JSON.stringify(bad)} with a tool error (C14)`, async () => {
      const result = await findings(client, { per_kind_limit: bad });
      expect(result.isError).toBe(true);
      expect(result.text).toContain('per_kind_limit must be an integer >= 1');
    });
  }

  it('names a refused value by an excerpt: never the whole of it, nor a walk through a nested one', async () => {
    let nested: unknown = 1;
    for (let i = 0; i < 3_000; i++) nested = [nested];
    const deep = await findings(client, { per_kind_limit: nested });
    expect(deep).toMatchObject({ isError: true, text: expect.stringContaining('per_kind_limit must be an integer >= 1') });
    expect(deep.text).toContain('got a list of 1');
    const long = await findings(client, { include_summary: 'x'.repeat(100_000) });
    expect(long.isError).toBe(true);
    expect(long.text).toContain('include_summary must be true or false');
    expect(long.text.length).toBeLessThan(1000);
  });

  it('answers a session_key that names no session with an empty scope, not an error: a key is a label, never a path', async () => {
    const all = await findings(client, { per_kind_limit: 200 });
    const storeLevel = all.body.findings.filter((f) => STORE_KINDS.has(f.kind));
    for (const key of ['../x', '../../etc/passwd', 'aura_sess_ffffffffffff', 'my-client-1', 'x'.repeat(5000)]) {
      const result = await findings(client, { session_key: key, per_kind_limit: 200 });
      expect(result.isError, key).toBe(false);
      expect(result.body.scope, key).toEqual({ session_key: key, sessions: [] });
      // Store findings cover every session whatever the key; no session's own findings are in scope.
      expect(result.body.findings, key).toEqual(storeLevel);
      expect(schemaErrors(result.body), key).toEqual([]);
    }
  });

  it('refuses a session_key that is not a string with a tool error', async () => {
    const result = await client.callTool({ name: 'get_session_findings', arguments: { session_key: 42 } }).catch((error: unknown) => ({ isError: true, content: [{ text: String(error) }] }));
    expect(result.isError).toBe(true);
  });

  it('answers list_sessions, get_session_report and verify_session', async () => {
    const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
    expect((listed.structuredContent as { sessions: unknown[] }).sessions.length).toBeGreaterThanOrEqual(7);
    const report = await client.callTool({ name: 'get_session_report', arguments: { session_key: store.ids['a'] } });
    expect(report.structuredContent).toMatchObject({ session_id: store.ids['a'], audit_report: { verdict: 'fail' } });
    const verified = await client.callTool({ name: 'verify_session', arguments: { session_key: 'aura_sess_000000000002' } });
    expect(verified.structuredContent).toMatchObject({ hash_chain_valid: false, reason: 'edited' });
  });

  it('says why a session it knows has no trail to verify', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'aura-mcp-gone-'));
    try {
      const session = agent('acme/gone', { home }).session();
      session.emit('tool.call', { tool: 'lookup' });
      const closed = await session.close();
      fs.rmSync(closed.log_path);
      const service = new FindingsService([{ sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl') }], false);
      await expect(service.verifySession(session.id)).rejects.toThrow(`session ${session.id} has no readable trail (missing_trail): its seal names a trail that is gone (the session was deleted)`);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('reflects a change to a trail at the next call (no stale results)', async () => {
    const trail = path.join(store.home, 'sessions', 'aura_sess_69b55aaf3209.jsonl');
    const before = await findings(client, { session_key: 'aura_sess_69b55aaf3209', per_kind_limit: 200 });
    expect(before.body.findings.filter((f) => f.session_id === 'aura_sess_69b55aaf3209').map((f) => f.kind)).toEqual(['SEAL_MISSING', 'SUMMARY_MISSING']);
    const text = fs.readFileSync(trail, 'utf8').replace('"input": "hello"', '"input": "HELLO"');
    const stat = fs.statSync(trail);
    fs.writeFileSync(trail, text);
    fs.utimesSync(trail, stat.atime, stat.mtime);
    const after = await findings(client, { session_key: 'aura_sess_69b55aaf3209', per_kind_limit: 200 });
    expect(after.body.findings.filter((f) => f.session_id === 'aura_sess_69b55aaf3209').map((f) => f.kind)).toContain('HASH_CHAIN_BROKEN');
  });

  it('passes the two-pull check (npm run check:superauditor)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO, 'scripts', 'check-superauditor.ts'), '--stdio', `node ${shellQuote(AURA_BIN)} --home ${shellQuote(store.home)} mcp`], { cwd: REPO, encoding: 'utf8' });
    expect(run.stdout).toContain('superauditor two-pull check: passed');
    expect(run.status).toBe(0);
  });

  it('passes a black-box call from @modelcontextprotocol/inspector --cli, which exits non-zero on isError', () => {
    const inspector = path.join(REPO, 'node_modules', '.bin', 'mcp-inspector');
    const env = { ...process.env, HOME: tempDir() };
    const ok = spawnSync(inspector, ['--cli', process.execPath, AURA_BIN, '--home', store.home, 'mcp', '--method', 'tools/call', '--tool-name', 'get_session_findings', '--tool-arg', 'per_kind_limit=2'], { env, encoding: 'utf8' });
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('TRAIL_TORN_TAIL');
    const refused = spawnSync(inspector, ['--cli', process.execPath, AURA_BIN, '--home', store.home, 'mcp', '--method', 'tools/call', '--tool-name', 'get_session_findings', '--tool-arg', 'per_kind_limit=0'], { env, encoding: 'utf8' });
    expect(refused.status).not.toBe(0);
    expect(refused.stdout).toContain('per_kind_limit must be an integer >= 1');
  });

  it('exits after a message over the 10 MiB limit closes the channel, though the client keeps its end open', async () => {
    const child = spawn(process.execPath, [AURA_BIN, '--home', store.home, 'mcp'], { stdio: ['pipe', 'ignore', 'pipe'] });
    child.stdin.on('error', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_session_findings', arguments: { session_key: 'x'.repeat(11 * 1024 * 1024) } } })}\n`);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
  });

  it('answers a line it cannot read with -32700 or -32600 (a batch too), and goes on serving', async () => {
    const child = spawn(process.execPath, [AURA_BIN, '--home', store.home, 'mcp'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const replies: Record<string, unknown>[] = [];
    let wake: (() => void) | null = null;
    createInterface({ input: child.stdout }).on('line', (line) => {
      replies.push(JSON.parse(line) as Record<string, unknown>);
      wake?.();
    });
    const next = async (): Promise<Record<string, unknown>> => {
      while (replies.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return replies.shift() as Record<string, unknown>;
    };
    try {
      child.stdin.write('{this is not json\n');
      expect(await next()).toMatchObject({ id: null, error: { code: -32700 } });
      child.stdin.write(`${JSON.stringify({ hello: 'not json-rpc' })}\n`);
      expect(await next()).toMatchObject({ id: null, error: { code: -32600 } });
      child.stdin.write(`${JSON.stringify([{ jsonrpc: '2.0', id: 2, method: 'ping' }])}\n`);
      expect(await next()).toMatchObject({ id: null, error: { code: -32600 } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' })}\n`);
      expect(await next()).toMatchObject({ id: 3, result: {} });
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('FindingsService', () => {
  it('scopes session findings to the sessions that declared a session_key, and to none for a key no session declared', async () => {
    const home = tempDir();
    const ag = agent('acme/keyed', { home, rules: [{ type: 'deny_tools', tools: ['shell.*'] }] });
    const ids: string[] = [];
    for (const sessionKey of ['my-client-1', 'my-client-2', 'my-client-1', undefined]) {
      const session = ag.session(sessionKey === undefined ? {} : { sessionKey });
      await session.tool('shell.exec', {}, () => 'ran').catch(() => undefined);
      ids.push((await session.close()).session_id);
    }
    const service = new FindingsService([{ sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl') }], true);
    const scoped = async (key: string): Promise<{ sessions: unknown; findings: unknown[] }> => {
      const response = await service.getSessionFindings({ session_key: key, per_kind_limit: 50 });
      return { sessions: response.scope?.sessions, findings: response.findings.map((f) => f['session_id']) };
    };
    expect(await scoped('my-client-1')).toEqual({ sessions: [ids[0], ids[2]].sort(), findings: [ids[0], ids[2]].sort() });
    expect(await scoped('my-client-2')).toEqual({ sessions: [ids[1]], findings: [ids[1]] });
    // A session id still names its session.
    expect(await scoped(ids[3] ?? '')).toEqual({ sessions: [ids[3]], findings: [ids[3]] });
    expect(await scoped('nobody-declared-this')).toEqual({ sessions: [], findings: [] });
    const keyed = await service.getSessionFindings({ session_key: 'my-client-2' });
    expect(keyed).not.toHaveProperty('identity_shared');
    expect(await service.getSessionFindings({})).toMatchObject({ identity_shared: true });
    expect(await service.getSessionFindings({})).not.toHaveProperty('scope');
  });

  it('turns a session that cannot be read into one CHECK_CRASHED finding, and keeps the others (C10)', async () => {
    const home = tempDir();
    const sessions = path.join(home, 'sessions');
    fs.mkdirSync(path.join(sessions, 'aura_sess_000000000009.jsonl'), { recursive: true });
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'payload_edited_mid.jsonl'), path.join(sessions, 'aura_sess_000000000002.jsonl'));
    const service = new FindingsService([{ sessionsDir: sessions, sealLog: path.join(home, 'seals.jsonl') }], false);
    const response = await service.getSessionFindings({ per_kind_limit: 50 });
    expect(response.findings.map((f) => [f['session_id'], f.kind])).toEqual([
      ['aura_sess_000000000002', 'HASH_CHAIN_BROKEN'],
      ['aura_sess_000000000009', 'CHECK_CRASHED'],
    ]);
    expect(response.findings[1]).toMatchObject({ severity: 'warn', probe: 'store' });
  });
});

describe('the tokens file', () => {
  it('refuses an unknown key, naming the file and the line', () => {
    const file = path.join(tempDir(), 'tokens.yaml');
    fs.writeFileSync(file, 'tokens:\n  - token: a-token-of-sixteen-chars\n    folder: [sessions]\n');
    const error = expectAuraError(() => readTokens(file), ConfigError, 'CONFIG_INVALID');
    expect(error.data).toEqual({ path: file, line: 3 });
    expect(error.message).toContain('unknown key "folder" in tokens[0]; expected sha256, token, folders');
    fs.writeFileSync(file, 'tokens:\n  - { token: a-token-of-sixteen-chars, folders: [sessions] }\ntokns: []\n');
    expect(expectAuraError(() => readTokens(file), ConfigError, 'CONFIG_INVALID').data).toEqual({ path: file, line: 3 });
  });

  it("names a granted folder's anchor copy beside the file, and refuses one for a folder no token grants (a typo would leave the folder unanchored)", () => {
    const dir = tempDir();
    const file = path.join(dir, 'tokens.yaml');
    const grants = 'tokens:\n  - { token: a-token-of-sixteen-chars, folders: [a/sessions] }\n  - { token: another-token-of-sixteen, folders: [b/sessions] }\n';
    fs.writeFileSync(file, `${grants}anchors:\n  a/sessions: anchors/a.jsonl\n`);
    const [a, b] = readTokens(file);
    expect([...(a?.anchors ?? [])]).toEqual([[path.join(dir, 'a', 'sessions'), path.join(dir, 'anchors', 'a.jsonl')]]);
    expect(b?.anchors.size).toBe(0);
    fs.writeFileSync(file, `${grants}anchors:\n  a/sessions: anchors/a.jsonl\n  a/sesions: anchors/a.jsonl\n`);
    const typo = expectAuraError(() => readTokens(file), ConfigError, 'CONFIG_INVALID');
    expect(typo.data).toEqual({ path: file, line: 6 });
    expect(typo.message).toContain(`anchors names a/sesions, which no token grants`);
    fs.writeFileSync(file, `${grants}anchors:\n  a/sessions: [anchors/a.jsonl]\n`);
    expect(expectAuraError(() => readTokens(file), ConfigError, 'CONFIG_INVALID').data).toEqual({ path: file, line: 5 });
  });
});

describe('aura mcp over Streamable HTTP', () => {
  let server: ChildProcess;
  let url: string;
  let tenantA: Awaited<ReturnType<typeof damagedStore>>;
  let tenantB: { home: string; id: string };
  const TOKEN_A = 'token-for-tenant-a-0123456789';
  const TOKEN_B = 'token-for-tenant-b-9876543210';

  beforeAll(async () => {
    tenantA = await damagedStore();
    const bHome = tempDir();
    tenantB = { home: bHome, id: await demoSession(bHome) };
    const tokens = path.join(tempDir(), 'tokens.yaml');
    const sha = (t: string): string => crypto.createHash('sha256').update(t).digest('hex');
    fs.writeFileSync(tokens, `tokens:\n  - sha256: ${sha(TOKEN_A)}\n    folders: [${path.join(tenantA.home, 'sessions')}]\n  - token: ${TOKEN_B}\n    folders: [${path.join(tenantB.home, 'sessions')}]\n`);
    server = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    url = await listeningUrl(server);
  });
  afterAll(() => {
    server.kill('SIGTERM');
  });

  async function client(token: string): Promise<Client> {
    const c = new Client({ name: 'aura-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    return c;
  }

  function post(headers: Record<string, string>, message: object | string = { jsonrpc: '2.0', id: 1, method: 'tools/list' }): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const req = http.request({ host: '127.0.0.1', port: target.port, path: '/mcp', method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(typeof message === 'string' ? message : JSON.stringify(message));
    });
  }

  it('answers 401 and nothing else without a valid token, and 403 to another Host', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong-token-000000000000' }, { Authorization: `Basic ${TOKEN_A}` }]) {
      const res = await post(headers);
      expect(res.status).toBe(401);
      expect(res.body).toBe('{"error":"a valid bearer token is required"}');
    }
    expect((await post({ Authorization: `Bearer ${TOKEN_A}`, Host: 'evil.example:80' })).status).toBe(403);
  });

  it('answers 403 to a browser page from outside loopback (Origin), with or without a token, and serves one on loopback', async () => {
    for (const origin of ['http://evil.example', 'https://127.0.0.1.evil.example:8443', 'null', 'file://']) {
      for (const headers of [{ Origin: origin, Authorization: `Bearer ${TOKEN_A}` }, { Origin: origin }]) {
        const res = await post(headers);
        expect(res.status, origin).toBe(403);
        expect(res.body).toBe('{"error":"this server answers no page from outside loopback (Origin)"}');
      }
    }
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1', 'http://[::1]:3000']) {
      expect((await post({ Origin: origin, Authorization: `Bearer ${TOKEN_A}` }, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } } })).status, origin).toBe(200);
    }
  });

  it('says at start which folder of the tokens file does not exist, and serves the others', async () => {
    const tokens = path.join(tempDir(), 'tokens.yaml');
    const typo = path.join(tenantA.home, 'sesions');
    fs.writeFileSync(tokens, `tokens:\n  - token: ${TOKEN_A}\n    folders: [${typo}, ${path.join(tenantA.home, 'sessions')}]\n`);
    const other = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    other.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      await listeningUrl(other);
      expect(stderr).toContain(`names ${typo}, which does not exist (yet)`);
      expect(stderr).not.toContain(`names ${path.join(tenantA.home, 'sessions')},`);
    } finally {
      other.kill('SIGTERM');
    }
  });

  it('closes the connection of a refused caller with its answer, whatever body it declared and still sends', async () => {
    const target = new URL(url);
    const socket = net.connect(Number(target.port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // A gigabyte declared, a byte sent now and then: the server must not wait for the rest.
    socket.write(`POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{`);
    const trickle = setInterval(() => socket.writable && socket.write(' '), 200);
    try {
      const outcome = await Promise.race([closed.then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('still open'), 5000))]);
      expect(outcome).toBe('closed');
      expect(answer).toMatch(/^HTTP\/1\.1 401 /);
      expect(answer.toLowerCase()).toContain('connection: close');
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it("never reads another tenant's sessions through a symlink its tenant put in place of its folder or its seal log since the server started", async () => {
    const [cHome, dHome] = [tempDir(), tempDir()];
    const cId = await demoSession(cHome);
    const dId = await demoSession(dHome);
    const tokens = path.join(tempDir(), 'tokens.yaml');
    fs.writeFileSync(tokens, `tokens:\n  - token: ${TOKEN_A}\n    folders: [${path.join(cHome, 'sessions')}]\n`);
    const other = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    other.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      const otherUrl = await listeningUrl(other);
      const listed = async (): Promise<string[]> => {
        const c = new Client({ name: 'aura-test', version: '1.0.0' });
        await c.connect(new StreamableHTTPClientTransport(new URL(otherUrl), { requestInit: { headers: { Authorization: `Bearer ${TOKEN_A}` } } }));
        const rows = ((await c.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: { session_id: string }[] }).sessions;
        const found = await findings(c, { per_kind_limit: 200 });
        await c.close();
        return [...rows.map((row) => row.session_id), ...found.body.findings.map((f) => String(f.session_id))];
      };
      expect(await listed()).toContain(cId);
      // The tenant's folder moved aside, a link to the other tenant's in its place.
      fs.renameSync(path.join(cHome, 'sessions'), path.join(cHome, 'mine'));
      fs.symlinkSync(path.join(dHome, 'sessions'), path.join(cHome, 'sessions'));
      expect(await listed()).not.toContain(dId);
      expect(stderr).toMatch(/sessions is now reached through a symlink: not followed/);
      // Its own folder back, its seal log a link to the other tenant's.
      fs.rmSync(path.join(cHome, 'sessions'));
      fs.renameSync(path.join(cHome, 'mine'), path.join(cHome, 'sessions'));
      fs.renameSync(path.join(cHome, 'seals.jsonl'), path.join(cHome, 'seals.mine'));
      fs.symlinkSync(path.join(dHome, 'seals.jsonl'), path.join(cHome, 'seals.jsonl'));
      expect(await listed()).not.toContain(dId);
      expect(stderr).toMatch(/seals\.jsonl is now reached through a symlink: not followed/);
      // Its seal log back, and its whole home a link to the other tenant's.
      fs.rmSync(path.join(cHome, 'seals.jsonl'));
      fs.renameSync(path.join(cHome, 'seals.mine'), path.join(cHome, 'seals.jsonl'));
      expect(await listed()).toContain(cId);
      fs.renameSync(cHome, `${cHome}.mine`);
      fs.symlinkSync(dHome, cHome);
      expect(await listed()).not.toContain(dId);
    } finally {
      other.kill('SIGTERM');
    }
  });

  it('says identity_shared without a session_key (C8), and never shows another tenant (C13)', async () => {
    const a = await client(TOKEN_A);
    const result = await findings(a, { per_kind_limit: 200 });
    expect(result.body.identity_shared).toBe(true);
    expect(schemaErrors(result.body)).toEqual([]);
    expect(result.body.findings.map((f) => f.session_id)).not.toContain(tenantB.id);
    const keyed = await findings(a, { session_key: tenantA.ids['a'], per_kind_limit: 200 });
    expect(keyed.body).not.toHaveProperty('identity_shared');
    // Another tenant's session id names no session this caller may read: an empty scope, no finding about it.
    const foreign = await findings(a, { session_key: tenantB.id, per_kind_limit: 200 });
    expect(foreign.isError).toBe(false);
    expect(foreign.body.scope).toEqual({ session_key: tenantB.id, sessions: [] });
    expect(foreign.body.findings.map((f) => f.session_id)).not.toContain(tenantB.id);
    const report = await a.callTool({ name: 'get_session_report', arguments: { session_key: tenantB.id } });
    expect(report.isError).toBe(true);
    await a.close();
    const b = await client(TOKEN_B);
    const mine = await findings(b, { per_kind_limit: 200 });
    expect(new Set(mine.body.findings.map((f) => f.session_id))).toEqual(new Set([tenantB.id]));
    await b.close();
  });

  it('answers a body that is not JSON with 400 (-32700) and one over 4 MiB with 413, as the SDK does, and serves the next', async () => {
    const auth = { Authorization: `Bearer ${TOKEN_A}` };
    const notJson = await post(auth, '{"jsonrpc": "2.0", "id": 1, ');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const over = await post(auth, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(4 * 1024 * 1024) } });
    expect(over.status).toBe(413);
    expect(JSON.parse(over.body)).toMatchObject({ id: null, error: { code: -32000, message: expect.stringContaining('must not exceed 4194304 bytes') } });
    const next = await post(auth);
    expect(next.status).toBe(200);
    expect(next.body).toContain('get_session_findings');
  });

  for (const version of ['2025-06-18', '2025-11-25']) {
    it(`serves protocol version ${version}`, async () => {
      const res = await post({ Authorization: `Bearer ${TOKEN_A}` }, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
      expect(res.status).toBe(200);
      const data = res.body.split('\n').find((line) => line.startsWith('data: '));
      const message = JSON.parse(data === undefined ? res.body : data.slice(6)) as { result: { protocolVersion: string; serverInfo: { name: string } } };
      expect(message.result).toMatchObject({ protocolVersion: version, serverInfo: { name: 'aura' } });
    });
  }

  it('answers @modelcontextprotocol/inspector --cli over HTTP with the bearer token', () => {
    const inspector = path.join(REPO, 'node_modules', '.bin', 'mcp-inspector');
    const run = spawnSync(inspector, ['--cli', url, '--transport', 'http', '--header', `Authorization: Bearer ${TOKEN_A}`, '--method', 'tools/call', '--tool-name', 'get_session_findings', '--tool-arg', 'per_kind_limit=1'], {
      env: { ...process.env, HOME: tempDir() },
      encoding: 'utf8',
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('identity_shared');
  });

  it('passes the two-pull check over HTTP', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO, 'scripts', 'check-superauditor.ts'), '--url', url, '--token', TOKEN_A], { cwd: REPO, encoding: 'utf8' });
    expect(run.stdout).toContain('superauditor two-pull check: passed');
    expect(run.status).toBe(0);
  });
});

describe("aura mcp over Streamable HTTP tells a tenant nothing of the server's paths", () => {
  const servers: ChildProcess[] = [];
  afterAll(() => {
    for (const server of servers) server.kill('SIGTERM');
  });

  it('names folders, files, seal logs and anchor copies without a path in any answer or refusal, and still says what went wrong', async () => {
    const root = tempDir('aura-tenant-paths-');
    const home = (name: string): string => path.join(root, name);
    const folder = (name: string): string => path.join(home(name), 'sessions');
    const ids = new Map<string, string>();
    for (const name of ['a', 'a2', 'b', 'renamed', 'file', 'sealdir', 'seallink', 'deleted', 'anchordir']) ids.set(name, await demoSession(home(name)));
    const id = (name: string): string => ids.get(name) as string;
    const at = (name: string): string => path.join(folder('a'), name);
    const own = id('a');
    // Tenant a's first folder: every kind of file its readers cannot read, and a broken seal log and anchor copy.
    fs.mkdirSync(at('aura_sess_000000000009.jsonl'));
    expect(spawnSync('mkfifo', [at('aura_sess_00000000000a.jsonl')]).status).toBe(0);
    fs.symlinkSync(path.join(folder('b'), `${id('b')}.jsonl`), at('aura_sess_00000000000b.jsonl'));
    fs.copyFileSync(at(`${own}.jsonl`), at('aura_sess_00000000000e.jsonl'));
    fs.writeFileSync(at('aura_sess_00000000000e.summary.json'), 'not json');
    fs.copyFileSync(at(`${own}.jsonl`), at('aura_sess_00000000000f.jsonl'));
    fs.mkdirSync(at('aura_sess_00000000000f.summary.json'));
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'non_json_line.jsonl'), at('aura_sess_000000000010.jsonl'));
    fs.copyFileSync(path.join(AURA_PY, 'tampered', 'last_event_deleted.jsonl'), at('aura_sess_000000000011.jsonl'));
    fs.writeFileSync(at('aura_sess_000000000011.jsonl.lock'), 'not json');
    fs.writeFileSync(at('aura_sess_000000000013.summary.json'), '{}');
    fs.writeFileSync(at('aura_sess_000000000014.otel.jsonl'), '');
    fs.copyFileSync(at(`${own}.jsonl`), at('aura_sess_000000000017.jsonl'));
    fs.symlinkSync(path.join(folder('b'), `${id('b')}.summary.json`), at('aura_sess_000000000017.summary.json'));
    fs.appendFileSync(path.join(home('a'), 'seals.jsonl'), 'not json\n');
    const anchors = path.join(root, 'anchors');
    fs.mkdirSync(anchors);
    fs.writeFileSync(path.join(anchors, 'a.jsonl'), 'not json\n');
    fs.mkdirSync(path.join(anchors, 'anchordir.jsonl'));
    const tokens = path.join(root, 'tokens.yaml');
    const tenants = ['a', 'b', 'renamed', 'file', 'sealdir', 'seallink', 'deleted', 'anchordir'];
    const tokenOf = (tenant: string): string => `token-of-tenant-${tenant}-0123456789`;
    const grants = tenants.map((t) => `  - { token: ${tokenOf(t)}, folders: [${[folder(t), ...(t === 'a' ? [folder('a2')] : [])].join(', ')}] }`);
    fs.writeFileSync(tokens, ['tokens:', ...grants, 'anchors:', `  ${folder('a')}: ${path.join(anchors, 'a.jsonl')}`, `  ${folder('anchordir')}: ${path.join(anchors, 'anchordir.jsonl')}`, ''].join('\n'));
    const server = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    servers.push(server);
    let stderr = '';
    server.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const url = await listeningUrl(server);

    // Every text a tenant receives: content, structured content, and a protocol error's message and data.
    const told: string[] = [];
    const call = async (tenant: string, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string; body: Record<string, unknown> }> => {
      const client = new Client({ name: 'aura-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokenOf(tenant)}` } } }));
      try {
        const result = await client.callTool({ name, arguments: args });
        told.push(JSON.stringify(result));
        return { isError: result.isError === true, text: (result.content as { text: string }[])[0]?.text ?? '', body: (result.structuredContent ?? {}) as Record<string, unknown> };
      } catch (error) {
        const { message, data } = error as { message: string; data?: unknown };
        told.push(`${message} ${JSON.stringify(data) ?? ''}`);
        return { isError: true, text: message, body: {} };
      } finally {
        await client.close();
      }
    };
    const special = ['9', 'a', 'b', 'e', 'f', '10', '11', '13', '14', '17'].map((n) => `aura_sess_${n.padStart(12, '0')}`);
    const hostile: unknown[] = ['../x', '../../etc/passwd', '/etc/passwd', '/var/lib/aura/sessions', `${own}.jsonl`, id('b'), 42, null, {}, ['x']];
    for (const key of [own, id('a2'), ...special, ...hostile]) {
      for (const tool of ['get_session_findings', 'get_session_report', 'verify_session']) await call('a', tool, { session_key: key, per_kind_limit: 200 });
    }
    for (const args of [{ per_kind_limit: 0 }, { per_kind_limit: 'x'.repeat(100) }, { include_summary: 'yes' }]) await call('a', 'get_session_findings', args);
    await call('a', 'no_such_tool', {});

    const findings = (await call('a', 'get_session_findings', { per_kind_limit: 200 })).body['findings'] as { kind: string; message: string; session_id?: string; path?: string; sessions_dir?: string }[];
    const about = (session: string, kind: string): string => findings.find((f) => f.session_id === session && f.kind === kind)?.message ?? `no ${kind} about ${session}`;
    expect(about('aura_sess_000000000009', 'CHECK_CRASHED')).toContain('cannot read aura_sess_000000000009.jsonl: it is a folder, not a file (EISDIR)');
    expect(about('aura_sess_00000000000a', 'CHECK_CRASHED')).toContain('cannot read aura_sess_00000000000a.jsonl: it is a FIFO (named pipe), not a regular file');
    expect(about('aura_sess_00000000000b', 'CHECK_CRASHED')).toContain('cannot read aura_sess_00000000000b.jsonl: it is a symlink leading outside the sessions folder');
    expect(about('aura_sess_00000000000e', 'SUMMARY_MISMATCH')).toContain('it cannot be read (aura_sess_00000000000e.summary.json is not a JSON summary');
    expect(about('aura_sess_00000000000f', 'CHECK_CRASHED')).toContain('cannot read aura_sess_00000000000f.summary.json: it is a folder, not a file (EISDIR)');
    expect(about('aura_sess_000000000017', 'CHECK_CRASHED')).toContain('cannot read aura_sess_000000000017.summary.json: it is a symlink leading outside the sessions folder');
    expect(findings.find((f) => f.session_id === 'aura_sess_000000000013' && f.kind === 'ORPHAN_ARTIFACT')).toMatchObject({ message: 'aura_sess_000000000013.summary.json has no trail beside it', path: 'aura_sess_000000000013.summary.json' });
    expect(findings.filter((f) => f.kind === 'SEAL_LOG_BROKEN').map((f) => f.message)).toEqual(['line 2 is not JSON', "the seal log's anchor copy: line 1 is not JSON"]);
    // A token that reads several folders learns which holds what by their places in its grant.
    expect(new Set(findings.map((f) => f.sessions_dir))).toEqual(new Set(['folders[0]', 'folders[1]']));
    const listed = (await call('a', 'list_sessions', {})).body['sessions'] as { session_id: string; sessions_dir: string }[];
    expect(listed.find((row) => row.session_id === id('a2'))?.sessions_dir).toBe('folders[1]');
    expect(await call('a', 'get_session_report', { session_key: 'aura_sess_00000000000f' })).toMatchObject({ isError: true, text: 'cannot read aura_sess_00000000000f.summary.json: it is a folder, not a file (EISDIR)' });
    expect((await call('a', 'get_session_report', { session_key: 'aura_sess_00000000000e' })).body['disagreements']).toEqual([expect.stringContaining('aura_sess_00000000000e.summary.json is not a JSON summary')]);
    // A summary with no trail and no verdict has no report to give: a refusal that says so, not an answer the schema refuses.
    expect(await call('a', 'get_session_report', { session_key: 'aura_sess_000000000013' })).toMatchObject({ isError: true, text: expect.stringContaining('aura_sess_000000000013.summary.json is not a summary a report can be read from: it has no audit_report verdict') as unknown });
    expect((await call('a', 'verify_session', { session_key: 'aura_sess_00000000000a' })).text).toBe('session aura_sess_00000000000a: aura_sess_00000000000a.jsonl is not read: it is a FIFO (named pipe), not a regular file');
    expect((await call('a', 'verify_session', { session_key: id('b') })).text).toBe(`no session ${id('b')} in the sessions this caller may read`);

    // Folders broken after the start: moved away, a file in their place, their seal log a folder or a link, gone.
    fs.renameSync(folder('renamed'), path.join(home('renamed'), 'moved'));
    fs.rmSync(folder('file'), { recursive: true });
    fs.writeFileSync(folder('file'), 'a file');
    fs.rmSync(path.join(home('sealdir'), 'seals.jsonl'));
    fs.mkdirSync(path.join(home('sealdir'), 'seals.jsonl'));
    fs.rmSync(path.join(home('seallink'), 'seals.jsonl'));
    fs.symlinkSync(path.join(home('b'), 'seals.jsonl'), path.join(home('seallink'), 'seals.jsonl'));
    fs.rmSync(folder('deleted'), { recursive: true });
    const failures: Record<string, string> = {};
    const crashes: Record<string, unknown[]> = {};
    for (const tenant of ['renamed', 'file', 'sealdir', 'seallink', 'deleted', 'anchordir']) {
      for (const tool of ['get_session_findings', 'list_sessions', 'get_session_report', 'verify_session']) {
        const answer = await call(tenant, tool, ['get_session_report', 'verify_session'].includes(tool) ? { session_key: id(tenant) } : {});
        if (answer.isError) failures[`${tenant} ${tool}`] = answer.text;
        if (tool === 'get_session_findings') crashes[tenant] = ((answer.body['findings'] ?? []) as Record<string, unknown>[]).filter((f) => f['kind'] === 'CHECK_CRASHED' && f['session_id'] === undefined);
      }
    }
    // The findings channel says a folder it cannot read as a finding (SuperAuditor §5.4), one left out too, never an empty answer.
    expect(Object.keys(failures).filter((key) => key.endsWith('get_session_findings'))).toEqual([]);
    expect(crashes['file']).toEqual([expect.objectContaining({ probe: 'store', message: 'cannot read the sessions folder folders[0]: a part of the path is a file, not a folder (ENOTDIR)' })]);
    expect(crashes['sealdir']).toEqual([expect.objectContaining({ message: 'cannot read the seal log of folders[0]: it is a folder, not a file (EISDIR)' })]);
    expect(crashes['seallink']).toEqual([expect.objectContaining({ message: 'folders[0] is left out: its seal log is now reached through a symlink, which is not followed' })]);
    // With several folders, one that cannot be read hides none of the others' findings.
    fs.rmSync(path.join(home('a2'), 'seals.jsonl'), { force: true });
    fs.mkdirSync(path.join(home('a2'), 'seals.jsonl'));
    const both = (await call('a', 'get_session_findings', { per_kind_limit: 200 })).body['findings'] as Record<string, unknown>[];
    expect(both.filter((f) => f['kind'] === 'CHECK_CRASHED' && f['session_id'] === undefined)).toEqual([expect.objectContaining({ sessions_dir: 'folders[1]', message: 'cannot read the seal log of folders[1]: it is a folder, not a file (EISDIR)' })]);
    expect(both.some((f) => f['sessions_dir'] === 'folders[0]' && f['session_id'] === id('a'))).toBe(true);
    expect(failures['sealdir list_sessions']).toBe('cannot read the seal log of folders[0]: it is a folder, not a file (EISDIR)');
    expect(failures['anchordir verify_session']).toBe('cannot read the anchor copy of the seal log of folders[0]: it is a folder, not a file (EISDIR)');
    expect(failures['renamed get_session_report']).toBe(`no session ${id('renamed')} in the sessions this caller may read`);

    // The server's folders are all under the temp folder here; its home is the other place a path would name.
    const markers = [root, os.tmpdir(), os.homedir(), '/tmp/'].filter((marker) => marker.length > 1);
    for (const text of told) for (const marker of markers) expect(text, text.slice(0, 300)).not.toContain(marker);
    // The operator's log keeps the paths.
    expect(stderr).toContain(`cannot read ${path.join(home('sealdir'), 'seals.jsonl')}`);
  });

  it("says why a system call failed without the path in Node's words, and names an error's file as the reader may be told it", () => {
    const loop = path.join(tempDir(), 'loop');
    fs.symlinkSync(loop, loop);
    let error: unknown;
    try {
      fs.statSync(loop);
    } catch (caught) {
      error = caught;
    }
    expect(describeCause(error)).toBe('too many symbolic links encountered (ELOOP)');
    const file = path.join(tempDir(), 'aura_sess_000000000001.jsonl');
    expect(describeNaming(new ReadError(file, error), path.basename)).toBe('cannot read aura_sess_000000000001.jsonl: too many symbolic links encountered (ELOOP)');
  });
});
