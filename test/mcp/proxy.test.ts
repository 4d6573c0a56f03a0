/**
 * `aura proxy` end to end: the built binary in front of published MCP servers from the npm registry
 * (`@modelcontextprotocol/server-everything`, `@modelcontextprotocol/server-filesystem`, pinned),
 * driven by the SDK's client (stdio and HTTP) and by `@modelcontextprotocol/inspector --cli`; faults
 * against a tiny upstream of our own (test/fixtures/fault-upstream.ts) that crashes or stalls on cue.
 */

import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as net from 'node:net';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ListRootsRequestSchema, LoggingMessageNotificationSchema, type CallToolResult, type JSONRPCMessage, type McpError, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SecretNotFoundError } from '../../src/errors.js';
import { findingsToolName, refusal } from '../../src/mcp/proxy.js';
import { MAX_LOG_LINE } from '../../src/mcp/upstream-log.js';
import { readTrail } from '../../src/spine/trail-reader.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { listSessionIds, sessionFiles } from '../../src/store/session-files.js';
import { aura, AURA_BIN, auraJson, listeningUrl } from '../helpers/cli.js';
import { REPO } from '../helpers/fixtures.js';
import { writeProfile } from '../helpers/profiles.js';
import { spansOnDisk } from '../helpers/otlp-receiver.js';
import { tempDir } from '../helpers/temp.js';

const EVERYTHING = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const FILESYSTEM = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const FAULT_UPSTREAM = ['--import', 'tsx', path.join(REPO, 'test', 'fixtures', 'fault-upstream.ts')];
const INSPECTOR = path.join(REPO, 'node_modules', '.bin', 'mcp-inspector');

interface TrailEvent {
  readonly kind: string;
  readonly payload: Record<string, unknown>;
}

function proxyArgs(home: string, profile: string | null, upstream: readonly string[]): string[] {
  return [AURA_BIN, '--home', home, 'proxy', ...(profile === null ? [] : ['--profile', profile]), '--', ...upstream];
}

async function connect(args: readonly string[], env?: Record<string, string>): Promise<{ client: Client; transport: StdioClientTransport }> {
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [...args], cwd: REPO, stderr: 'pipe', ...(env === undefined ? {} : { env }) });
  await client.connect(transport);
  return { client, transport };
}

