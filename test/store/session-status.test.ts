/**
 * One session status everywhere: the attacks an adversary with write access to AURA_HOME but not
 * the private key can try (stripping signatures, cutting a sealed trail, forging what a summary
 * says), and five sessions (edited, truncated, torn, unsealed, clean) shown with the same status
 * by every surface: verify chain (path and id), verify store, sessions list, report show, report
 * html, the ui list, the MCP tools through the SDK client, and the fleet store.
 */

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportPageModel } from '../../src/report/page-model.js';
import { sessionsListRows } from '../../src/report/list-model.js';
import { agent } from '../../src/session/agent.js';
import { lockPathOf } from '../../src/spine/writer.js';
import { KeyRing } from '../../src/spine/signing.js';
import { readSealLog, sealEntryHash, type SealLogEntry } from '../../src/store/seal-log.js';
import { sessionFiles } from '../../src/store/session-files.js';
import { AURA_BIN, aura, auraJson, listeningUrl } from '../helpers/cli.js';
import { client, tempDatabase } from '../helpers/postgres.js';
import { lines, rehash } from '../helpers/sessions.js';
import { anchoredHome, tempDir } from '../helpers/temp.js';

type Row = { kind: string; payload: Record<string, unknown>; content_hash: string };

async function closedSession(home: string, events: number, sign = true, violation = false): Promise<string> {
  const session = agent('acme/status', { home }).session({ fsync: 'none', sign });
  for (let i = 0; i < events; i++) session.emit('tool.call', { tool: 'search', args: { q: `query ${i}` } });
  if (violation) session.emit('constraint.violated', { tool: 'shell.exec', rule: { type: 'deny_tools' }, message: 'denied' });
  return (await session.close()).session_id;
}

function write(file: string, content: readonly string[]): void {
  fs.writeFileSync(file, `${content.join('\n')}\n`);
}

/**
 * The downgrade of a signed session, as an attacker without the key does it: edit an event, drop
 * the checkpoints and the signing declaration, recompute every hash; null the summary's seal and
 * the seal-log entry's signatures, re-linking the log after it. `open` reshapes session.open.
 */
function downgrade(home: string, id: string, open: (payload: Record<string, unknown>) => void = (p) => delete p['signing'], move = false): void {
  const files = sessionFiles(path.join(home, 'sessions'), id);
  let rows = lines(files.trail).filter((line) => !line.includes('"kind": "chain.checkpoint"')).map((line) => JSON.parse(line.replace('query 1"', 'query 9"')) as Row);
  for (const row of rows) if (row.kind === 'session.open') open(row.payload);
  if (move) {
    const at = rows.findIndex((row) => row.kind === 'session.open');
    const [opening] = rows.splice(at, 1);
    rows.splice(3, 0, opening as Row);
  }
  rows = rehash(rows.map((row) => JSON.stringify(row))).map((line) => JSON.parse(line) as Row);
  write(files.trail, rows.map((row) => JSON.stringify(row)));
  const head = (rows.at(-1) as Row).content_hash;
  const summary = JSON.parse(fs.readFileSync(files.summary, 'utf8')) as Record<string, unknown>;
  summary['seal'] = null;
  summary['chain'] = { ...(summary['chain'] as object), events: rows.length, head_hash: head };
  summary['event_count'] = rows.length;
  fs.writeFileSync(files.summary, JSON.stringify(summary));
  const log = path.join(home, 'seals.jsonl');
  let prev: string | null = null;
  const entries = readSealLog(log).entries.map((entry): SealLogEntry => {
    const seal = entry.seal.session_id === id ? { ...entry.seal, events: rows.length, head_hash: head, key_id: null, signature: null } : entry.seal;
    const hash = sealEntryHash(prev, seal);
    const relinked = { ...entry, seal, prev_hash: prev, hash, ...(entry.seal.session_id === id ? { key_id: null, signature: null } : {}) };
    prev = hash;
    return relinked;
  });
  write(log, entries.map((entry) => JSON.stringify(entry)));
}

/** A home with a signing key, and a trusted copy of its public key elsewhere. */
function signedHome(): { home: string; trusted: string } {
  const home = tempDir();
  const keyId = KeyRing.generate(path.join(home, 'keys'));
  fs.writeFileSync(path.join(home, 'config.yaml'), 'checkpoint_every: 5\n');
  const trusted = tempDir();
  fs.copyFileSync(path.join(home, 'keys', `${keyId}.pub`), path.join(trusted, `${keyId}.pub`));
  return { home, trusted };
}

