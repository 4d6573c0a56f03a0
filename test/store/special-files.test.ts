/**
 * Files named like a trail that are not one (a FIFO, a device, a folder, a symlink loop, a symlink
 * out of the sessions folder) never block anything: the CLI names them and goes on, and `aura ui`
 * and `aura mcp --http` keep answering their clients while they are there. A line longer than a
 * reader can hold is `malformed_line`.
 */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadError } from '../../src/errors.js';
import { readRegularFileShared } from '../../src/spine/regular-file.js';
import { trailLines } from '../../src/spine/trail-lines.js';
import { verifyLines } from '../../src/spine/verify.js';
import { readTextFile } from '../../src/store/json-file.js';
import { scanSessionFolder } from '../../src/store/session-files.js';
import { AURA_BIN, listeningUrl } from '../helpers/cli.js';
import { demoSession, lines } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

/** Long enough for a command that works; a command stuck on a FIFO never ends on its own. */
const COMMAND_TIMEOUT_MS = 20_000;

const FIFO = 'aura_sess_fffffffffff0';
const DEV_ZERO = 'aura_sess_fffffffffff1';
const FOLDER = 'aura_sess_fffffffffff2';
const LOOP = 'aura_sess_fffffffffff3';
const OUTSIDE = 'aura_sess_fffffffffff4';
const DEV_NULL = 'aura_sess_fffffffffff5';

/** Why each special file is not read, as the folder scan and the commands say it. */
const WHY: Readonly<Record<string, RegExp>> = {
  [FIFO]: /it is a FIFO \(named pipe\), not a regular file/,
  [DEV_ZERO]: /it is a symlink leading outside the sessions folder: not followed/,
  [FOLDER]: /it is a folder, not a file \(EISDIR\)/,
  [LOOP]: /it is a symlink loop/,
  [OUTSIDE]: /it is a symlink leading outside the sessions folder: not followed/,
  [DEV_NULL]: /it is a symlink leading outside the sessions folder: not followed/,
};

/** A home with one demo session and every kind of special file named like a trail beside it. */
async function storeWithSpecialFiles(): Promise<{ home: string; sessions: string; goodId: string }> {
  const home = tempDir();
  const goodId = await demoSession(home);
  const sessions = path.join(home, 'sessions');
  const at = (id: string): string => path.join(sessions, `${id}.jsonl`);
  expect(spawnSync('mkfifo', [at(FIFO)]).status).toBe(0);
  fs.symlinkSync('/dev/zero', at(DEV_ZERO));
  fs.mkdirSync(at(FOLDER));
  fs.symlinkSync(`${LOOP}.jsonl`, at(LOOP));
  // A real, valid trail outside the folder: following the link would verify it.
  const outside = path.join(tempDir(), 'outside.jsonl');
  fs.copyFileSync(at(goodId), outside);
  fs.symlinkSync(outside, at(OUTSIDE));
  fs.symlinkSync('/dev/null', at(DEV_NULL));
  return { home, sessions, goodId };
}