function onlySession(home: string): string {
  const ids = listSessionIds(path.join(home, 'sessions'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}

function events(home: string, sessionId: string): TrailEvent[] {
  const trail = sessionFiles(path.join(home, 'sessions'), sessionId).trail;
  return fs
    .readFileSync(trail, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TrailEvent);
}

function textOf(result: CallToolResult): string {
  return (result.content[0] as { text: string }).text;
}

/** Waits until the session's trail is closed by the proxy (it closes after the client leaves). */
async function closedTrail(home: string, sessionId: string): Promise<TrailEvent[]> {
  const trail = sessionFiles(path.join(home, 'sessions'), sessionId).trail;
  for (let i = 0; i < 200; i++) {
    if (!fs.existsSync(`${trail}.lock`)) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return events(home, sessionId);
}

describe('aura proxy in front of server-everything, with the SDK client over stdio', () => {
  let home: string;
  let client: Client;
  let direct: Client;
  let sessionId: string;

  beforeAll(async () => {
    home = tempDir();
    const profile = writeProfile(['rules:', '  - { type: deny_tools, tools: [get-env] }', '  - { type: confirm_before, tools: [get-sum] }', ''].join('\n'));
    ({ client } = await connect(proxyArgs(home, profile, [process.execPath, EVERYTHING, 'stdio'])));
    ({ client: direct } = await connect([EVERYTHING, 'stdio']));
    sessionId = onlySession(home);
  });
  afterAll(async () => {
    await direct.close();
  });

  it('mirrors the upstream: server info, capabilities, tools plus get_session_findings, resources and prompts', async () => {
    expect(client.getServerVersion()).toEqual(direct.getServerVersion());
    const capabilities = { ...direct.getServerCapabilities() };
    expect(capabilities.tasks).toBeDefined();
    delete capabilities.tasks;
    expect(client.getServerCapabilities()).toEqual(capabilities);
    const through = await client.listTools();
    const upstream = await direct.listTools();
    expect(through.tools.slice(0, -1)).toEqual(upstream.tools);
    expect(through.tools.at(-1)).toMatchObject({ name: 'get_session_findings', annotations: { readOnlyHint: true } });
    expect(await client.listResources()).toEqual(await direct.listResources());
    expect(await client.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
    expect(await client.listPrompts()).toEqual(await direct.listPrompts());
  });

  it('passes a listed tool through unchanged, and records it', async () => {
    const result = await client.callTool({ name: 'echo', arguments: { message: 'hello through aura' } });
    expect(result).toEqual(await direct.callTool({ name: 'echo', arguments: { message: 'hello through aura' } }));
    const recorded = events(home, sessionId).filter((e) => e.payload['tool'] === 'echo');
    expect(recorded.map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.result']);
    expect(recorded[2]?.payload['result']).toEqual(result);
  });

  it('passes prompts/get and resources/read through', async () => {
    const { prompts } = await direct.listPrompts();
    const simple = prompts.find((p) => (p.arguments ?? []).length === 0);
    expect(simple).toBeDefined();
    expect(await client.getPrompt({ name: simple?.name ?? '' })).toEqual(await direct.getPrompt({ name: simple?.name ?? '' }));
    const { resources } = await direct.listResources();
    const uri = resources[0]?.uri ?? '';
    expect(await client.readResource({ uri })).toEqual(await direct.readResource({ uri }));
  });

  it('denies a tool the upstream marks readOnlyHint: hints are not trust; the message names the rule', async () => {
    const listed = (await client.listTools()).tools.find((t) => t.name === 'get-env');
    expect(listed?.annotations?.readOnlyHint).toBe(true);
    const result = (await client.callTool({ name: 'get-env', arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('POLICY_DENIED');
    expect(textOf(result)).toContain('deny_tools');
    expect(textOf(result)).toContain('reach the goal another way');
    const recorded = events(home, sessionId).filter((e) => /^(tool|constraint)\./.test(e.kind) && JSON.stringify(e.payload).includes('get-env'));
    expect(recorded.map((e) => e.kind)).toEqual(['tool.intent', 'constraint.violated']);
  });

  it('keeps the upstream isError flag visible in tool.result as result.isError', async () => {
    const result = (await client.callTool({ name: 'echo', arguments: { message: 42 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    const last = events(home, sessionId).findLast((e) => e.kind === 'tool.result');
    expect(objectPayload(last as TrailEvent, 'result')['isError']).toBe(true);
  });

  it('holds a call for approval, and aura approve from another process releases exactly that call, once', async () => {
    const args = { a: 2, b: 3 };
    const held = (await client.callTool({ name: 'get-sum', arguments: args })) as CallToolResult;
    expect(held.isError).toBe(true);
    const requestId = String((held._meta?.['aura/refusal'] as { request_id: string }).request_id);
    expect(textOf(held)).toContain(`aura approve ${sessionId} ${requestId} --principal`);

    const approved = auraJson(['approve', sessionId, requestId, '--principal', 'alice@example.test'], { home });
    expect(approved.status, approved.stderr).toBe(0);
    expect(approved.json).toMatchObject({ session_id: sessionId, request_id: requestId, principal: 'alice@example.test', tool: 'get-sum' });
    const twice = aura(['approve', sessionId, requestId, '--principal', 'bob'], { home });
    expect(twice.status).toBe(2);
    expect(twice.stderr).toContain('already approved');

    // Other arguments are another call: the approval does not release it.
    const other = (await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 4 } })) as CallToolResult;
    expect(other.isError).toBe(true);
    const retried = (await client.callTool({ name: 'get-sum', arguments: args })) as CallToolResult;
    expect(retried.isError).toBeFalsy();
    expect(textOf(retried)).toContain('5');
    const again = (await client.callTool({ name: 'get-sum', arguments: args })) as CallToolResult;
    expect(again.isError).toBe(true);

    const trail = events(home, sessionId);
    const approval = trail.find((e) => e.kind === 'constraint.approved');
    expect(approval?.payload).toMatchObject({ request_id: requestId, principal: 'alice@example.test', tool: 'get-sum' });
    const used = trail.find((e) => e.kind === 'tool.call' && objectPayload(e, 'approval')['request_id'] === requestId);
    expect(used?.payload['principal']).toBe('alice@example.test');
    const usedAgain = aura(['approve', sessionId, requestId, '--principal', 'bob'], { home });
    expect(usedAgain.status).toBe(2);
    expect(usedAgain.stderr).toContain('already used');
  });

  it('refuses approvals it cannot hand over: unknown request, a key outside the folder, no principal', () => {
    const unknown = aura(['approve', sessionId, 'req_0000000000', '--principal', 'alice'], { home });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no such request');
    const escape = aura(['approve', '../x', 'req_0000000000', '--principal', 'alice'], { home });
    expect(escape.status).toBe(2);
    expect(escape.stderr).toContain('invalid session id');
    const missing = aura(['approve', 'aura_sess_ffffffffffff', 'req_0000000000', '--principal', 'alice'], { home });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('not found');
    const anonymous = aura(['approve', sessionId, 'req_0000000000'], { home });
    expect(anonymous.status).toBe(2);
    expect(anonymous.stderr).toContain('--principal');
  });

  it('serves get_session_findings through the proxy, confined to this connection, no key needed', async () => {
    const result = (await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent as { findings: { kind: string; session_id?: string }[]; _meta: Record<string, unknown> };
    expect(body._meta).toMatchObject({ superauditor: '1.1' });
    expect(body.findings.map((f) => f.kind)).toContain('POLICY_VIOLATION');
    expect(body.findings.every((f) => f.session_id === undefined || f.session_id === sessionId)).toBe(true);
    const other = (await client.callTool({ name: 'get_session_findings', arguments: { session_key: 'aura_sess_ffffffffffff' } })) as CallToolResult;
    expect(other.isError).toBe(true);
    expect(textOf(other)).toContain('only its own session');
    const bad = (await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 0 } })) as CallToolResult;
    expect(bad.isError).toBe(true);
  });

  it('closes the session when the client leaves, with the reason; the trail verifies, with aura verify chain too', async () => {
    await client.close();
    const trail = await closedTrail(home, sessionId);
    const opened = trail.find((e) => e.kind === 'mcp.session');
    expect(opened?.payload).toEqual({
      mcp_session_id: null,
      transport: 'stdio',
      network_transport: 'pipe',
      protocol_version: expect.any(String),
      client: { name: 'proxy-test', version: '1.0.0' },
      upstream: { name: 'mcp-servers/everything', version: expect.any(String), transport: 'stdio' },
    });
    expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
    const files = sessionFiles(path.join(home, 'sessions'), sessionId);
    expect(verifyTrail(files.trail)).toMatchObject({ hash_chain_valid: true, complete: true });
    const verified = auraJson(['verify', 'chain', sessionId, '--summary', files.summary], { home });
    expect(verified.status).toBe(0);
    // Its spans are MCP tool calls: the attributes of the mcp.session event, and tool_error for isError.
    const tools = spansOnDisk(files.otel).filter((span) => span.name.startsWith('execute_tool '));
    expect(tools.length).toBeGreaterThan(0);
    for (const span of tools) expect(span.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'network.transport': 'pipe', 'mcp.protocol.version': opened?.payload['protocol_version'] });
    expect(tools.some((span) => span.name === 'execute_tool echo' && span.attributes['error.type'] === 'tool_error')).toBe(true);
    const closedApprove = aura(['approve', sessionId, 'req_0000000000', '--principal', 'alice'], { home });
    expect(closedApprove.status).toBe(2);
    expect(closedApprove.stderr).toContain('is closed');
  });
});

function objectPayload(event: TrailEvent, key: string): Record<string, unknown> {
  const value = event.payload[key];
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}

describe('aura proxy relays what the upstream asks of the client, and progress', () => {
  it('forwards sampling and roots requests from server-everything to a client that offers them', async () => {
    const home = tempDir();
    const client = new Client({ name: 'capable-client', version: '1.0.0' }, { capabilities: { sampling: {}, roots: { listChanged: true } } });
    const sampled: string[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      sampled.push(JSON.stringify(request.params.messages));
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled by the client' } };
    });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///srv/project', name: 'project' }] }));
    await client.connect(new StdioClientTransport({ command: process.execPath, args: proxyArgs(home, null, [process.execPath, EVERYTHING, 'stdio']), cwd: REPO, stderr: 'pipe' }));
    // server-everything offers these tools only to a client that declared the capabilities: the proxy mirrored them.
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['trigger-sampling-request', 'get-roots-list']));
    const sampling = (await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi' } })) as CallToolResult;
    expect(JSON.stringify(sampling.content)).toContain('sampled by the client');
    expect(sampled.join()).toContain('say hi');
    const roots = (await client.callTool({ name: 'get-roots-list', arguments: {} })) as CallToolResult;
    expect(JSON.stringify(roots.content)).toContain('file:///srv/project');

    // Progress reaches the client under its own token. The last step's notification comes right
    // before the result, and an SDK client that reads both in one chunk drops it (with or without
    // the proxy): so the steps seen are 1, 2 and perhaps 3.
    const progress: Progress[] = [];
    const long = (await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p) })) as CallToolResult;
    expect(long.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([1, 2, 3].slice(0, progress.length).map((step) => ({ progress: step, total: 3 })));
    await client.close();
  });
});

describe('aura proxy in front of server-filesystem', () => {
  let home: string;
  let files: string;
  let profile: string;

  beforeAll(() => {
    home = tempDir();
    files = fs.realpathSync(tempDir('aura-proxy-files-'));
    fs.writeFileSync(path.join(files, 'notes.txt'), 'kept as is\n');
    profile = writeProfile(['agent_ref: acme/files', 'rules:', '  - { type: deny_tools, tools: [write_file, edit_file, move_file] }', ''].join('\n'));
  });

  it('never lets a denied write reach the upstream: no file appears, and the trail holds no call', async () => {
    const { client } = await connect(proxyArgs(home, profile, [process.execPath, FILESYSTEM, files]));
    const target = path.join(files, 'written.txt');
    const denied = (await client.callTool({ name: 'write_file', arguments: { path: target, content: 'should not exist' } })) as CallToolResult;
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain('deny_tools');
    expect(fs.existsSync(target)).toBe(false);
    const read = (await client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'notes.txt') } })) as CallToolResult;
    expect(textOf(read)).toContain('kept as is');
    await client.close();
    const sessionId = onlySession(home);
    const trail = await closedTrail(home, sessionId);
    expect(trail.some((e) => e.kind === 'tool.call' && e.payload['tool'] === 'write_file')).toBe(false);
    expect(trail[0]?.payload['agent_ref']).toBe('acme/files');
  });

  // One inspector run a test: each starts the inspector, aura and the upstream, three processes.
  function inspector(args: readonly string[]): SpawnSyncReturns<string> {
    const base = ['--cli', process.execPath, ...proxyArgs(home, profile, [process.execPath, FILESYSTEM, files])];
    return spawnSync(INSPECTOR, [...base, ...args], { env: { ...process.env, HOME: tempDir() }, encoding: 'utf8', cwd: REPO });
  }

  it('answers @modelcontextprotocol/inspector --cli with a listing', () => {
    const listed = inspector(['--method', 'tools/list']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('write_file');
    expect(listed.stdout).toContain('get_session_findings');
  });

  it('answers @modelcontextprotocol/inspector --cli with an allowed call', () => {
    const allowed = inspector(['--method', 'tools/call', '--tool-name', 'list_directory', '--tool-arg', `path=${files}`]);
    expect(allowed.status, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('notes.txt');
  });

  it('answers @modelcontextprotocol/inspector --cli with a denied call (non-zero exit), and nothing is written', () => {
    const denied = inspector(['--method', 'tools/call', '--tool-name', 'write_file', '--tool-arg', `path=${path.join(files, 'x.txt')}`, '--tool-arg', 'content=x']);
    expect(denied.status).not.toBe(0);
    expect(denied.stdout).toContain('POLICY_DENIED');
    expect(fs.existsSync(path.join(files, 'x.txt'))).toBe(false);
  });
});

/** A stdio connection whose `initialize` declares `_meta` (the SDK's client sends none of its own). */
async function connectDeclaring(args: readonly string[], meta: Record<string, unknown>): Promise<Client> {
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [...args], cwd: REPO, stderr: 'pipe' });
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => send('method' in message && message.method === 'initialize' ? { ...message, params: { ...message.params, _meta: meta } } : message);
  await client.connect(transport);
  return client;
}