describe('signatures cannot be stripped', () => {
  it('a downgraded session is unsigned, never verified, with the trusted keys: verify chain <id> and verify store exit 1', async () => {
    const { home, trusted } = signedHome();
    const id = await closedSession(home, 8);
    const before = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
    expect(before.status).toBe(0);
    downgrade(home, id);
    const chain = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
    expect(chain.status).toBe(1);
    expect(before.json).toMatchObject({ status: 'verified', signature_status: 'verified' });
    expect(chain.json).toMatchObject({ status: 'unsigned', signature_status: 'unsigned', reason: 'unsigned' });
    const store = auraJson(['verify', 'store', '--keys', trusted], { home });
    expect(store.status).toBe(1);
    expect(store.json['sessions']).toContainEqual(expect.objectContaining({ session_id: id, status: 'unsigned' }));
    const report = auraJson(['report', 'show', id], { home });
    expect((report.json['audit_report'] as { findings: { kind: string; severity: string }[] }).findings).toContainEqual(expect.objectContaining({ kind: 'SIGNATURE_MISSING', severity: 'critical' }));
  });

  it('a session downgraded after signing began is unsigned even without keys: the seal log says signing had begun', async () => {
    const { home } = signedHome();
    await closedSession(home, 8);
    const id = await closedSession(home, 8);
    downgrade(home, id);
    fs.rmSync(path.join(home, 'keys'), { recursive: true });
    const chain = auraJson(['verify', 'chain', id], { home });
    expect(chain.status).toBe(1);
    expect(chain.json).toMatchObject({ status: 'unsigned' });
  });

  it('a seal-log entry stripped of its signatures breaks the log: the session is not verified', async () => {
    const { home, trusted } = signedHome();
    const id = await closedSession(home, 8);
    const log = path.join(home, 'seals.jsonl');
    const [entry] = readSealLog(log).entries;
    write(log, [JSON.stringify({ ...entry, key_id: null, signature: null, seal: { ...entry?.seal, signature: null, key_id: null } })]);
    const chain = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
    expect(chain.status).toBe(1);
    expect(chain.json['status']).toBe('unsealed');
    expect(auraJson(['verify', 'store', '--keys', trusted], { home })).toMatchObject({ status: 1, json: { seal_log: { valid: false } } });
  });

  for (const [variant, open, move] of [
    ['a numeric signing.key_id', (p: Record<string, unknown>) => void (p['signing'] = { key_id: 1234, checkpoint_every: 5 }), false],
    ['session.open moved to the fourth event', (p: Record<string, unknown>) => void p, true],
  ] as const) {
    it(`a downgrade with ${variant} fails verify chain <id> and verify store with the keys`, async () => {
      const { home, trusted } = signedHome();
      const id = await closedSession(home, 8);
      downgrade(home, id, open, move);
      const chain = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
      expect(chain.status).toBe(1);
      expect(['damaged', 'unsigned']).toContain(chain.json['status']);
      expect(chain.json['reason']).toBe(chain.json['status'] === 'damaged' ? 'signature_invalid' : 'unsigned');
      expect(auraJson(['verify', 'store', '--keys', trusted], { home }).status).toBe(1);
    });
  }

  it('a downgraded session with a planted writer lock is not open with the trusted keys: a lock is a file anyone may write', async () => {
    const { home, trusted } = signedHome();
    await closedSession(home, 8);
    const id = await closedSession(home, 8);
    downgrade(home, id);
    // Its seal gone (the last entry of the log, so the others still verify), its summary too, and a lock naming another host.
    const log = path.join(home, 'seals.jsonl');
    write(log, lines(log).slice(0, -1));
    const files = sessionFiles(path.join(home, 'sessions'), id);
    fs.rmSync(files.summary);
    fs.writeFileSync(lockPathOf(files.trail), JSON.stringify({ pid: 1, host: `not-${os.hostname()}`, session_id: id }));
    const chain = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
    expect(chain).toMatchObject({ status: 1, json: { status: 'unsigned', reason: 'unsigned' } });
    const store = auraJson(['verify', 'store', '--keys', trusted], { home });
    expect(store.status).toBe(1);
    expect(store.json['sessions']).toContainEqual(expect.objectContaining({ session_id: id, status: 'unsigned' }));
    // With the home's keys, as the lists read it.
    expect(auraJson(['sessions', 'list'], { home }).json['sessions']).toContainEqual(expect.objectContaining({ session_id: id, status: 'unsigned' }));
  });

  it('a session forged with a signing declaration, fewer events than its cadence and a planted lock is open with signatures pending, never verified, on every surface', async () => {
    const { home, trusted } = signedHome();
    const source = await closedSession(home, 2);
    const sessions = path.join(home, 'sessions');
    // Its own id, its events edited and rehashed, no checkpoint and no close: nothing in it is signed.
    const forged = 'aura_sess_f00dfeedbeef';
    const rows = lines(sessionFiles(sessions, source).trail)
      .map((line) => JSON.parse(line) as Row & { session_id: string })
      .filter((row) => row.kind !== 'chain.checkpoint' && row.kind !== 'session.close')
      .map((row) => JSON.stringify({ ...row, session_id: forged, payload: row.kind === 'tool.call' ? { tool: 'payments.send', args: { to: 'attacker', amount: 1e6 } } : row.payload }));
    const trail = sessionFiles(sessions, forged).trail;
    write(trail, rehash(rows));
    fs.writeFileSync(lockPathOf(trail), JSON.stringify({ pid: 1, host: `not-${os.hostname()}`, session_id: forged }));
    const chain = auraJson(['verify', 'chain', forged, '--keys', trusted], { home });
    expect(chain.json).toMatchObject({ status: 'open', signature_status: 'pending', signatures: { signed: true, checkpoints: 0, verified: true, checked: 0 } });
    expect(String(chain.json['status_message'])).toMatch(/no checkpoint/);
    expect(aura(['verify', 'chain', forged, '--keys', trusted], { home }).stdout).toMatch(/no signature written yet/);
    const store = auraJson(['verify', 'store', '--keys', trusted], { home });
    expect(store.json['sessions']).toContainEqual(expect.objectContaining({ session_id: forged, status: 'open', signatures: 'pending' }));
    expect(auraJson(['sessions', 'list'], { home }).json['sessions']).toContainEqual(expect.objectContaining({ session_id: forged, status: 'open', signatures: 'pending' }));
    // The session it was made from, sealed and checkpointed, is verified.
    expect(auraJson(['verify', 'chain', source, '--keys', trusted], { home }).json).toMatchObject({ status: 'verified', signature_status: 'verified' });
  });

  it('a session that declares a key the trusted keys do not hold is damaged: signature_invalid, whatever it holds', async () => {
    const { home, trusted } = signedHome();
    const id = await closedSession(home, 2);
    downgrade(home, id, (p) => void (p['signing'] = { key_id: 'ffffffffffffffff', checkpoint_every: 1_000_000_000 }));
    const chain = auraJson(['verify', 'chain', id, '--keys', trusted], { home });
    expect(chain).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'signature_invalid' } });
    expect(String(chain.json['message'])).toMatch(/declares signing by key ffffffffffffffff, which is not trusted/);
    expect(auraJson(['verify', 'store', '--keys', trusted], { home }).status).toBe(1);
  });

  it("a seal-log entry without its own signature vouches for no session before it, and is itself signature_invalid", async () => {
    const home = tempDir();
    const early = await closedSession(home, 3, false);
    const { trusted } = ((): { trusted: string } => {
      const keyId = KeyRing.generate(path.join(home, 'keys'));
      const dir = tempDir();
      fs.copyFileSync(path.join(home, 'keys', `${keyId}.pub`), path.join(dir, `${keyId}.pub`));
      return { trusted: dir };
    })();
    const signed = await closedSession(home, 3);
    expect(auraJson(['verify', 'chain', early, '--keys', trusted], { home }).json).toMatchObject({ status: 'intact', signature_status: 'predates_signing' });
    // The signed entry's own signature nulled, its seal's kept: the log's order is then proved by nothing.
    const log = path.join(home, 'seals.jsonl');
    const entries = readSealLog(log).entries;
    write(log, entries.map((entry) => JSON.stringify(entry.seal.session_id === signed ? { ...entry, key_id: null, signature: null } : entry)));
    expect(auraJson(['verify', 'chain', early, '--keys', trusted], { home })).toMatchObject({ status: 1, json: { status: 'unsigned' } });
    expect(auraJson(['verify', 'chain', signed, '--keys', trusted], { home })).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'signature_invalid' } });
  });

  it('a session sealed before signing began reads as predates_signing, not tampering', async () => {
    const home = tempDir();
    const old = await closedSession(home, 3, false);
    const keyId = KeyRing.generate(path.join(home, 'keys'));
    await closedSession(home, 3);
    const keys = path.join(home, 'keys', `${keyId}.pub`);
    const run = auraJson(['verify', 'chain', old, '--public-key', keys], { home });
    expect(run).toMatchObject({ status: 0, json: { status: 'intact', signature_status: 'predates_signing' } });
    expect(auraJson(['verify', 'store', '--public-key', keys], { home })).toMatchObject({ status: 0, json: { ok: true, counts: { intact: 1, verified: 1 } } });
  });
});