function run(home: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string; signal: NodeJS.Signals | null } {
  const result = spawnSync(process.execPath, [AURA_BIN, ...args], { env: { ...process.env, AURA_HOME: home, NO_COLOR: '1' }, encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, signal: result.signal };
}

describe('a sessions folder holding special files named like trails', () => {
  let store: Awaited<ReturnType<typeof storeWithSpecialFiles>>;

  beforeAll(async () => {
    store = await storeWithSpecialFiles();
  });

  it('the findings channel names each with why it is not read, and never where a symlink leads', async () => {
    const client = new Client({ name: 'aura-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, 'mcp'], env: { ...process.env, AURA_HOME: store.home } as Record<string, string>, stderr: 'ignore' }));
    try {
      const answer = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } });
      const text = JSON.stringify(answer.structuredContent);
      const findings = (answer.structuredContent as { findings: { kind: string; message?: string; session_id?: string }[] }).findings;
      for (const id of Object.keys(WHY)) {
        const named = findings.filter((f) => f.session_id === id);
        expect(named, id).toEqual([expect.objectContaining({ kind: 'CHECK_CRASHED', message: expect.stringMatching(WHY[id] as RegExp) as unknown })]);
      }
      expect(text).not.toContain('outside.jsonl');
      expect(text).not.toContain('/dev/');
    } finally {
      await client.close();
    }
  });

  it('lists only the real session, and names every other file with why it is not read', () => {
    const scan = scanSessionFolder(store.sessions);
    expect(scan.ids).toEqual([store.goodId]);
    expect(scan.skipped.map((s) => path.basename(s.path, '.jsonl'))).toEqual(Object.keys(WHY).sort());
    for (const skipped of scan.skipped) expect(skipped.why).toMatch(WHY[path.basename(skipped.path, '.jsonl')] as RegExp);
  });

  it('aura sessions list and verify store answer, naming each file, and go on', () => {
    const list = run(store.home, ['sessions', 'list', '--json']);
    expect(list.signal).toBeNull();
    expect(list.status).toBe(0);
    const json = JSON.parse(list.stdout) as { sessions: { session_id: string }[]; skipped: { path: string; why: string }[] };
    expect(json.sessions.map((s) => s.session_id)).toEqual([store.goodId]);
    expect(json.skipped).toHaveLength(6);
    const human = run(store.home, ['sessions', 'list']);
    for (const id of Object.keys(WHY)) expect(human.stdout).toMatch(new RegExp(`not read: .*${id}\\.jsonl: ${(WHY[id] as RegExp).source}`));

    const verify = run(store.home, ['verify', 'store', '--json']);
    expect(verify.signal).toBeNull();
    expect(verify.status).toBe(0);
    const report = JSON.parse(verify.stdout) as { sessions: { session_id: string; status: string }[]; skipped: unknown[] };
    expect(report.sessions).toEqual([expect.objectContaining({ session_id: store.goodId, status: 'intact' })]);
    expect(report.skipped).toHaveLength(6);
    expect(run(store.home, ['verify', 'store']).stdout).toMatch(/not read: .*aura_sess_fffffffffff0\.jsonl: it is a FIFO/);
  });

  for (const id of Object.keys(WHY)) {
    it(`verify chain, report show and logs on ${id} exit 2 at once, naming the file and why`, () => {
      for (const args of [['verify', 'chain', id], ['report', 'show', id], ['logs', id]]) {
        const result = run(store.home, args);
        expect(result.signal, args.join(' ')).toBeNull();
        expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(`${id}.jsonl`);
        expect(result.stderr).toMatch(WHY[id] as RegExp);
      }
    });
  }

  it('verify chain given the FIFO by path refuses it without blocking', () => {
    const result = run(store.home, ['verify', 'chain', path.join(store.sessions, `${FIFO}.jsonl`)]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/cannot read .*aura_sess_fffffffffff0\.jsonl: it is a FIFO \(named pipe\), not a regular file/);
  });

  it('refuses a FIFO or a device as a trail or a summary with ReadError, never waiting', () => {
    for (const file of [path.join(store.sessions, `${FIFO}.jsonl`), '/dev/zero', '/dev/null', path.join(store.sessions, `${FOLDER}.jsonl`)]) {
      expect(() => [...trailLines(file)]).toThrow(ReadError);
      expect(() => readTextFile(file, 'summary')).toThrow(/not a (regular )?file/);
      expect(() => readRegularFileShared(file, 'trail')).toThrow(ReadError);
    }
  });

  it('reads a real trail into memory a push shares with its checking workers, byte for byte', () => {
    const trail = path.join(store.sessions, `${store.goodId}.jsonl`);
    const shared = readRegularFileShared(trail, 'trail');
    expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(shared.equals(fs.readFileSync(trail))).toBe(true);
  });
});