describe('aura proxy with a client that declares its session key', () => {
  it('records the key the client declares in initialize, and its findings channel scopes by it', async () => {
    const home = tempDir();
    const client = await connectDeclaring(proxyArgs(home, null, [process.execPath, EVERYTHING, 'stdio']), { 'aura/session_key': 'my-client-1' });
    const sessionId = onlySession(home);
    expect(events(home, sessionId)[1]).toMatchObject({ kind: 'session.open', payload: { session_key: 'my-client-1' } });
    const mine = (await client.callTool({ name: 'get_session_findings', arguments: { session_key: 'my-client-1' } })) as CallToolResult;
    expect(mine.isError).toBeFalsy();
    expect(mine.structuredContent).toMatchObject({ scope: { session_key: 'my-client-1', sessions: [sessionId] } });
    const none = (await client.callTool({ name: 'get_session_findings', arguments: { session_key: 'someone-else' } })) as CallToolResult;
    expect(none.isError).toBeFalsy();
    expect(none.structuredContent).toMatchObject({ scope: { session_key: 'someone-else', sessions: [] } });
    await client.close();
  });

  it('refuses a declared key that is not a label, with the reason, and opens no session', async () => {
    const home = tempDir();
    const failed = await connectDeclaring(proxyArgs(home, null, [process.execPath, EVERYTHING, 'stdio']), { 'aura/session_key': 'a\u0000b' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(String(failed)).toContain('aura/session_key');
    expect(listSessionIds(path.join(home, 'sessions'))).toEqual([]);
  });
});

/** Starts `aura proxy --http 0` with these tokens and flags in front of `upstream`; resolves once it listens. */
async function httpProxy(home: string, tokens: readonly string[], flags: readonly string[], upstream: readonly string[]): Promise<{ proxy: ChildProcess; url: string }> {
  const file = path.join(home, 'tokens.yaml');
  fs.writeFileSync(file, `tokens:\n${tokens.map((token) => `  - { token: ${token}, folders: [sessions] }\n`).join('')}`);
  const proxy = spawn(process.execPath, [AURA_BIN, '--home', home, 'proxy', '--http', '0', '--tokens', file, ...flags, '--', ...upstream], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  return { proxy, url: await listeningUrl(proxy) };
}

describe('aura proxy over Streamable HTTP', () => {
  const TOKEN = 'proxy-test-token-0123456789';
  const OTHER_TOKEN = 'proxy-other-token-0123456789';
  let home: string;
  let proxy: ChildProcess;
  let url: string;

  beforeAll(async () => {
    home = tempDir();
    ({ proxy, url } = await httpProxy(home, [TOKEN, OTHER_TOKEN], [], [process.execPath, EVERYTHING, 'stdio']));
  });
  afterAll(() => {
    proxy.kill('SIGTERM');
  });

  it('answers 401 to a request without a valid bearer token', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(401);
    expect((await fetch(url, { method: 'POST', headers: { ...headers, Authorization: 'Bearer wrong-token-0123456789' }, body })).status).toBe(401);
    // A page from elsewhere is refused even with the token (MCP's Origin rule), before anything is opened for it.
    expect((await fetch(url, { method: 'POST', headers: { ...headers, Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example' }, body })).status).toBe(403);
    expect(listSessionIds(path.join(home, 'sessions'))).toEqual([]);
  });

  it('serves one session per MCP session, and closes it with the reason when the client ends it', async () => {
    const client = new Client({ name: 'http-test', version: '2.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo');
    expect(textOf((await client.callTool({ name: 'echo', arguments: { message: 'over http' } })) as CallToolResult)).toBe('Echo: over http');
    const sessionId = onlySession(home);
    // Another valid token cannot reach this MCP session.
    const stolen = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${OTHER_TOKEN}`, 'Mcp-Session-Id': transport.sessionId ?? '' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(stolen.status).toBe(404);
    await transport.terminateSession();
    await client.close();
    const trail = await closedTrail(home, sessionId);
    expect(trail.find((e) => e.kind === 'mcp.session')?.payload).toMatchObject({ transport: 'http', network_transport: 'tcp', mcp_session_id: transport.sessionId ?? expect.any(String), client: { name: 'http-test' } });
    // A client that declares no key is known by the MCP session it names on every request.
    const mcpSessionId = trail.find((e) => e.kind === 'mcp.session')?.payload['mcp_session_id'];
    expect(mcpSessionId).toEqual(expect.any(String));
    expect(trail.find((e) => e.kind === 'session.open')?.payload).toMatchObject({ session_key: mcpSessionId });
    expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
    expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it("names the proxy's files by what they are, not where they are, when its findings tool cannot read them", async () => {
    const client = new Client({ name: 'http-test', version: '2.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    const sealLog = path.join(home, 'seals.jsonl');
    const aside = `${sealLog}.aside`;
    if (fs.existsSync(sealLog)) fs.renameSync(sealLog, aside);
    fs.mkdirSync(sealLog);
    try {
      const answer = JSON.stringify(await client.callTool({ name: 'get_session_findings', arguments: {} }));
      expect(answer).toContain('the seal log of sessions');
      expect(answer).not.toContain(home);
    } finally {
      fs.rmdirSync(sealLog);
      if (fs.existsSync(aside)) fs.renameSync(aside, sealLog);
    }
    await transport.terminateSession();
    await client.close();
  });
});

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts an MCP server over Streamable HTTP that says on stderr which port it listens on; resolves with it and its URL once it does. */
async function upstreamOverHttp(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ upstream: ChildProcess; url: string }> {
  const upstream = spawn(process.execPath, [...args], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<string>((resolve, reject) => {
    let seen = '';
    upstream.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const found = /listening on port (\d+)/.exec(seen);
      if (found !== null) resolve(found[1] as string);
    });
    upstream.once('exit', () => reject(new Error(`upstream exited: ${seen}`)));
  });
  return { upstream, url: `http://127.0.0.1:${port}/mcp` };
}

describe('aura proxy in front of a Streamable HTTP upstream (--upstream-url)', () => {
  it('reaches server-everything over HTTP and records the upstream transport', async () => {
    const { upstream, url } = await upstreamOverHttp([EVERYTHING, 'streamableHttp'], { ...process.env, PORT: String(await freePort()) });
    try {
      const home = tempDir();
      const { client } = await connect([AURA_BIN, '--home', home, 'proxy', '--upstream-url', url]);
      expect(textOf((await client.callTool({ name: 'echo', arguments: { message: 'to an http upstream' } })) as CallToolResult)).toBe('Echo: to an http upstream');
      await client.close();
      const sessionId = onlySession(home);
      const trail = await closedTrail(home, sessionId);
      expect(trail.find((e) => e.kind === 'mcp.session')?.payload['upstream']).toMatchObject({ name: 'mcp-servers/everything', transport: 'http' });
      expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
    } finally {
      upstream.kill('SIGTERM');
    }
  });
});

describe('aura proxy in front of a Streamable HTTP upstream, reading its answers', () => {
  for (const [answers, flags] of [['event streams', []], ['JSON', ['--json']]] as const) {
    it(`passes on and records an answer's keys as the server wrote them, escaped ones too, from ${answers}`, async () => {
      const { upstream, url } = await upstreamOverHttp([...FAULT_UPSTREAM, '--http', ...flags]);
      try {
        const home = tempDir();
        const raw = new RawClient([AURA_BIN, '--home', home, 'proxy', '--upstream-url', url]);
        await raw.initialize();
        // On Node 24 the first answer's key makes JSON.parse read the second's as `a\\` (nodejs/node#63785).
        for (const [id, key] of [[2, 'a\\'], [3, 'a"'], [4, 'plain']] as const) {
          raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'keys', arguments: { key, n: id } } });
          await raw.reply((m) => m['id'] === id);
          expect(raw.texts.get(id)).toContain(`"structuredContent":${JSON.stringify({ Probe: id, [key]: id })}`);
        }
        raw.child.stdin?.end();
        expect(await raw.exited()).toBe(0);
        const { chain, events: recorded } = readTrail(sessionFiles(path.join(home, 'sessions'), onlySession(home)).trail);
        const results = recorded.filter((e) => e.kind === 'tool.result').map((e) => Object.keys((e.payload['result'] as Record<string, unknown>)['structuredContent'] as object));
        expect(results).toEqual([['Probe', 'a\\'], ['Probe', 'a"'], ['Probe', 'plain']]);
        expect(chain).toMatchObject({ hash_chain_valid: true, complete: true });
      } finally {
        upstream.kill('SIGTERM');
      }
    });
  }
});

/** A client speaking raw JSON-RPC lines to the proxy, to send what no SDK client would. */
class RawClient {
  readonly child: ChildProcess;
  private readonly received: Record<string, unknown>[] = [];
  /** Each message as it came, for what the test's own JSON.parse could read differently. */
  readonly texts = new Map<unknown, string>();
  private readonly waiting: (() => void)[] = [];

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr?.resume();
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, unknown>;
      this.texts.set(message['id'], line);
      this.received.push(message);
      for (const wake of this.waiting.splice(0)) wake();
    });
  }

  send(message: object | string): void {
    this.child.stdin?.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  async reply(match: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.received.find(match);
      if (found !== undefined) {
        this.received.splice(this.received.indexOf(found), 1);
        return found;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  async initialize(): Promise<void> {
    this.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await this.reply((m) => m['id'] === 1);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  exited(): Promise<number | null> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) resolve(this.child.exitCode);
      else this.child.once('exit', (code) => resolve(code));
    });
  }
}

describe('aura proxy faults', () => {
  it('answers malformed JSON-RPC over stdio with -32700 / -32600, and keeps serving', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    raw.send('{this is not json');
    expect(await raw.reply((m) => m['id'] === null)).toMatchObject({ error: { code: -32700 } });
    raw.send({ hello: 'not json-rpc' });
    expect(await raw.reply((m) => m['id'] === null)).toMatchObject({ error: { code: -32600 } });
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'still here' } } });
    expect(await raw.reply((m) => m['id'] === 2)).toMatchObject({ result: { content: [{ type: 'text', text: 'still here' }] } });
    raw.child.stdin?.end();
    expect(await raw.exited()).toBe(0);
    const sessionId = onlySession(home);
    expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it("passes on and records an answer's keys as the server wrote them, escaped ones too", async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    // On Node 24 the first answer's key makes JSON.parse read the second's as `a\\` (nodejs/node#63785).
    for (const [id, key] of [[2, 'a\\'], [3, 'a"']] as const) {
      raw.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'keys', arguments: { key, n: id } } });
      await raw.reply((m) => m['id'] === id);
      expect(raw.texts.get(id)).toContain(`"structuredContent":${JSON.stringify({ Probe: id, [key]: id })}`);
    }
    raw.child.stdin?.end();
    expect(await raw.exited()).toBe(0);
    const trail = sessionFiles(path.join(home, 'sessions'), onlySession(home)).trail;
    const results = readTrail(trail).events.filter((e) => e.kind === 'tool.result').map((e) => e.payload['result'] as Record<string, unknown>);
    expect(results.map((result) => Object.keys(result['structuredContent'] as object))).toEqual([['Probe', 'a\\'], ['Probe', 'a"']]);
    expect(fs.readFileSync(trail, 'utf8')).toContain(String.raw`"structuredContent": {"Probe": 3, "a\"": 3}`);
  });

  it('records and passes on a call\'s arguments as the client wrote them, escaped keys too', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    // Written by hand: on Node 24 the first call's key `a\` makes JSON.parse read the second's `a"` as `a\`.
    raw.send(String.raw`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"Probe": 0, "a\\": 0, "text": "one"}}}`);
    await raw.reply((m) => m['id'] === 2);
    raw.send(String.raw`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"Probe": 1, "a\"": 1, "text": "two"}}}`);
    await raw.reply((m) => m['id'] === 3);
    raw.child.stdin?.end();
    expect(await raw.exited()).toBe(0);
    const trail = sessionFiles(path.join(home, 'sessions'), onlySession(home)).trail;
    const intents = readTrail(trail).events.filter((e) => e.kind === 'tool.intent').map((e) => Object.keys(e.payload['args'] as object));
    expect(intents).toEqual([['Probe', 'a\\', 'text'], ['Probe', 'a"', 'text']]);
  });

  it('closes the connection on a client message over the 10 MiB limit, as the SDK does, and the session closes whole', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    // The proxy may be gone before the whole message is written.
    raw.child.stdin?.on('error', () => undefined);
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(ELEVEN_MIB) } } });
    // The client keeps its end open: the proxy still exits.
    expect(await raw.exited()).toBe(0);
    const trail = sessionFiles(path.join(home, 'sessions'), onlySession(home)).trail;
    expect(readTrail(trail).events.some((e) => e.kind === 'tool.intent')).toBe(false);
    expect(verifyTrail(trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it('turns an upstream crash mid-call into an error result, closes the session as upstream_crashed, and the trail verifies', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'crash', arguments: {} } });
    const reply = await raw.reply((m) => m['id'] === 2);
    expect(reply).toMatchObject({ result: { isError: true } });
    expect(JSON.stringify(reply)).toContain('upstream_crashed');
    expect(await raw.exited()).toBe(0);
    const sessionId = onlySession(home);
    const trail = events(home, sessionId);
    expect(trail.find((e) => e.kind === 'tool.error')?.payload['tool']).toBe('crash');
    expect(trail.find((e) => e.kind === 'mcp.upstream_exit')?.payload).toEqual({ code: 3, signal: null });
    expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'upstream_crashed' } });
    expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it('closes the session as proxy_stopped on SIGTERM', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await raw.reply((m) => m['id'] === 2);
    raw.child.kill('SIGTERM');
    expect(await raw.exited()).toBe(0);
    const sessionId = onlySession(home);
    expect(events(home, sessionId).at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'proxy_stopped' } });
    expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it('closes the session as client_disconnected when the client leaves mid-call; the call is recorded as failed', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    await raw.initialize();
    raw.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { ms: 20_000 } } });
    const sessionId = onlySession(home);
    for (let i = 0; i < 500 && !events(home, sessionId).some((e) => e.kind === 'tool.call'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    raw.child.stdin?.end();
    expect(await raw.exited()).toBe(0);
    const trail = events(home, sessionId);
    expect(trail.find((e) => e.kind === 'tool.error')?.payload['tool']).toBe('slow');
    expect(trail.some((e) => e.kind === 'tool.result')).toBe(false);
    expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
    expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
  });
});