describe('a key planted in AURA_HOME/keys', () => {
  it('signs a forged session the home trusts; with AURA_TRUSTED_KEYS every surface judges it by the anchored keys instead', async () => {
    const { home, trusted } = signedHome();
    const genuine = await closedSession(home, 6);
    // Whoever can write the home makes a key of their own there and writes with it.
    KeyRing.generate(path.join(home, 'keys'));
    const forged = await closedSession(home, 6);
    expect(auraJson(['verify', 'chain', forged], { home })).toMatchObject({ status: 0, json: { status: 'verified' } });

    const env = { AURA_TRUSTED_KEYS: trusted };
    expect(auraJson(['verify', 'chain', genuine], { home, env })).toMatchObject({ status: 0, json: { status: 'verified' } });
    expect(auraJson(['verify', 'chain', forged], { home, env })).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'signature_invalid' } });
    const store = auraJson(['verify', 'store'], { home, env });
    expect(store.status).toBe(1);
    expect(store.json['sessions']).toContainEqual(expect.objectContaining({ session_id: forged, status: 'damaged' }));
    expect(store.json['sessions']).toContainEqual(expect.objectContaining({ session_id: genuine, status: 'verified' }));
    const listed = auraJson(['sessions', 'list'], { home, env }).json['sessions'] as Record<string, unknown>[];
    expect(listed.find((row) => row['session_id'] === forged)).toMatchObject({ status: 'damaged' });
    expect(auraJson(['report', 'show', forged], { home, env }).json).toMatchObject({ status: 'damaged' });
    // One public key file names the anchor as well as a folder does.
    const [pub] = fs.readdirSync(trusted);
    expect(auraJson(['verify', 'chain', forged], { home, env: { AURA_TRUSTED_KEYS: path.join(trusted, pub as string) } }).json).toMatchObject({ status: 'damaged' });

    const client = await mcpClient(home, env);
    try {
      const sessions = ((await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] }).sessions;
      expect(sessions.find((row) => row['session_id'] === forged)).toMatchObject({ status: 'damaged', reason: 'signature_invalid' });
      expect(sessions.find((row) => row['session_id'] === genuine)).toMatchObject({ status: 'verified' });
      const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      expect(findings).toContainEqual(expect.objectContaining({ session_id: forged, kind: 'SIGNATURE_INVALID', severity: 'critical' }));
      const report = (await client.callTool({ name: 'get_session_report', arguments: { session_key: forged } })).structuredContent as { audit_report: { verdict: string; findings: Record<string, unknown>[] } };
      expect(report.audit_report.verdict).toBe('fail');
      expect(report.audit_report.findings).toContainEqual(expect.objectContaining({ kind: 'SIGNATURE_INVALID', severity: 'critical' }));
      expect(((await client.callTool({ name: 'get_session_report', arguments: { session_key: genuine } })).structuredContent as typeof report).audit_report.verdict).toBe('pass');
    } finally {
      await client.close();
    }
    const compared = auraJson(['compare', forged, genuine], { home, env });
    expect(compared.status).toBe(1);
    expect(compared.json).toMatchObject({ audit_verdict: { a: 'fail', b: 'pass', same: false } });
    expect((compared.json['findings_by_kind'] as Record<string, unknown>)['SIGNATURE_INVALID']).toMatchObject({ a: 1, b: 0 });
  });

  it('a single key file is held to what a folder holds it to: named {key_id}.pub, it must hold that key; a private key is never trusted', async () => {
    const { home, trusted } = signedHome();
    const id = await closedSession(home, 3);
    const [pub] = fs.readdirSync(trusted) as [string];
    const [privateKey] = fs.readdirSync(path.join(home, 'keys')).filter((name) => name.endsWith('.key')) as [string];
    const swapped = path.join(tempDir(), 'ea5197cd3ab327bc.pub');
    fs.copyFileSync(path.join(trusted, pub), swapped);
    const asPub = tempDir();
    fs.copyFileSync(path.join(home, 'keys', privateKey), path.join(asPub, pub));
    for (const [env, args, message] of [
      [{ AURA_TRUSTED_KEYS: swapped }, ['verify', 'chain', id], 'a key file was swapped'],
      [{}, ['verify', 'chain', id, '--public-key', swapped], 'a key file was swapped'],
      [{ AURA_TRUSTED_KEYS: path.join(home, 'keys', privateKey) }, ['sessions', 'list'], 'is a private key'],
      [{ AURA_TRUSTED_KEYS: asPub }, ['report', 'show', id], 'is a private key'],
    ] as const) {
      const run = aura(args, { home, env });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });

  it('AURA_TRUSTED_KEYS or --keys naming nothing, or a folder with no public key, is an error that says so, not a check that trusts nothing', async () => {
    const { home } = signedHome();
    const id = await closedSession(home, 3);
    const empty = tempDir();
    const missing = path.join(empty, 'nowhere');
    for (const [args, env, message] of [
      [['verify', 'chain', id, '--keys', empty], {}, `invalid --keys "${empty}": expected a folder holding public keys`],
      [['verify', 'chain', id, '--keys', missing], {}, `--keys folder not found: ${missing}`],
      [['sessions', 'list'], { AURA_TRUSTED_KEYS: empty }, `invalid AURA_TRUSTED_KEYS "${empty}": expected a folder holding public keys`],
      [['report', 'show', id], { AURA_TRUSTED_KEYS: missing }, `AURA_TRUSTED_KEYS not found: ${missing}`],
    ] as const) {
      const run = aura(args, { home, env });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(message);
    }
  });
});

describe('sealed trails cannot pass as torn or incomplete', () => {
  it('a sealed trail cut mid-line is truncated, with or without --summary, and in verify store', async () => {
    const home = tempDir();
    const id = await closedSession(home, 5);
    const files = sessionFiles(path.join(home, 'sessions'), id);
    const bytes = fs.readFileSync(files.trail);
    fs.writeFileSync(files.trail, bytes.subarray(0, bytes.length - 40));
    for (const args of [['verify', 'chain', files.trail], ['verify', 'chain', files.trail, '--summary', files.summary], ['verify', 'chain', id]]) {
      const run = auraJson(args, { home });
      expect(run.status).toBe(1);
      expect(run.json).toMatchObject({ status: 'damaged', reason: 'truncated', hash_chain_valid: false });
    }
    expect(auraJson(['verify', 'store'], { home }).json['sessions']).toContainEqual(expect.objectContaining({ session_id: id, status: 'damaged', reason: 'truncated' }));
  });

  it('verify chain <session_id> on a closed session cut from 66 to 60 whole lines fails as verify store does: TRAIL_TRUNCATED, exit 1', async () => {
    const home = tempDir();
    const id = await closedSession(home, 63);
    const files = sessionFiles(path.join(home, 'sessions'), id);
    expect(lines(files.trail)).toHaveLength(66);
    write(files.trail, lines(files.trail).slice(0, 60));
    const run = auraJson(['verify', 'chain', id], { home });
    expect(run.status).toBe(1);
    expect(run.json).toMatchObject({ status: 'damaged', reason: 'truncated' });
    const report = auraJson(['report', 'show', id], { home });
    expect((report.json['audit_report'] as { findings: { kind: string }[] }).findings.map((f) => f.kind)).toContain('TRAIL_TRUNCATED');
    expect(aura(['verify', 'chain', id], { home }).stdout).toContain('damaged: truncated');
  });
});

describe('a summary aura export wrote for a session never sealed', () => {
  it('seals nothing: a trail cut short stays incomplete, and verify store still fails', async () => {
    const home = tempDir();
    // A home whose seal log exists, and a trail from elsewhere cut short in it.
    await closedSession(home, 2);
    const source = tempDir();
    const cut = await closedSession(source, 6);
    const trail = path.join(home, 'sessions', `${cut}.jsonl`);
    write(trail, lines(sessionFiles(path.join(source, 'sessions'), cut).trail).slice(0, 5));
    expect(auraJson(['verify', 'chain', cut], { home }).json).toMatchObject({ status: 'incomplete' });
    expect(aura(['export', cut], { home }).status).toBe(0);
    expect(fs.existsSync(sessionFiles(path.join(home, 'sessions'), cut).summary)).toBe(true);
    expect(auraJson(['verify', 'chain', cut], { home })).toMatchObject({ status: 1, json: { status: 'incomplete' } });
    expect(auraJson(['verify', 'store'], { home }).status).toBe(1);
  });

  it('of a session its writer still holds, does not make the writer\'s next event read as truncated, nor its summary a forged one', async () => {
    const home = tempDir();
    const session = agent('acme/status', { home }).session({ fsync: 'none' });
    session.emit('tool.call', { tool: 'search', args: { q: 'one' } });
    expect(aura(['export', session.id], { home }).status).toBe(0);
    session.emit('tool.call', { tool: 'search', args: { q: 'two' } });
    expect(auraJson(['verify', 'chain', session.id], { home })).toMatchObject({ status: 0, json: { status: 'open' } });
    // The summary exported while it ran is a snapshot its writer has moved past: not a forged one.
    expect(auraJson(['verify', 'chain', session.id], { home }).json).not.toHaveProperty('summary_mismatch');
    expect(auraJson(['verify', 'store'], { home })).toMatchObject({ status: 0, json: { ok: true } });
    const shown = auraJson(['report', 'show', session.id], { home }).json as { audit_report: { findings: { kind: string }[] }; disagreements: string[] };
    expect(shown.audit_report.findings.map((f) => f.kind)).not.toContain('SUMMARY_MISMATCH');
    expect(shown.disagreements).toEqual(expect.arrayContaining([expect.stringMatching(/^event_count \d+ vs \d+ in the trail$/)]));
    await session.close();
    expect(auraJson(['verify', 'chain', session.id], { home })).toMatchObject({ status: 0, json: { status: 'intact' } });
  });
});