describe("a trail's lock that is a FIFO, a device or a symlink out of the folder", () => {
  it('stalls no reader: sessions list, report show and report html answer at once, taking the session for one no writer holds', async () => {
    const home = tempDir();
    const fifoId = await demoSession(home);
    const zeroId = await demoSession(home);
    const sessions = path.join(home, 'sessions');
    expect(spawnSync('mkfifo', [path.join(sessions, `${fifoId}.jsonl.lock`)]).status).toBe(0);
    fs.symlinkSync('/dev/zero', path.join(sessions, `${zeroId}.jsonl.lock`));
    const list = run(home, ['sessions', 'list', '--json']);
    expect(list.signal).toBeNull();
    expect(list.status).toBe(0);
    const rows = (JSON.parse(list.stdout) as { sessions: { session_id: string; status: string }[] }).sessions;
    expect(rows.map((row) => [row.session_id, row.status]).sort()).toEqual([[fifoId, 'intact'], [zeroId, 'intact']].sort());
    for (const id of [fifoId, zeroId]) {
      const shown = run(home, ['report', 'show', id, '--json']);
      expect(shown.signal).toBeNull();
      expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'intact' });
    }
    const html = run(home, ['report', 'html', fifoId, '--output', path.join(tempDir(), 'page.html')]);
    expect(html.signal).toBeNull();
    expect(html.status).toBe(0);
  });
});

describe('a sealed session whose trail was swapped for a symlink out of the sessions folder', () => {
  it('verify store and verify chain name it unreadable, and never verify the file it leads to', async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    // The same bytes outside: following the link would find them whole and matching the seal.
    const outside = path.join(tempDir(), 'outside.jsonl');
    fs.renameSync(trail, outside);
    fs.symlinkSync(outside, trail);

    const verify = run(home, ['verify', 'store', '--json']);
    expect(verify.status).toBe(1);
    const report = JSON.parse(verify.stdout) as { sessions: { session_id: string; status: string; message?: string }[] };
    expect(report.sessions).toEqual([expect.objectContaining({ session_id: id, status: 'unreadable' })]);
    expect(report.sessions[0]?.message).toMatch(/outside the sessions folder: not followed/);

    const chain = run(home, ['verify', 'chain', id]);
    expect(chain.status).toBe(2);
    expect(chain.stderr).toMatch(/outside the sessions folder: not followed/);

    // Nor is evidence built from it under this id.
    fs.rmSync(path.join(home, 'sessions', `${id}.summary.json`));
    for (const args of [['export', id], ['export', id, '--rebuild'], ['export-otel', id]]) {
      const built = run(home, args);
      expect({ args, status: built.status }).toEqual({ args, status: 2 });
      expect(built.stderr).toMatch(/outside the sessions folder: not followed/);
    }
    expect(fs.existsSync(path.join(home, 'sessions', `${id}.summary.json`))).toBe(false);
  });
});