describe('aura proxy with calls in flight at once', () => {
  it('runs them side by side: 8 slow calls finish in about one call\'s time, each with its own answer, all recorded', async () => {
    const home = tempDir();
    const { client } = await connect(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    try {
      const ms = 500;
      await client.callTool({ name: 'echo', arguments: { text: 'warm' } });
      const started = performance.now();
      const results = (await Promise.all(Array.from({ length: 8 }, (_, i) => client.callTool({ name: 'slow', arguments: { ms: ms + i } })))) as CallToolResult[];
      const elapsed = performance.now() - started;
      expect(results.map(textOf)).toEqual(Array.from({ length: 8 }, (_, i) => `waited ${ms + i} ms`));
      // One after another would take 8 x 500 ms; side by side, one call's time plus the proxy's share.
      expect(elapsed).toBeGreaterThanOrEqual(ms);
      expect(elapsed).toBeLessThan(3 * ms);
      const recorded = events(home, onlySession(home)).filter((e) => e.kind === 'tool.result' && e.payload['tool'] === 'slow');
      expect(recorded.map((e) => textOf(e.payload['result'] as CallToolResult)).sort()).toEqual(results.map(textOf).sort());
    } finally {
      await client.close();
    }
  });
});

describe('aura proxy refusals and failures', () => {
  it('maps any AuraError to a tool error by what it carries, not by its class', () => {
    const result = refusal(new SecretNotFoundError('env:PAY_KEY', 'pay-vendor-a'), 'aura_sess_000000000001');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('SECRET_NOT_FOUND');
    expect(textOf(result)).toContain('env:PAY_KEY');
    expect(textOf(result)).toContain('did not run');
    expect(result._meta).toEqual({ 'aura/refusal': { code: 'SECRET_NOT_FOUND', session_id: 'aura_sess_000000000001' } });
  });

  it('answers initialize with an error, opens no session and exits 2 when the upstream cannot start', async () => {
    const home = tempDir();
    const raw = new RawClient(proxyArgs(home, null, [path.join(home, 'no-such-server')]));
    raw.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const reply = await raw.reply((m) => m['id'] === 1);
    expect(reply).toMatchObject({ error: { code: -32603, message: expect.stringContaining('ENOENT') } });
    expect(await raw.exited()).toBe(2);
    expect(listSessionIds(path.join(home, 'sessions'))).toEqual([]);
  });

  it('names an upstream URL it cannot use without the password the URL holds', async () => {
    const home = tempDir();
    const raw = new RawClient([AURA_BIN, '--home', home, 'proxy', '--upstream-url', `http://user:UrlPw-secret99@127.0.0.1:${await freePort()}/mcp`]);
    let stderr = '';
    raw.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    raw.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const reply = await raw.reply((m) => m['id'] === 1);
    expect(reply).toMatchObject({ error: { code: -32603, message: expect.stringContaining('user:[redacted]@127.0.0.1') } });
    await raw.exited();
    expect(`${raw.texts.get(1) ?? ''}${stderr}`).not.toContain('UrlPw-secret99');
  });

  it("gives the client an upstream's answer and error without the secret aura injected into the call", async () => {
    const home = tempDir();
    const profile = writeProfile(['capabilities:', '  - { id: echo-cap, tool: echo, secret: env:AURA_TEST_ECHO_KEY, inject_as: text }', ''].join('\n'));
    const client = new Client({ name: 'proxy-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: proxyArgs(home, profile, [process.execPath, ...FAULT_UPSTREAM]),
      cwd: REPO,
      stderr: 'pipe',
      env: { ...(process.env as Record<string, string>), AURA_TEST_ECHO_KEY: 'echo-key-5b1e9a77c2' },
    });
    await client.connect(transport);
    const answer = (await client.callTool({ name: 'echo', arguments: { text: 'replaced by the key', capability_id: 'echo-cap' } })) as CallToolResult;
    expect(textOf(answer)).toBe('[redacted]');
    await client.close();
    const trail = await closedTrail(home, onlySession(home));
    expect(trail.find((e) => e.kind === 'capability.injected')).toBeDefined();
    expect(JSON.stringify(trail)).not.toContain('echo-key-5b1e9a77c2');
  });
});

describe('the findings tool name', () => {
  it('keeps both tools on a clash: the upstream keeps its name, ours is prefixed aura__', async () => {
    expect(findingsToolName(new Set(['echo']))).toBe('get_session_findings');
    expect(findingsToolName(new Set(['get_session_findings', 'aura__get_session_findings']))).toBe('aura__aura__get_session_findings');
    const home = tempDir();
    const { client } = await connect(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM, '--clash']));
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_session_findings', 'aura__get_session_findings']));
    expect(textOf((await client.callTool({ name: 'get_session_findings', arguments: {} })) as CallToolResult)).toBe('upstream findings');
    const ours = (await client.callTool({ name: 'aura__get_session_findings', arguments: {} })) as CallToolResult;
    expect(ours.structuredContent).toMatchObject({ _meta: { superauditor: '1.1' } });
    await client.close();
  });

  it('is not offered when the profile says proxy: {findings_tool: false}; a bad proxy key is refused at start', async () => {
    const home = tempDir();
    const off = writeProfile('proxy: { findings_tool: false }\n');
    const { client } = await connect(proxyArgs(home, off, [process.execPath, ...FAULT_UPSTREAM]));
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['ask', 'big', 'crash', 'echo', 'keys', 'slow', 'tell']);
    await client.close();
    const bad = writeProfile('proxy: { findings: false }\n');
    const run = aura(['proxy', '--profile', bad, '--', process.execPath, ...FAULT_UPSTREAM], { home });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('proxy.findings');
  });
});