describe('aura export --rebuild of a session whose trail was cut after it was sealed', () => {
  it('keeps the summary that shows what the trail was, and exits 1 naming the status', async () => {
    const home = tempDir();
    const id = await closedSession(home, 8);
    const files = sessionFiles(path.join(home, 'sessions'), id);
    const summary = fs.readFileSync(files.summary, 'utf8');
    write(files.trail, lines(files.trail).slice(0, 4));
    const run = auraJson(['export', id, '--rebuild'], { home });
    expect(run).toMatchObject({ status: 1, json: { session_id: id, rebuilt: false, status: 'damaged', reason: 'truncated' } });
    expect(fs.readFileSync(files.summary, 'utf8')).toBe(summary);
    expect(auraJson(['verify', 'chain', id], { home }).json).toMatchObject({ status: 'damaged', reason: 'truncated' });
  });
});

describe('a summary that is not one', () => {
  for (const [what, text] of [['null', 'null'], ['a list', '[]'], ['a string', '"x"']] as const) {
    it(`(${what}) is damaged: seal_mismatch on every surface, and hides none of the trail's findings`, async () => {
      const home = tempDir();
      const id = await closedSession(home, 3, false, true);
      fs.writeFileSync(sessionFiles(path.join(home, 'sessions'), id).summary, text);
      expect(auraJson(['verify', 'chain', id], { home })).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'seal_mismatch' } });
      expect(auraJson(['verify', 'store'], { home }).status).toBe(1);
      expect(auraJson(['sessions', 'list'], { home }).json['sessions']).toContainEqual(expect.objectContaining({ session_id: id, status: 'damaged' }));
      const report = auraJson(['report', 'show', id], { home });
      expect(report.status).toBe(1);
      const kinds = (report.json['audit_report'] as { findings: { kind: string }[] }).findings.map((f) => f.kind);
      expect(kinds).toEqual(expect.arrayContaining(['SUMMARY_MISMATCH', 'POLICY_VIOLATION']));
    });
  }

  it('with blocks of another shape (a chain of null, a report that is a string) is read without an internal error', async () => {
    const home = tempDir();
    const id = await closedSession(home, 3);
    const file = sessionFiles(path.join(home, 'sessions'), id).summary;
    fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), chain: null, audit_report: 'x' }));
    for (const args of [['verify', 'chain', id], ['verify', 'store'], ['report', 'show', id], ['compare', id, id], ['sessions', 'list']]) {
      const run = aura(args, { home });
      expect({ args, status: run.status === 0 || run.status === 1 }).toEqual({ args, status: true });
    }
  });
});

describe('lists do not trust the stored summary', () => {
  it('an edited trail is damaged on sessions list, MCP list_sessions and the ui list; a forged verdict is not shown', async () => {
    const home = tempDir();
    const edited = await closedSession(home, 3);
    const forged = await closedSession(home, 3, true, true);
    const sessions = path.join(home, 'sessions');
    const trail = sessionFiles(sessions, edited).trail;
    write(trail, lines(trail).map((line) => line.replace('query 1"', 'query 7"')));
    const summary = sessionFiles(sessions, forged).summary;
    // The session's own verdict is fail (a policy violation): the forged summary says pass.
    const text = fs.readFileSync(summary, 'utf8').replace('"verdict": "fail"', '"verdict": "pass"');
    expect(text).toContain('"verdict": "pass"');
    fs.writeFileSync(summary, text);

    const listed = auraJson(['sessions', 'list'], { home }).json['sessions'] as Record<string, unknown>[];
    expect(listed.find((s) => s['session_id'] === edited)).toMatchObject({ status: 'damaged', reason: 'edited', hash_chain_valid: false });
    expect(listed.find((s) => s['session_id'] === forged)?.['verdict']).not.toBe('pass');

    const rows = sessionsListRows(sessions, path.join(home, 'seals.jsonl'), null);
    const row = rows.find((r) => r.session_id === edited);
    expect(row?.chain).toBe('damaged: edited');
    expect(row?.findings?.critical).toBeGreaterThan(0);

    const client = await mcpClient(home);
    try {
      const answer = (await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] };
      expect(answer.sessions.find((s) => s['session_id'] === edited)).toMatchObject({ status: 'damaged', reason: 'edited' });
      expect(answer.sessions.find((s) => s['session_id'] === forged)?.['verdict']).not.toBe('pass');
    } finally {
      await client.close();
    }
  });
});

describe('verify store, verify chain and a stored summary', () => {
  it('fails on a summary whose verdict was edited, naming the session and how it disagrees, as report show flags it', async () => {
    const home = tempDir();
    const honest = await closedSession(home, 3, true, true);
    const forged = await closedSession(home, 3, true, true);
    expect(auraJson(['verify', 'store'], { home })).toMatchObject({ status: 0, json: { ok: true } });
    const summary = sessionFiles(path.join(home, 'sessions'), forged).summary;
    const text = fs.readFileSync(summary, 'utf8').replace('"verdict": "fail"', '"verdict": "pass"');
    expect(text).toContain('"verdict": "pass"');
    fs.writeFileSync(summary, text);

    const run = auraJson(['verify', 'store'], { home });
    expect(run.status).toBe(1);
    expect(run.json['ok']).toBe(false);
    const by = Object.fromEntries((run.json['sessions'] as { session_id: string }[]).map((s) => [s.session_id, s]));
    // The chain and the seal hold: the status is the status module's, and the summary is said apart.
    expect(by[forged]).toMatchObject({ status: 'intact', summary_mismatch: 'the stored summary disagrees with the trail: verdict pass vs fail now' });
    expect(by[honest]).not.toHaveProperty('summary_mismatch');
    const human = aura(['verify', 'store'], { home });
    expect(human.stdout).toContain('1 summary disagrees with its trail');
    expect(human.stdout).toMatch(new RegExp(`${forged}\\s+intact\\s+summary_mismatch\\s+the stored summary disagrees`));
    expect(auraJson(['report', 'show', forged], { home }).json).toMatchObject({ audit_report: { verdict: 'fail', findings: expect.arrayContaining([expect.objectContaining({ kind: 'SUMMARY_MISMATCH' })]) as unknown } });
  });

  it('fails verify chain too, by id, by path and with --summary outside the folder, as verify_session says, and passes the honest one', async () => {
    const home = tempDir();
    const honest = await closedSession(home, 3, true, true);
    const forged = await closedSession(home, 3, true, true);
    const sessions = path.join(home, 'sessions');
    const summary = sessionFiles(sessions, forged).summary;
    const honestText = fs.readFileSync(summary, 'utf8');
    fs.writeFileSync(summary, honestText.replace('"verdict": "fail"', '"verdict": "pass"'));
    const said = 'the stored summary disagrees with the trail: verdict pass vs fail now';

    for (const target of [forged, sessionFiles(sessions, forged).trail]) {
      const run = auraJson(['verify', 'chain', target], { home });
      expect(run.status).toBe(1);
      expect(run.json).toMatchObject({ session_id: forged, status: 'intact', hash_chain_valid: true, summary_mismatch: said });
    }
    expect(aura(['verify', 'chain', forged], { home }).stdout).toContain(`✗ ${said}`);
    const kept = auraJson(['verify', 'chain', honest], { home });
    expect(kept.status).toBe(0);
    expect(kept.json).not.toHaveProperty('summary_mismatch');

    // A trail outside any sessions folder, checked against a summary given for it.
    const elsewhere = tempDir();
    const trail = path.join(elsewhere, 'copy.jsonl');
    fs.copyFileSync(sessionFiles(sessions, forged).trail, trail);
    fs.copyFileSync(summary, path.join(elsewhere, 'edited.json'));
    fs.writeFileSync(path.join(elsewhere, 'honest.json'), honestText);
    expect(auraJson(['verify', 'chain', trail, '--summary', path.join(elsewhere, 'edited.json')], { home })).toMatchObject({ status: 1, json: { summary_mismatch: said } });
    const agreeing = auraJson(['verify', 'chain', trail, '--summary', path.join(elsewhere, 'honest.json')], { home });
    expect(agreeing.status).toBe(0);
    expect(agreeing.json).not.toHaveProperty('summary_mismatch');

    // MCP's verify_session says what verify chain <id> says.
    const mcp = await mcpClient(home);
    try {
      expect((await mcp.callTool({ name: 'verify_session', arguments: { session_key: forged } })).structuredContent).toMatchObject({ status: 'intact', summary_mismatch: said });
      expect((await mcp.callTool({ name: 'verify_session', arguments: { session_key: honest } })).structuredContent).not.toHaveProperty('summary_mismatch');
    } finally {
      await mcp.close();
    }
  });
});