describe('aura ui and aura mcp --http, while a FIFO is named like a trail and a summary', () => {
  let home: string;
  let goodId: string;
  let ui: ChildProcess;
  let mcp: ChildProcess;

  beforeAll(async () => {
    ({ home, goodId } = await storeWithSpecialFiles());
    // A second session whose summary is a FIFO: reading it for the list would wait for a writer.
    const second = await demoSession(home);
    const summary = path.join(home, 'sessions', `${second}.summary.json`);
    fs.rmSync(summary);
    expect(spawnSync('mkfifo', [summary]).status).toBe(0);
  }, 60_000);

  afterAll(() => {
    for (const child of [ui, mcp]) if (child?.exitCode === null) child.kill('SIGKILL');
  });

  function get(port: number, target: string, cookie: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: target, headers: { Cookie: cookie } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.setTimeout(COMMAND_TIMEOUT_MS, () => req.destroy(new Error(`GET ${target} got no answer in ${COMMAND_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  it('aura ui serves the list and every report, and answers 404 for each special file', async () => {
    ui = spawn(process.execPath, [AURA_BIN, 'ui', '--port', '0', '--json'], { env: { ...process.env, AURA_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve) => createInterface({ input: ui.stdout as NodeJS.ReadableStream }).once('line', resolve));
    const url = new URL(String((JSON.parse(first) as { url: string }).url));
    const port = Number(url.port);
    const prefix = url.pathname;
    const cookie = `aura_ui_${port}=${url.searchParams.get('token') ?? ''}`;
    for (let round = 0; round < 2; round++) {
      const list = await get(port, prefix, cookie);
      expect(list.status).toBe(200);
      expect(list.body).toContain(goodId);
      expect(list.body).not.toContain(FIFO);
      expect((await get(port, `${prefix}s/${goodId}`, cookie)).status).toBe(200);
      for (const id of Object.keys(WHY)) expect((await get(port, `${prefix}s/${id}`, cookie)).status, id).toBe(404);
    }
  });

  it('aura mcp --http answers every tool call of a real MCP client', async () => {
    const token = 'token-for-special-files-0123456789';
    const tokens = path.join(tempDir(), 'tokens.yaml');
    fs.writeFileSync(tokens, `tokens:\n  - token: ${token}\n    folders: [${path.join(home, 'sessions')}]\n`);
    mcp = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await listeningUrl(mcp);
    const clients = await Promise.all(
      [0, 1].map(async () => {
        const client = new Client({ name: 'aura-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
        return client;
      }),
    );
    try {
      const [first, second] = clients as [Client, Client];
      const findings = await first.callTool({ name: 'get_session_findings', arguments: {} });
      expect(findings.isError).not.toBe(true);
      const body = findings.structuredContent as { findings: { kind: string; message?: string; session_id?: string }[] };
      // The FIFO is named in a finding, not waited on.
      expect(body.findings.some((f) => f.session_id === FIFO && /FIFO/.test(f.message ?? ''))).toBe(true);
      const listed = await second.callTool({ name: 'list_sessions', arguments: {} });
      expect(JSON.stringify(listed.structuredContent)).toContain(goodId);
      const verified = await second.callTool({ name: 'verify_session', arguments: { session_key: goodId } });
      expect(verified.structuredContent).toMatchObject({ hash_chain_valid: true, complete: true });
      // Both clients are still answered after the calls that touched the special files.
      expect((await first.callTool({ name: 'get_session_report', arguments: { session_key: goodId } })).isError).not.toBe(true);
      expect((await second.callTool({ name: 'get_session_findings', arguments: { session_key: goodId } })).isError).not.toBe(true);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});

describe('a line longer than a reader can hold', () => {
  it('is malformed_line at its number, and the lines after it are still counted', async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    const [first, ...rest] = lines(trail);
    // A limit above every real line (in bytes), and one line three times over it.
    const limit = Math.max(...[first, ...rest].map((line) => Buffer.byteLength(line ?? ''))) + 2;
    const file = path.join(tempDir(), 'long.jsonl');
    fs.writeFileSync(file, `${first}\n${'x'.repeat(3 * limit)}\n${rest.join('\n')}\n`);
    const read = [...trailLines(file, limit)];
    expect(read[1]).toMatchObject({ number: 2, text: '', overlong: true });
    expect(read).toHaveLength(rest.length + 2);
    expect(read[2]?.text).toBe(rest[0]);
    const report = verifyLines(trailLines(file, limit));
    expect(report).toMatchObject({ hash_chain_valid: false, reason: 'malformed_line', line: 2, events: 1 });
    expect(report.message).toMatch(/^line 2 is longer than \d+ bytes, the most a line may hold/);
    expect(read.slice(2).map((line) => line.text)).toEqual(rest);
    // An untouched trail reads the same under the small limit: the limit only refuses, never splits.
    expect(verifyLines(trailLines(trail, limit))).toMatchObject({ hash_chain_valid: true, complete: true });
  });

  it('aura verify chain reports malformed_line, not an internal error, for a 600 MiB line', async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const file = path.join(tempDir(), 'huge.jsonl');
    fs.writeFileSync(file, `${lines(path.join(home, 'sessions', `${id}.jsonl`))[0] ?? ''}\n`);
    // A sparse file: 600 MiB of zero bytes with no newline, at no cost on disk.
    fs.truncateSync(file, 600 * 1024 * 1024);
    const result = spawnSync(process.execPath, [AURA_BIN, 'verify', 'chain', file, '--json'], { encoding: 'utf8', timeout: 120_000 });
    expect(result.status, result.stderr).toBe(1);
    const json = JSON.parse(result.stdout) as { reason: string; line: number; message: string; events: number };
    expect(json).toMatchObject({ reason: 'malformed_line', line: 2, events: 1 });
    expect(json.message).toMatch(/^line 2 is longer than \d+ bytes, the most a line may hold/);
  }, 130_000);
});