describe('aura proxy with pii_mask in the profile', () => {
  it('records the arguments masked and hands the client the masked result; no raw value reaches a written file', async () => {
    const home = tempDir();
    const profile = writeProfile('middleware: {pii_mask: {strategy: mask}}\n');
    const { client } = await connect(proxyArgs(home, profile, [process.execPath, EVERYTHING, 'stdio']));
    const sessionId = onlySession(home);
    const result = (await client.callTool({ name: 'echo', arguments: { message: 'reach jane.doe@example.com or +351 912 345 678' } })) as CallToolResult;
    expect(textOf(result)).toBe('Echo: reach j***@e***.com or +*** *** *** *78');
    await client.close();
    const trail = await closedTrail(home, sessionId);
    expect(trail.find((e) => e.kind === 'tool.call')?.payload['args']).toEqual({ message: 'reach j***@e***.com or +*** *** *** *78' });
    expect(trail.filter((e) => e.kind === 'middleware.applied').map((e) => e.payload['boundary'])).toEqual(['tool.args', 'tool.result']);
    const files = sessionFiles(path.join(home, 'sessions'), sessionId);
    for (const file of [files.trail, files.summary, files.otel]) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text, file).not.toContain('jane.doe@example.com');
      expect(text, file).not.toContain('+351 912 345 678');
    }
  });
});

describe('aura proxy with the break observer in the profile', () => {
  it('stops an agent that repeats a call: nudged, then refused before the upstream, until aura approve lets the session go on', async () => {
    const home = tempDir();
    const profile = writeProfile('observers:\n  - { preset: break, config: { soft: 2, hard: 3 } }\n');
    const { client } = await connect(proxyArgs(home, profile, [process.execPath, EVERYTHING, 'stdio']));
    const sessionId = onlySession(home);
    const poll = { name: 'echo', arguments: { message: 'is the build done?' } };
    for (let i = 1; i <= 3; i++) {
      const answered = (await client.callTool(poll)) as CallToolResult;
      expect(answered.isError, `call ${i}`).toBeFalsy();
      expect(textOf(answered)).toBe('Echo: is the build done?');
    }
    const refused = (await client.callTool(poll)) as CallToolResult;
    expect(refused.isError).toBe(true);
    const meta = refused._meta?.['aura/refusal'] as { code: string; request_id: string };
    expect(meta.code).toBe('LOOP_BROKEN');
    expect(textOf(refused)).toContain('ACTION_FIXATION');
    expect(textOf(refused)).toContain(`aura approve ${sessionId} ${meta.request_id} --principal`);
    // Another call is held too: the session is stopped, not one call.
    const other = (await client.callTool({ name: 'echo', arguments: { message: 'something else' } })) as CallToolResult;
    expect(other.isError).toBe(true);

    let trail = events(home, sessionId);
    expect(trail.filter((e) => e.kind === 'tool.call')).toHaveLength(3);
    const alerts = trail.filter((e) => e.kind === 'observer.alert').map((e) => e.payload);
    expect(alerts.map((a) => a['pattern'])).toEqual(['ACTION_FIXATION', 'ACTION_FIXATION']);
    expect(trail.some((e) => e.kind === 'membrane.nudge')).toBe(true);

    const approved = auraJson(['approve', sessionId, meta.request_id, '--principal', 'oncall@example.test'], { home });
    expect(approved.status, approved.stderr).toBe(0);
    expect(approved.json).toMatchObject({ request_id: meta.request_id, tool: 'echo' });
    const resumed = (await client.callTool({ name: 'echo', arguments: { message: 'a new plan' } })) as CallToolResult;
    expect(resumed.isError).toBeFalsy();
    expect(textOf(resumed)).toBe('Echo: a new plan');
    await client.close();

    trail = await closedTrail(home, sessionId);
    expect(trail.filter((e) => e.kind === 'tool.call')).toHaveLength(4);
    expect(trail.find((e) => e.kind === 'constraint.approved')?.payload).toMatchObject({ request_id: meta.request_id, principal: 'oncall@example.test' });
    const files = sessionFiles(path.join(home, 'sessions'), sessionId);
    expect(verifyTrail(files.trail).hash_chain_valid).toBe(true);
    const summary = JSON.parse(fs.readFileSync(files.summary, 'utf8')) as { audit_report: { findings: { kind: string }[] } };
    expect(summary.audit_report.findings.map((f) => f.kind)).toContain('COGNITIVE_CYCLE_DETECTED');
  });
});

/** The processes whose parent is `pid` (the upstreams a proxy runs). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = fs.readFileSync(path.join('/proc', name, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** An SDK client over Streamable HTTP with a bearer token. */
async function httpClient(url: string, token: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'limits-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return { client, transport };
}

/** A raw initialize over HTTP: the status, and the session id when one began. */
async function initializeOverHttp(url: string, token: string): Promise<{ status: number; sessionId: string | null; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  return { status: res.status, sessionId: res.headers.get('mcp-session-id'), body: await res.text() };
}