describe("the seal log's anchor copy", () => {
  it('is read by every surface: a seal removed from the log makes its session damaged: seal_mismatch on the lists, report show, the ui list and every MCP tool, as in verify chain', async () => {
    const { home, anchorDir } = anchoredHome();
    const kept = await closedSession(home, 3);
    const removed = await closedSession(home, 3);
    const sealLog = path.join(home, 'seals.jsonl');
    const sessions = path.join(home, 'sessions');
    const listedNow = (): Record<string, unknown>[] => auraJson(['sessions', 'list'], { home }).json['sessions'] as Record<string, unknown>[];
    // Listed once before the log is cut, so the kept index must notice the change.
    expect(listedNow().find((s) => s['session_id'] === removed)).not.toMatchObject({ status: 'damaged' });
    // The log cut back to a valid chain without the last seal: only the anchor copy tells.
    write(sealLog, lines(sealLog).slice(0, 1));
    expect(auraJson(['verify', 'chain', removed], { home })).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'seal_mismatch' } });

    const listed = listedNow();
    expect(listed.find((s) => s['session_id'] === removed)).toMatchObject({ status: 'damaged', reason: 'seal_mismatch' });
    expect(listed.find((s) => s['session_id'] === kept)).not.toMatchObject({ status: 'damaged' });
    expect(auraJson(['report', 'show', removed], { home }).json).toMatchObject({ status: 'damaged', status_label: 'damaged: seal_mismatch' });
    const anchorLog = path.join(anchorDir, 'seals.jsonl');
    expect(sessionsListRows(sessions, sealLog, null, anchorLog).find((r) => r.session_id === removed)?.chain).toBe('damaged: seal_mismatch');

    const client = await mcpClient(home);
    try {
      const rows = ((await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] }).sessions;
      expect(rows.find((s) => s['session_id'] === removed)).toMatchObject({ status: 'damaged', reason: 'seal_mismatch' });
      const verified = (await client.callTool({ name: 'verify_session', arguments: { session_key: removed } })).structuredContent as Record<string, unknown>;
      expect(verified).toMatchObject({ status: 'damaged' });
      const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      expect(findings.filter((f) => f['kind'] === 'SUMMARY_MISMATCH').map((f) => f['session_id'])).toEqual([removed]);
      const report = (await client.callTool({ name: 'get_session_report', arguments: { session_key: removed } })).structuredContent as { audit_report: { verdict: string } };
      expect(report.audit_report.verdict).toBe('fail');
    } finally {
      await client.close();
    }
  });
});

/** The findings that say a session's status, as the status module gives them. */
const STATUS_KINDS = ['HASH_CHAIN_BROKEN', 'TRAIL_TRUNCATED', 'TRAIL_MISSING', 'SEAL_MISSING', 'SUMMARY_MISMATCH', 'SIGNATURE_MISSING', 'SIGNATURE_INVALID'];

/** What a session is expected to be: its status, its reason and the status finding that says so. */
interface Expected {
  readonly status: string;
  readonly reason: string | null;
  readonly kind: string | null;
}

/** A status as the lists and the report label it. */
function labelOf(want: Expected): string {
  return want.reason === null || want.reason === want.status ? want.status : `${want.status}: ${want.reason}`;
}

/**
 * What the CLI says of each session from the fleet store at `url`: verify store (which fails),
 * sessions list, report show and report html. Returns what verify store said.
 */
function expectStoreCommands(url: string, ids: Readonly<Record<string, string>>, expected: Readonly<Record<string, Expected>>): Record<string, unknown> {
  const verified = auraJson(['verify', 'store', '--store', url]);
  expect(verified.status).toBe(1);
  const listed = auraJson(['sessions', 'list', '--store', url]).json['sessions'] as Record<string, unknown>[];
  const out = tempDir();
  for (const [name, want] of Object.entries(expected)) {
    const id = ids[name] as string;
    const fromStore = (verified.json['sessions'] as Record<string, unknown>[]).find((s) => s['session_id'] === id);
    expect([name, fromStore?.['status'], fromStore?.['reason'] ?? null]).toEqual([name, want.status, want.reason]);
    const row = listed.find((s) => s['session_id'] === id);
    expect([name, row?.['status'], row?.['reason']]).toEqual([name, want.status, want.reason]);
    expect([name, auraJson(['report', 'show', id, '--store', url]).json['status_label']]).toEqual([name, labelOf(want)]);
    const html = path.join(out, `${id}.html`);
    expect(aura(['report', 'html', id, '--store', url, '-o', html]).status).toBe(0);
    expect([name, fs.readFileSync(html, 'utf8').includes(`"label":"${labelOf(want)}"`)]).toEqual([name, true]);
  }
  return verified.json;
}

/** What the MCP tools say of each session: list_sessions, verify_session, get_session_findings and get_session_report. */
async function expectTools(client: Client, ids: Readonly<Record<string, string>>, expected: Readonly<Record<string, Expected>>): Promise<void> {
  const listed = ((await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] }).sessions;
  const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
  for (const [name, want] of Object.entries(expected)) {
    const id = ids[name] as string;
    const row = listed.find((s) => s['session_id'] === id);
    expect([name, row?.['status'], row?.['reason']]).toEqual([name, want.status, want.reason]);
    const verified = (await client.callTool({ name: 'verify_session', arguments: { session_key: id } })).structuredContent as Record<string, unknown>;
    expect([name, verified['status']]).toEqual([name, want.status]);
    const kinds = findings.filter((f) => f['session_id'] === id && STATUS_KINDS.includes(String(f['kind']))).map((f) => f['kind']);
    expect([name, kinds]).toEqual([name, want.kind === null ? [] : [want.kind]]);
    const report = (await client.callTool({ name: 'get_session_report', arguments: { session_key: id } })).structuredContent as { audit_report: { findings: { kind: string }[] } };
    expect([name, [...new Set(report.audit_report.findings.map((f) => f.kind).filter((kind) => STATUS_KINDS.includes(kind)))]]).toEqual([name, want.kind === null ? [] : [want.kind]]);
  }
}