const ELEVEN_MIB = 11 * 1024 * 1024;

/** The SDK client through `aura proxy` (given `env`, else the SDK's default environment) in front of the fault upstream, run over stdio or reached over HTTP answering in event streams or in JSON. */
async function faultProxy(via: 'stdio' | 'event streams' | 'JSON', flags: readonly string[] = [], env?: Record<string, string>): Promise<{ client: Client; home: string; stop: () => Promise<void> }> {
  const home = tempDir();
  if (via === 'stdio') {
    const { client } = await connect([AURA_BIN, '--home', home, 'proxy', ...flags, '--', process.execPath, ...FAULT_UPSTREAM], env);
    return { client, home, stop: () => client.close() };
  }
  const { upstream, url } = await upstreamOverHttp([...FAULT_UPSTREAM, '--http', ...(via === 'JSON' ? ['--json'] : [])]);
  try {
    const { client } = await connect([AURA_BIN, '--home', home, 'proxy', ...flags, '--upstream-url', url], env);
    return {
      client,
      home,
      stop: async () => {
        await client.close();
        upstream.kill('SIGTERM');
      },
    };
  } catch (error) {
    upstream.kill('SIGTERM');
    throw error;
  }
}

describe('aura proxy survives its upstream', () => {
  it('turns an answer over the 10 MiB default into that call’s tool.error, and the session goes on', async () => {
    const home = tempDir();
    const { client } = await connect(proxyArgs(home, null, [process.execPath, ...FAULT_UPSTREAM]));
    const big = (await client.callTool({ name: 'big', arguments: { bytes: ELEVEN_MIB } })) as CallToolResult;
    expect(big.isError).toBe(true);
    expect(textOf(big)).toMatch(/The tool ran, but its answer was not passed on: the MCP server's message of \d+ bytes is over the proxy's limit of 10485760 bytes/);
    expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })) as CallToolResult)).toBe('still here');
    await client.close();
    const trail = await closedTrail(home, onlySession(home));
    const calls = trail.filter((e) => e.payload['tool'] === 'big').map((e) => e.kind);
    expect(calls).toEqual(['tool.intent', 'tool.call', 'tool.error']);
    expect(JSON.stringify(trail.find((e) => e.kind === 'tool.error')?.payload)).toContain('over the proxy');
    expect(trail.filter((e) => e.payload['tool'] === 'echo').map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.result']);
    expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
  });

  it('takes its limit from --max-message-bytes', async () => {
    const home = tempDir();
    const { client } = await connect([AURA_BIN, '--home', home, 'proxy', '--max-message-bytes', '100000', '--', process.execPath, ...FAULT_UPSTREAM]);
    const over = (await client.callTool({ name: 'big', arguments: { bytes: 200_000 } })) as CallToolResult;
    expect(over.isError).toBe(true);
    expect(textOf(over)).toContain("over the proxy's limit of 100000 bytes");
    expect(textOf((await client.callTool({ name: 'big', arguments: { bytes: 50_000 } })) as CallToolResult)).toHaveLength(50_000);
    await client.close();
    expect(aura(['proxy', '--max-message-bytes', '10MB', '--', 'x'], { home }).stderr).toContain('invalid --max-message-bytes "10MB"');
    expect(aura(['proxy', '--max-sessions', '3', '--', 'x'], { home }).stderr).toContain('invalid --max-sessions "3": expected to be given with --http only');
  });

  for (const via of ['event streams', 'JSON'] as const) {
    it(`bounds an HTTP upstream's answers in ${via} as a stdio one's: one over the 10 MiB default is that call's tool.error, and the session goes on`, async () => {
      const { client, home, stop } = await faultProxy(via);
      try {
        const big = (await client.callTool({ name: 'big', arguments: { bytes: ELEVEN_MIB } })) as CallToolResult;
        expect(big.isError).toBe(true);
        expect(textOf(big)).toMatch(/The tool ran, but its answer was not passed on: the MCP server's message of \d+ bytes is over the proxy's limit of 10485760 bytes/);
        expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })) as CallToolResult)).toBe('still here');
      } finally {
        await stop();
      }
      const trail = await closedTrail(home, onlySession(home));
      expect(trail.filter((e) => e.payload['tool'] === 'big').map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.error']);
      expect(JSON.stringify(trail.find((e) => e.kind === 'tool.error')?.payload)).toContain('over the proxy');
      expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'client_disconnected' } });
    });
  }

  for (const via of ['event streams', 'JSON'] as const) {
    it(`reads an HTTP upstream's answer in ${via} that starts with a byte order mark`, async () => {
      const { client, stop } = await faultProxy(via);
      try {
        const answer = '{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"after a BOM"}]}}';
        expect(textOf((await client.callTool({ name: 'raw', arguments: { answer, bom: true } }, undefined, { timeout: 10_000 })) as CallToolResult)).toBe('after a BOM');
      } finally {
        await stop();
      }
    });
  }

  for (const via of ['stdio', 'event streams'] as const) {
    it(`answers a request of the upstream's over the limit with an error, from ${via}, so the upstream does not wait for ever`, async () => {
      const { client, stop } = await faultProxy(via, ['--max-message-bytes', '100000']);
      try {
        expect(textOf((await client.callTool({ name: 'ask', arguments: { bytes: 10 } })) as CallToolResult)).toBe('answered');
        const started = performance.now();
        const over = textOf((await client.callTool({ name: 'ask', arguments: { bytes: 200_000 } }, undefined, { timeout: 10_000 })) as CallToolResult);
        expect(over).toMatch(/^refused: .*the MCP server's message of \d+ bytes is over the proxy's limit of 100000 bytes/);
        // Answered at once, not at the upstream's own 5 s timeout.
        expect(performance.now() - started).toBeLessThan(4_000);
        expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })) as CallToolResult)).toBe('still here');
      } finally {
        await stop();
      }
    });
  }

  it("passes on a server's own error of code -32000 (a rate limit) as its error, not as the server having ended", async () => {
    const { client, home, stop } = await faultProxy('stdio');
    try {
      const answer = '{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32000,"message":"rate limited, retry in 3 s"}}';
      const failed = await client.callTool({ name: 'raw', arguments: { answer } }, undefined, { timeout: 10_000 }).then(
        (result) => JSON.stringify(result),
        (error: unknown) => String(error),
      );
      expect(failed).toContain('rate limited, retry in 3 s');
      expect(failed).not.toMatch(/ended during this call/);
      expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })) as CallToolResult)).toBe('still here');
    } finally {
      await stop();
    }
    const trail = await closedTrail(home, onlySession(home));
    expect(trail.filter((e) => e.payload['tool'] === 'raw').map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.error']);
  });

  for (const via of ['stdio', 'event streams', 'JSON'] as const) {
    it(`gives a call its error for an answer over the limit whatever the order of the answer's keys, from ${via}`, async () => {
      const { client, home, stop } = await faultProxy(via, ['--max-message-bytes', '100000']);
      // The id after the result, which holds an id of its own, and before jsonrpc.
      const answer = '{"result":{"content":[{"type":"text","text":"%PAD%"}],"structuredContent":{"id":"not this one"}},"id":%ID%,"jsonrpc":"2.0"}';
      try {
        const over = (await client.callTool({ name: 'raw', arguments: { answer, pad: 200_000 } }, undefined, { timeout: 10_000 })) as CallToolResult;
        expect(over.isError).toBe(true);
        expect(textOf(over)).toMatch(/its answer was not passed on: the MCP server's message of \d+ bytes is over the proxy's limit of 100000 bytes/);
      } finally {
        await stop();
      }
      const trail = await closedTrail(home, onlySession(home));
      expect(trail.filter((e) => e.payload['tool'] === 'raw').map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.error']);
    });

    it(`fails a call whose answer is not a tool result, or not a JSON-RPC answer, from ${via}: the client gets an error result and the trail a tool.error, neither with the answer's values`, async () => {
      const { client, home, stop } = await faultProxy(via);
      const answers = {
        '{"jsonrpc":"2.0","id":%ID%,"result":{"content":"hunter2-not-a-list"}}': "the MCP server's answer is not a valid tool result (content: ",
        '{"result":"hunter2-not-an-object","id":%ID%,"jsonrpc":"2.0"}': "the MCP server's answer is not a valid JSON-RPC response (result: ",
      };
      try {
        for (const [answer, why] of Object.entries(answers)) {
          const failed = (await client.callTool({ name: 'raw', arguments: { answer } }, undefined, { timeout: 10_000 })) as CallToolResult;
          expect(failed.isError).toBe(true);
          expect(textOf(failed)).toContain(`The MCP server answered, but its answer was not passed on: ${why}`);
          expect(textOf(failed)).not.toContain('hunter2');
        }
        expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })) as CallToolResult)).toBe('still here');
      } finally {
        await stop();
      }
      const trail = await closedTrail(home, onlySession(home));
      expect(trail.filter((e) => e.payload['tool'] === 'raw').map((e) => e.kind)).toEqual(['tool.intent', 'tool.call', 'tool.error', 'tool.intent', 'tool.call', 'tool.error']);
      const errors = trail.filter((e) => e.kind === 'tool.error').map((e) => JSON.stringify(e.payload['error']));
      expect(errors.map((error, i) => error.includes(Object.values(answers)[i] as string))).toEqual([true, true]);
      expect(errors.join('\n')).not.toContain('hunter2');
    });
  }

  describe('over Streamable HTTP', () => {
    const A = 'limits-token-a-0123456789';
    const B = 'limits-token-b-0123456789';
    const proxies: ChildProcess[] = [];

    /** A proxy of the test's own, so no session of another test counts against its caps. */
    async function start(flags: readonly string[]): Promise<{ proxy: ChildProcess; url: string }> {
      const started = await httpProxy(tempDir(), [A, B], flags, [process.execPath, ...FAULT_UPSTREAM]);
      proxies.push(started.proxy);
      return started;
    }
    afterAll(() => {
      for (const proxy of proxies) proxy.kill('SIGTERM');
    });

    it('keeps every other session up when one gets an answer too large', async () => {
      const { proxy, url } = await start([]);
      const one = await httpClient(url, A);
      const two = await httpClient(url, A);
      const big = (await one.client.callTool({ name: 'big', arguments: { bytes: ELEVEN_MIB } })) as CallToolResult;
      expect(big.isError).toBe(true);
      expect(textOf((await two.client.callTool({ name: 'echo', arguments: { text: 'two' } })) as CallToolResult)).toBe('two');
      expect(textOf((await one.client.callTool({ name: 'echo', arguments: { text: 'one' } })) as CallToolResult)).toBe('one');
      expect(proxy.exitCode).toBeNull();
      for (const { client, transport } of [one, two]) {
        await transport.terminateSession();
        await client.close();
      }
    });

    it("records and passes on a call's arguments as the client wrote them, escaped keys too; a body over 4 MiB gets 413 and one not JSON 400, and the session goes on", async () => {
      const home = tempDir();
      const started = await httpProxy(home, [A], [], [process.execPath, ...FAULT_UPSTREAM]);
      proxies.push(started.proxy);
      const opened = await initializeOverHttp(started.url, A);
      expect(opened.status).toBe(200);
      const post = (body: BodyInit, init: RequestInit = {}): Promise<Response> =>
        fetch(started.url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${A}`, 'Mcp-Session-Id': opened.sessionId ?? '' }, body, ...init });
      expect((await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))).status).toBe(202);
      // Written by hand: on Node 24 the first call's key `a\` makes JSON.parse read the second's `a"` as `a\`.
      for (const body of [String.raw`{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"Probe": 0, "a\\": 0, "text": "one"}}}`, String.raw`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"Probe": 1, "a\"": 1, "text": "two"}}}`]) {
        const answer = await post(body);
        expect(answer.status).toBe(200);
        expect(await answer.text()).toContain(body.includes('"one"') ? 'one' : 'two');
      }
      const tooLarge = async (answer: Response): Promise<void> => {
        expect(answer.status).toBe(413);
        expect(await answer.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, message: expect.stringContaining('must not exceed 4194304 bytes') } });
      };
      const over = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(4 * 1024 * 1024) } } });
      await tooLarge(await post(over));
      // Sent in chunks, with no length declared: the proxy stops reading past the limit.
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 5; i++) controller.enqueue(new TextEncoder().encode(over.slice(i * 1024 * 1024, (i + 1) * 1024 * 1024)));
          controller.close();
        },
      });
      await tooLarge(await post(chunks, { duplex: 'half' } as RequestInit));
      const notJson = await post('{"jsonrpc": "2.0", "id": 5, ');
      expect(notJson.status).toBe(400);
      expect(await notJson.json()).toMatchObject({ id: null, error: { code: -32700 } });
      expect(await (await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: { text: 'three' } } }))).text()).toContain('three');
      expect((await fetch(started.url, { method: 'DELETE', headers: { Authorization: `Bearer ${A}`, 'Mcp-Session-Id': opened.sessionId ?? '' } })).status).toBe(200);
      await closedTrail(home, onlySession(home));
      // Read by aura's reader: this test's own JSON.parse would misread the key on Node 24.
      const { chain, events: recorded } = readTrail(sessionFiles(path.join(home, 'sessions'), onlySession(home)).trail);
      expect(recorded.filter((e) => e.kind === 'tool.intent').map((e) => Object.keys(e.payload['args'] as object))).toEqual([['Probe', 'a\\', 'text'], ['Probe', 'a"', 'text'], ['text']]);
      expect(chain).toMatchObject({ hash_chain_valid: true, complete: true });
    });

    it('frees the slot of an initialize whose client went away before it was answered: a token cannot lock itself out', async () => {
      // An upstream slower to start than the clients below stay: their initializes are not answered before they go.
      const { proxy, url } = await httpProxy(tempDir(), [A, B], ['--max-sessions-per-token', '2'], [process.execPath, ...FAULT_UPSTREAM, '--start-after', '1500']);
      proxies.push(proxy);
      const port = Number(new URL(url).port);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } });
      const head = [`POST /mcp HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${A}`, 'Content-Type: application/json', 'Accept: application/json, text/event-stream', `Content-Length: ${Buffer.byteLength(body)}`, '', ''].join('\r\n');
      // Gone while sending its request, and gone right after it (its upstream is being started): twice each, past the token's two.
      for (const sent of [body.slice(0, 20), body, body.slice(0, 20), body]) {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(head + sent);
        await new Promise((resolve) => setTimeout(resolve, 300));
        socket.destroy();
      }
      // The slots come back as those sessions close, not after --idle-timeout (15 minutes).
      let connected: Awaited<ReturnType<typeof httpClient>> | null = null;
      for (let i = 0; i < 100 && connected === null; i++) {
        connected = await httpClient(url, A).catch(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          return null;
        });
      }
      expect(connected).not.toBeNull();
      const { client, transport } = connected as Awaited<ReturnType<typeof httpClient>>;
      expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'in' } })) as CallToolResult)).toBe('in');
      // Only this client's upstream is left running.
      for (let i = 0; i < 100 && childrenOf(proxy.pid ?? -1).length > 1; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(childrenOf(proxy.pid ?? -1)).toHaveLength(1);
      await transport.terminateSession();
      await client.close();
    });

    it('caps the sessions of a token and in all: a dozen initializes start no more upstreams than the caps', async () => {
      const { proxy, url } = await start(['--max-sessions', '3', '--max-sessions-per-token', '2']);
      const mine = await Promise.all(Array.from({ length: 12 }, () => initializeOverHttp(url, A)));
      const opened = mine.filter((r) => r.status === 200);
      expect(opened).toHaveLength(2);
      expect(mine.filter((r) => r.status === 429)).toHaveLength(10);
      expect(mine.find((r) => r.status === 429)?.body).toContain('this token has 2 sessions open, its most');
      const others = await Promise.all([initializeOverHttp(url, B), initializeOverHttp(url, B)]);
      expect(others.map((r) => r.status).sort()).toEqual([200, 503]);
      expect(childrenOf(proxy.pid ?? -1).length).toBeLessThanOrEqual(3);
      // Ending one lets another begin, once it has closed.
      const ended = await fetch(url, { method: 'DELETE', headers: { Authorization: `Bearer ${A}`, 'Mcp-Session-Id': opened[0]?.sessionId ?? '' } });
      expect(ended.status).toBe(200);
      let again = await initializeOverHttp(url, A);
      for (let i = 0; i < 200 && again.status !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await initializeOverHttp(url, A);
      }
      expect(again.status).toBe(200);
    });
  });

  it('closes a session no request has used for --idle-timeout, recording idle_timeout, and ends its upstream; a call in progress is use', async () => {
    const home = tempDir();
    const token = 'idle-token-0123456789abc';
    const { proxy, url } = await httpProxy(home, [token], ['--idle-timeout', '5'], [process.execPath, ...FAULT_UPSTREAM]);
    try {
      const { client } = await httpClient(url, token);
      // A call longer than the idle time does not count as idle.
      expect(textOf((await client.callTool({ name: 'slow', arguments: { ms: 7000 } })) as CallToolResult)).toBe('waited 7000 ms');
      const sessionId = onlySession(home);
      expect(childrenOf(proxy.pid ?? -1)).toHaveLength(1);
      const trail = await closedTrail(home, sessionId);
      expect(trail.at(-1)).toMatchObject({ kind: 'session.close', payload: { reason: 'idle_timeout' } });
      expect(verifyTrail(sessionFiles(path.join(home, 'sessions'), sessionId).trail)).toMatchObject({ hash_chain_valid: true, complete: true });
      for (let i = 0; i < 100 && childrenOf(proxy.pid ?? -1).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(childrenOf(proxy.pid ?? -1)).toEqual([]);
      await expect(client.callTool({ name: 'echo', arguments: { text: 'gone' } })).rejects.toThrow();
    } finally {
      proxy.kill('SIGTERM');
    }
  });
});