describe('in a folder whose seal log is anchored, a session sealed only by its summary, or whose seal only the anchor copy holds', () => {
  const { home, anchorDir } = anchoredHome();
  const sessions = path.join(home, 'sessions');
  const anchorLog = path.join(anchorDir, 'seals.jsonl');
  const ids = { genuine: '', removed: '', forged: 'aura_sess_0ddba11c0ffe' };
  const expected = {
    genuine: { status: 'intact', reason: null, kind: null },
    removed: { status: 'damaged', reason: 'seal_mismatch', kind: 'SUMMARY_MISMATCH' },
    forged: { status: 'unsealed', reason: 'unsealed', kind: 'SEAL_MISSING' },
  } as const;
  const names = Object.keys(expected) as (keyof typeof expected)[];

  beforeAll(async () => {
    ids.genuine = await closedSession(home, 3, false);
    ids.removed = await closedSession(home, 3, false);
    // Its seal (the log's last entry) removed: the log is still a valid chain, only the anchor copy tells.
    const sealLog = path.join(home, 'seals.jsonl');
    write(sealLog, lines(sealLog).slice(0, -1));
    // A new session, written whole by hand: its trail rehashed, and a summary whose chain (as Python Aura's event_count) seals it.
    const forged = ids.forged;
    const rows = rehash(lines(sessionFiles(sessions, ids.genuine).trail).map((line) => JSON.stringify({ ...(JSON.parse(line) as object), session_id: forged })));
    write(sessionFiles(sessions, forged).trail, rows);
    const summary = JSON.parse(fs.readFileSync(sessionFiles(sessions, ids.genuine).summary, 'utf8')) as Record<string, unknown>;
    delete summary['seal'];
    summary['session_id'] = forged;
    const hashOf = (row: string | undefined): string => (JSON.parse(row as string) as Row).content_hash;
    summary['chain'] = { ...(summary['chain'] as object), events: rows.length, first_hash: hashOf(rows[0]), head_hash: hashOf(rows.at(-1)) };
    fs.writeFileSync(sessionFiles(sessions, forged).summary, JSON.stringify(summary));
  }, 60_000);


  it('verify chain, verify store, sessions list, report show and html, the ui list', () => {
    const store = auraJson(['verify', 'store'], { home });
    expect(store.status).toBe(1);
    const listed = auraJson(['sessions', 'list'], { home }).json['sessions'] as Record<string, unknown>[];
    const rows = sessionsListRows(sessions, path.join(home, 'seals.jsonl'), null, anchorLog);
    const out = tempDir();
    for (const name of names) {
      const want = expected[name];
      const id = ids[name];
      const chain = auraJson(['verify', 'chain', id], { home });
      expect([name, chain.status, chain.json['status'], chain.json['status_reason']]).toEqual([name, want.status === 'intact' ? 0 : 1, want.status, want.reason]);
      const fromStore = (store.json['sessions'] as Record<string, unknown>[]).find((s) => s['session_id'] === id);
      expect([name, fromStore?.['status'], fromStore?.['reason'] ?? null]).toEqual([name, want.status, want.reason]);
      const row = listed.find((s) => s['session_id'] === id);
      expect([name, row?.['status'], row?.['reason']]).toEqual([name, want.status, want.reason]);
      expect([name, auraJson(['report', 'show', id], { home }).json['status_label']]).toEqual([name, labelOf(expected[name])]);
      expect([name, rows.find((r) => r.session_id === id)?.chain]).toEqual([name, labelOf(expected[name])]);
      const html = path.join(out, `${id}.html`);
      expect(aura(['report', 'html', id, '-o', html], { home }).status).toBe(0);
      expect([name, fs.readFileSync(html, 'utf8').includes(`"label":"${labelOf(expected[name])}"`)]).toEqual([name, true]);
    }
    expect(auraJson(['verify', 'chain', ids.genuine], { home }).json).toMatchObject({ seal_from: 'seal_log' });
    expect(auraJson(['verify', 'chain', ids.forged], { home }).json).toMatchObject({ seal_from: 'summary' });
  });

  it('aura mcp over stdio', async () => {
    const client = await mcpClient(home);
    try {
      await expectTools(client, ids, expected);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('aura mcp --http, for a granted folder whose anchor copy the tokens file names', async () => {
    const token = 'token-for-the-anchored-folder-0123';
    const tokens = path.join(tempDir(), 'tokens.yaml');
    fs.writeFileSync(tokens, `tokens:\n  - token: ${token}\n    folders: [${sessions}]\nanchors:\n  ${sessions}: ${anchorLog}\n`);
    const server = spawn(process.execPath, [AURA_BIN, 'mcp', '--http', '0', '--tokens', tokens], { stdio: ['ignore', 'ignore', 'pipe'] });
    try {
      const url = await listeningUrl(server);
      const client = new Client({ name: 'status-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      try {
        await expectTools(client, ids, expected);
      } finally {
        await client.close();
      }
    } finally {
      server.kill('SIGTERM');
    }
  }, 60_000);

  it('the fleet store, pushed from the folder: verify store, sessions list, report show and html, and aura mcp --store', async () => {
    const url = await tempDatabase();
    expect(aura(['store', 'init', '--store', url]).status).toBe(0);
    // Older than the push's grace for a session between close and summary.
    const past = new Date(Date.now() - 60_000);
    for (const id of Object.values(ids)) fs.utimesSync(sessionFiles(sessions, id).trail, past, past);
    const pushed = auraJson(['push', '--all', '--host', 'anchored', '--store', url], { home });
    expect(pushed.status, pushed.stderr).toBe(0);
    expectStoreCommands(url, ids, expected);
    const client = await storeMcpClient(url);
    try {
      await expectTools(client, ids, expected);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('the same folder without its anchor: the summary is the only seal there is, as for Python Aura\'s trails', () => {
    fs.writeFileSync(path.join(home, 'config.yaml'), '');
    expect(auraJson(['verify', 'chain', ids.forged], { home })).toMatchObject({ status: 0, json: { status: 'intact', seal_from: 'summary' } });
  });
});

describe('a session whose summary aura sealed, but whose seal-log entry was removed before it was pushed', () => {
  const { home, trusted } = signedHome();
  const sessions = path.join(home, 'sessions');
  const ids = { genuine: '', removed: '', earlier: '' };
  const expected = {
    genuine: { status: 'verified', reason: null, kind: null },
    removed: { status: 'unsealed', reason: 'unsealed', kind: 'SEAL_MISSING' },
  } as const;
  const names = Object.keys(expected) as (keyof typeof expected)[];
  const unlogged = /its summary is sealed, but the seal log has no entry for it/;
  let url = '';

  beforeAll(async () => {
    ids.genuine = await closedSession(home, 8);
    ids.removed = await closedSession(home, 8);
    ids.earlier = await closedSession(home, 8);
    // The log's last two entries removed: it is still a valid chain, and the summaries still carry their seals.
    const sealLog = path.join(home, 'seals.jsonl');
    write(sealLog, lines(sealLog).slice(0, -2));
    // Older than the push's grace for a session between close and summary.
    const past = new Date(Date.now() - 60_000);
    for (const id of Object.values(ids)) fs.utimesSync(sessionFiles(sessions, id).trail, past, past);
    url = await tempDatabase();
    expect(aura(['store', 'init', '--store', url]).status).toBe(0);
  }, 60_000);

  it('is unsealed in its folder, as the check at ingest, verify store --store, sessions list --store, report show and html --store and aura mcp --store say it', async () => {
    for (const name of names) {
      const chain = auraJson(['verify', 'chain', ids[name], '--keys', trusted], { home });
      expect([name, chain.json['status'], chain.json['status_reason']]).toEqual([name, expected[name].status, expected[name].reason]);
    }
    expect(auraJson(['verify', 'chain', ids.removed], { home }).json['status_message']).toMatch(unlogged);
    const pushed = auraJson(['push', ids.genuine, ids.removed, '--host', 'unanchored', '--store', url], { home });
    expect(pushed.status, pushed.stderr).toBe(0);
    const sessionsPushed = pushed.json['sessions'] as Record<string, unknown>[];
    const verified = expectStoreCommands(url, ids, expected);
    for (const [name, want] of Object.entries(expected)) expect([name, sessionsPushed.find((s) => s['session_id'] === ids[name as keyof typeof ids])?.['status']]).toEqual([name, want.status]);
    expect((verified['sessions'] as Record<string, unknown>[]).find((s) => s['session_id'] === ids.removed)?.['message']).toMatch(unlogged);
    const mcp = await storeMcpClient(url);
    try {
      await expectTools(mcp, ids, expected);
    } finally {
      await mcp.close();
    }
  }, 120_000);

  it('pushed before the store kept whether its host read its seal log, is judged as then: by its summary\'s seal', async () => {
    const pushed = auraJson(['push', ids.earlier, '--host', 'unanchored', '--store', url], { home });
    expect(pushed.status, pushed.stderr).toBe(0);
    const judged = (): unknown => (auraJson(['verify', 'store', '--store', url]).json['sessions'] as Record<string, unknown>[]).find((s) => s['session_id'] === ids.earlier);
    expect(judged()).toMatchObject({ status: 'unsealed' });
    // Its close record as one pushed before schema version 6 reads: the log not known to be read (a superuser's hand stands in for that push).
    const sql = client(url);
    await sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`UPDATE aura.closes SET log_read = false WHERE session_id = ${ids.earlier}`;
    });
    expect(judged()).toMatchObject({ status: 'verified' });
    expect(auraJson(['report', 'show', ids.earlier, '--store', url]).json['status_label']).toBe('verified');
    const mcp = await storeMcpClient(url);
    try {
      expect((await mcp.callTool({ name: 'verify_session', arguments: { session_key: ids.earlier } })).structuredContent).toMatchObject({ status: 'verified' });
      const report = (await mcp.callTool({ name: 'get_session_report', arguments: { session_key: ids.earlier } })).structuredContent as { audit_report: { findings: { kind: string }[] } };
      expect(report.audit_report.findings.map((f) => f.kind).filter((kind) => STATUS_KINDS.includes(kind))).toEqual([]);
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

describe("the seal log's anchor copy, when sessions are gone or the copy is broken", () => {
  /** The log with `id`'s seal dropped or edited, its chain made whole again (whoever can write the home can). */
  function relinked(log: string, id: string, how: 'drop' | 'edit'): void {
    let prev: string | null = null;
    const out: string[] = [];
    for (const line of lines(log)) {
      const entry = JSON.parse(line) as SealLogEntry;
      if (entry.seal.session_id === id && how === 'drop') continue;
      const seal = entry.seal.session_id === id ? { ...entry.seal, closed_at: '2020-01-01T00:00:00Z' } : entry.seal;
      const hash = sealEntryHash(prev, seal);
      out.push(JSON.stringify({ ...entry, seal, prev_hash: prev, hash }));
      prev = hash;
    }
    write(log, out);
  }

  it('a deleted session whose seal was rewritten, or deleted with its seal, is named by the lists and the findings as by verify store; a broken copy is a finding', async () => {
    const { home, anchorDir } = anchoredHome();
    const kept = await closedSession(home, 3);
    const rewritten = await closedSession(home, 3);
    const erased = await closedSession(home, 3);
    const sealLog = path.join(home, 'seals.jsonl');
    relinked(sealLog, rewritten, 'edit');
    relinked(sealLog, erased, 'drop');
    const sessions = path.join(home, 'sessions');
    fs.rmSync(sessionFiles(sessions, rewritten).trail);
    const files = sessionFiles(sessions, erased);
    for (const file of [files.trail, files.summary, files.otel]) fs.rmSync(file, { force: true });

    expect(auraJson(['verify', 'store'], { home }).status).toBe(1);
    const listed = auraJson(['sessions', 'list'], { home }).json['sessions'] as Record<string, unknown>[];
    expect(listed.find((s) => s['session_id'] === rewritten)).toMatchObject({ state: 'deleted', status: 'damaged', reason: 'seal_mismatch' });
    expect(listed.find((s) => s['session_id'] === kept)).toMatchObject({ status: 'intact' });

    const client = await mcpClient(home);
    try {
      const rows = ((await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] }).sessions;
      expect(rows.find((s) => s['session_id'] === rewritten)).toMatchObject({ status: 'damaged', reason: 'seal_mismatch' });
      const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      const of = (id: string): unknown[] => findings.filter((f) => f['session_id'] === id).map((f) => f['kind']).sort();
      expect(of(rewritten)).toEqual(['ORPHAN_ARTIFACT', 'SUMMARY_MISMATCH', 'TRAIL_MISSING']);
      expect(of(erased)).toEqual(['TRAIL_MISSING']);
      expect(of(kept)).toEqual([]);
    } finally {
      await client.close();
    }

    // The copy cut at its first line: its entries no longer link, and the channel says so.
    const anchorLog = path.join(anchorDir, 'seals.jsonl');
    write(anchorLog, lines(anchorLog).slice(1));
    const again = await mcpClient(home);
    try {
      const findings = ((await again.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      expect(findings.find((f) => f['kind'] === 'SEAL_LOG_BROKEN')).toMatchObject({ anchor: true, line: 1 });
    } finally {
      await again.close();
    }
  });
});

async function mcpClient(home: string, env: Readonly<Record<string, string>> = {}): Promise<Client> {
  const client = new Client({ name: 'status-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, 'mcp'], env: { ...process.env, ...env, AURA_HOME: home } as Record<string, string>, stderr: 'ignore' }));
  return client;
}

/** A client of `aura mcp --store url`. */
async function storeMcpClient(url: string): Promise<Client> {
  const client = new Client({ name: 'status-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [AURA_BIN, 'mcp', '--store', url], stderr: 'ignore' }));
  return client;
}

describe('verify chain <session_id>', () => {
  it("checks the folder's session, not a file of that name in the current folder", async () => {
    const home = tempDir();
    const id = await closedSession(home, 4);
    const trail = sessionFiles(path.join(home, 'sessions'), id).trail;
    // A look-alike in the current folder: the session's first three lines, no seal to check them against.
    const cwd = tempDir();
    write(path.join(cwd, id), lines(trail).slice(0, 3));
    const run = auraJson(['verify', 'chain', id], { home, cwd });
    expect(run).toMatchObject({ status: 0, json: { session_id: id, status: 'intact', events: lines(trail).length } });
    // A path names the file.
    expect(auraJson(['verify', 'chain', `./${id}`], { home, cwd }).json).toMatchObject({ events: 3 });
  });
});

describe('the findings channel and verify_session, in a home with keys', () => {
  it('judge a session with the same keys: a stripped one is unsigned to both, with its SIGNATURE_MISSING finding', async () => {
    const { home } = signedHome();
    const id = await closedSession(home, 8);
    downgrade(home, id);
    const client = await mcpClient(home);
    try {
      const verified = (await client.callTool({ name: 'verify_session', arguments: { session_key: id } })).structuredContent as Record<string, unknown>;
      expect(verified['status']).toBe('unsigned');
      const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      expect(findings).toContainEqual(expect.objectContaining({ session_id: id, kind: 'SIGNATURE_MISSING', severity: 'critical' }));
      const report = (await client.callTool({ name: 'get_session_report', arguments: { session_key: id } })).structuredContent as { audit_report: { verdict: string; findings: Record<string, unknown>[] } };
      expect(report.audit_report).toMatchObject({ verdict: 'fail', findings: expect.arrayContaining([expect.objectContaining({ kind: 'SIGNATURE_MISSING', severity: 'critical' })]) });
    } finally {
      await client.close();
    }
  });
});

describe('the same status on every surface', () => {
  const home = tempDir();
  const sessions = path.join(home, 'sessions');
  const ids: Record<string, string> = {};
  const expected: Record<string, { status: string; reason: string | null; kind: string | null }> = {
    clean: { status: 'intact', reason: null, kind: null },
    edited: { status: 'damaged', reason: 'edited', kind: 'HASH_CHAIN_BROKEN' },
    truncated: { status: 'damaged', reason: 'truncated', kind: 'TRAIL_TRUNCATED' },
    torn: { status: 'incomplete', reason: 'torn_tail', kind: 'TRAIL_TORN_TAIL' },
    unsealed: { status: 'unsealed', reason: 'unsealed', kind: 'SEAL_MISSING' },
  };
  const names = Object.keys(expected);

  beforeAll(async () => {
    ids['clean'] = await closedSession(home, 4);
    ids['edited'] = await closedSession(home, 4);
    ids['truncated'] = await closedSession(home, 4);
    // Torn: its writer died mid-line (its lock names a process that is gone).
    const torn = agent('acme/status', { home }).session({ fsync: 'none' });
    torn.emit('tool.call', { tool: 'search', args: { q: 'torn' } });
    ids['torn'] = torn.id;
    fs.appendFileSync(torn.files.trail, '{"event_id": "0123');
    fs.writeFileSync(lockPathOf(torn.files.trail), JSON.stringify({ pid: 2 ** 22 + 4321, host: os.hostname(), session_id: torn.id }));
    // Unsealed: closed, then its seal (the log's last entry) and its summary removed.
    ids['unsealed'] = await closedSession(home, 4);
    const log = path.join(home, 'seals.jsonl');
    write(log, lines(log).slice(0, -1));
    fs.rmSync(sessionFiles(sessions, ids['unsealed']).summary);
    const edited = sessionFiles(sessions, ids['edited']).trail;
    write(edited, lines(edited).map((line) => line.replace('query 2"', 'query 8"')));
    const truncated = sessionFiles(sessions, ids['truncated']).trail;
    write(truncated, lines(truncated).slice(0, -2));
    // Older than the push's grace for a session between close and summary.
    const past = new Date(Date.now() - 60_000);
    for (const id of Object.values(ids)) fs.utimesSync(sessionFiles(sessions, id).trail, past, past);
  }, 60_000);

  it('verify chain by path and by id', () => {
    for (const name of names) {
      const want = expected[name] as { status: string; reason: string | null };
      for (const target of [sessionFiles(sessions, ids[name] as string).trail, ids[name] as string]) {
        const run = auraJson(['verify', 'chain', target], { home });
        expect([name, run.json['status'], run.json['status_reason']]).toEqual([name, want.status, want.reason]);
      }
    }
  });

  /** Each session's status and reason in `verify store --json` and `sessions list --json` are the expected ones. */
  function expectStoreAndList(verified: Record<string, unknown>, list: Record<string, unknown>): void {
    const store = verified['sessions'] as Record<string, unknown>[];
    const listed = list['sessions'] as Record<string, unknown>[];
    for (const name of names) {
      const want = expected[name] as { status: string; reason: string | null };
      const fromStore = store.find((s) => s['session_id'] === ids[name]);
      const fromList = listed.find((s) => s['session_id'] === ids[name]);
      expect([name, fromStore?.['status'], fromStore?.['reason'] ?? null]).toEqual([name, want.status, want.reason]);
      expect([name, fromList?.['status'], fromList?.['reason']]).toEqual([name, want.status, want.reason]);
    }
  }

  it('verify store and sessions list --json', () => {
    expectStoreAndList(auraJson(['verify', 'store'], { home }).json, auraJson(['sessions', 'list'], { home }).json);
  });

  it('report show, report html and the ui list and page', () => {
    const rows = sessionsListRows(sessions, path.join(home, 'seals.jsonl'), null);
    const out = tempDir();
    for (const name of names) {
      const want = expected[name] as { status: string; reason: string | null };
      const label = want.reason === null || want.reason === want.status ? want.status : `${want.status}: ${want.reason}`;
      const id = ids[name] as string;
      expect([name, auraJson(['report', 'show', id], { home }).json['status_label']]).toEqual([name, label]);
      expect([name, rows.find((r) => r.session_id === id)?.chain]).toEqual([name, label]);
      const model = reportPageModel(sessionFiles(sessions, id), { generator: 'test', keys: null });
      expect([name, model.chain.status, model.chain.label]).toEqual([name, want.status, label]);
      const html = path.join(out, `${id}.html`);
      expect(aura(['report', 'html', id, '-o', html], { home }).status).toBe(0);
      expect([name, fs.readFileSync(html, 'utf8').includes(`"label":"${label}"`)]).toEqual([name, true]);
    }
  });

  it('the MCP tools through the SDK client', async () => {
    const client = await mcpClient(home);
    try {
      const listed = ((await client.callTool({ name: 'list_sessions', arguments: {} })).structuredContent as { sessions: Record<string, unknown>[] }).sessions;
      const findings = ((await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: 50 } })).structuredContent as { findings: Record<string, unknown>[] }).findings;
      const storeKinds = ['HASH_CHAIN_BROKEN', 'TRAIL_TRUNCATED', 'TRAIL_TORN_TAIL', 'SEAL_MISSING', 'SIGNATURE_MISSING', 'SIGNATURE_INVALID'];
      for (const name of names) {
        const want = expected[name] as { status: string; reason: string | null; kind: string | null };
        const id = ids[name] as string;
        const row = listed.find((s) => s['session_id'] === id);
        expect([name, row?.['status'], row?.['reason']]).toEqual([name, want.status, want.reason]);
        const kinds = findings.filter((f) => f['session_id'] === id && storeKinds.includes(String(f['kind']))).map((f) => f['kind']);
        expect([name, kinds]).toEqual([name, want.kind === null ? [] : [want.kind]]);
        const verified = (await client.callTool({ name: 'verify_session', arguments: { session_key: id } })).structuredContent as Record<string, unknown>;
        expect([name, verified['status']]).toEqual([name, want.status]);
      }
    } finally {
      await client.close();
    }
  }, 60_000);

  it('the fleet store: verify store --store and sessions list --store', async () => {
    const url = await tempDatabase();
    expect(aura(['store', 'init', '--store', url]).status).toBe(0);
    const pushed = auraJson(['push', '--all', '--host', 'status', '--store', url], { home });
    expect(pushed.status).toBe(0);
    expectStoreAndList(auraJson(['verify', 'store', '--store', url]).json, auraJson(['sessions', 'list', '--store', url]).json);
    // get_session_report over the store reads each session's status, as verify_session does.
    const client = await storeMcpClient(url);
    try {
      for (const name of names) {
        const want = expected[name] as { kind: string | null };
        const report = (await client.callTool({ name: 'get_session_report', arguments: { session_key: ids[name] } })).structuredContent as { audit_report: { findings: { kind: string }[] } };
        const kinds = report.audit_report.findings.map((f) => f.kind);
        if (want.kind !== null) expect([name, kinds]).toEqual([name, expect.arrayContaining([want.kind])]);
      }
    } finally {
      await client.close();
    }
  }, 120_000);

  afterAll(() => undefined);
});