describe('aura proxy keeps a secret it injected from the client and from its stderr', () => {
  const key = 'Kx9-Tq2Lm7Vw4Rz8!Np';
  const env = { ...(process.env as Record<string, string>), AURA_TEST_ECHO_KEY: key };
  const profile = (): string =>
    writeProfile(['capabilities:', '  - { id: raw-cap, tool: raw, secret: env:AURA_TEST_ECHO_KEY, inject_as: text }', '  - { id: tell-cap, tool: tell, secret: env:AURA_TEST_ECHO_KEY, inject_as: text }', ''].join('\n'));

  for (const via of ['stdio', 'event streams', 'JSON'] as const) {
    it(`passes on an upstream's error with its data, from ${via}, the injected secret replaced; data it cannot clear whole is left out`, async () => {
      const { client, home, stop } = await faultProxy(via, ['--profile', profile()], env);
      const failure = (answer: string): Promise<McpError | null> =>
        client.callTool({ name: 'raw', arguments: { answer, text: 'replaced by the key', capability_id: 'raw-cap' } }, undefined, { timeout: 10_000 }).then(
          () => null,
          (error: unknown) => error as McpError,
        );
      let rejected: McpError | null;
      let deep: McpError | null;
      try {
        rejected = await failure('{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32001,"message":"upstream rejected %TEXT%","data":{"received_headers":{"x-api-key":"%TEXT%"},"echo":"key %TEXT%","retry_after":3}}}');
        deep = await failure(`{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32001,"message":"upstream rejected the call","data":${'['.repeat(600)}"%TEXT%"${']'.repeat(600)}}}`);
      } finally {
        await stop();
      }
      expect(rejected).toMatchObject({ code: -32001, message: 'MCP error -32001: upstream rejected [redacted]', data: { received_headers: { 'x-api-key': '[redacted]' }, echo: 'key [redacted]', retry_after: 3 } });
      expect(deep).toMatchObject({ code: -32001, message: 'MCP error -32001: upstream rejected the call' });
      expect(deep?.data).toBeUndefined();
      const trail = await closedTrail(home, onlySession(home));
      expect(trail.filter((e) => e.kind === 'tool.error')).toHaveLength(2);
      expect(JSON.stringify([rejected?.message, rejected?.data, deep?.message, trail])).not.toContain(key);
    });
  }

  /** A client that offers sampling, through the proxy in front of the fault upstream: what it is told besides its answers, and the proxy's stderr. */
  async function listener(flags: readonly string[]): Promise<{ client: Client; home: string; heard: { logs: unknown[]; progress: Progress[]; sampling: unknown[] }; stderr: () => string }> {
    const home = tempDir();
    const heard = { logs: [] as unknown[], progress: [] as Progress[], sampling: [] as unknown[] };
    const client = new Client({ name: 'proxy-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void heard.logs.push(notification.params));
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      heard.sampling.push(request.params);
      return { model: 'stub', role: 'assistant', content: { type: 'text', text: 'a stub summary' } };
    });
    const transport = new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, '--home', home, 'proxy', ...flags, '--', process.execPath, ...FAULT_UPSTREAM], cwd: REPO, stderr: 'pipe', env });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await client.connect(transport);
    return { client, home, heard, stderr: () => stderr };
  }

  async function tell(client: Client, heard: { progress: Progress[] }, args: Record<string, unknown>): Promise<string> {
    return textOf((await client.callTool({ name: 'tell', arguments: args }, undefined, { onprogress: (progress) => void heard.progress.push(progress) })) as CallToolResult);
  }

  /** What the fault upstream's `tell` sends the client besides its answer (logs, progress, a sampling request), each holding `text`. */
  function toldWith(text: string): { logs: unknown[]; progress: Progress[]; sampling: unknown[] } {
    return {
      logs: [
        { level: 'info', logger: 'fault-upstream', data: `POST /charge with x-api-key ${text}` },
        { level: 'info', logger: 'fault-upstream', data: `charge settled with ${text}` },
      ],
      progress: [{ progress: 1, total: 2, message: `authenticated as ${text}` }],
      sampling: [{ messages: [{ role: 'user', content: { type: 'text', text: `summarize the charge made with ${text}` } }], maxTokens: 10 }],
    };
  }

  it('replaces it in the log messages, progress and sampling requests the upstream sends during the call and after it, and passes the rest of them on', async () => {
    const { client, home, heard } = await listener(['--profile', profile()]);
    try {
      expect(await tell(client, heard, { text: 'replaced by the key', capability_id: 'tell-cap' })).toBe('sampled: a stub summary');
      await vi.waitFor(() => expect(heard.logs).toHaveLength(2), { timeout: 5000 });
    } finally {
      await client.close();
    }
    expect(heard).toEqual(toldWith('[redacted]'));
    expect(JSON.stringify(heard)).not.toContain(key);
    expect(JSON.stringify(await closedTrail(home, onlySession(home)))).not.toContain(key);
  });

  it('passes them on unchanged in a session that injected nothing', async () => {
    const { client, heard } = await listener([]);
    try {
      expect(await tell(client, heard, { text: 'plain words' })).toBe('sampled: a stub summary');
      await vi.waitFor(() => expect(heard.logs).toHaveLength(2), { timeout: 5000 });
    } finally {
      await client.close();
    }
    expect(heard).toEqual(toldWith('plain words'));
  });

  it("passes the upstream's stderr on a line at a time, in order, the injected secret and credentials replaced; a line that does not end comes in pieces as it is written", async () => {
    const { client, home, heard, stderr } = await listener(['--profile', profile()]);
    const pad = MAX_LOG_LINE - 5;
    const lines = (): string[] => stderr().split('\n');
    try {
      await tell(client, heard, { text: 'replaced by the key', pad, capability_id: 'tell-cap' });
      // The line of y's has no end yet: three whole pieces of it are out all the same.
      await vi.waitFor(() => expect(lines().filter((line) => line === 'y'.repeat(MAX_LOG_LINE))).toHaveLength(3), { timeout: 5000 });
    } finally {
      await client.close();
    }
    await closedTrail(home, onlySession(home));
    await vi.waitFor(() => expect(stderr()).toMatch(/session \S+ closed/), { timeout: 5000 });
    const shown = lines();
    const first = shown.indexOf('fault-upstream: charged with [redacted]');
    expect(first).toBeGreaterThan(-1);
    expect(shown.slice(first, first + 8)).toEqual([
      'fault-upstream: charged with [redacted]',
      'fault-upstream: GET /v1 with Authorization: Bearer [redacted]',
      // The secret begins where the first piece would end: the piece stops short of it.
      'x'.repeat(pad),
      '[redacted] ends the long line',
      'y'.repeat(MAX_LOG_LINE),
      'y'.repeat(MAX_LOG_LINE),
      'y'.repeat(MAX_LOG_LINE),
      'y'.repeat(4 * pad - 3 * MAX_LOG_LINE),
    ]);
    expect(shown.every((line) => line.length <= MAX_LOG_LINE)).toBe(true);
    for (const part of [key, key.slice(0, 5), key.slice(-5), 'ghp_']) expect(stderr()).not.toContain(part);
  });
});
