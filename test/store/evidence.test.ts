import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Observer } from '../../src/observers/bus.js';
import { agent } from '../../src/session/agent.js';
import { checkpointText, KeyRing } from '../../src/spine/signing.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { readSealLog, sealEntryHash } from '../../src/store/seal-log.js';
import { verifyStore } from '../../src/store/verify-store.js';
import { AuraError } from '../../src/errors.js';
import { aura, auraJson } from '../helpers/cli.js';
import { pythonVerify } from '../helpers/python.js';
import { lines, rehash, writeLines } from '../helpers/sessions.js';
import { anchoredHome, tempDir } from '../helpers/temp.js';

type Row = { kind: string; payload: Record<string, unknown>; content_hash: string; prev_hash: string | null; session_id: string };

/** A home with a signing key and `checkpoint_every: 5`. */
function signedHome(): { home: string; keyId: string } {
  const home = tempDir();
  const keyId = KeyRing.generate(path.join(home, 'keys'));
  fs.writeFileSync(path.join(home, 'config.yaml'), 'checkpoint_every: 5\n');
  return { home, keyId };
}

async function signedSession(home: string, events = 12): Promise<{ trail: string; summary: string; id: string }> {
  const session = agent('acme/signed', { home }).session();
  for (let i = 0; i < events; i++) session.emit('step', { i });
  const result = await session.close();
  return { trail: result.log_path, summary: result.exports.summary ?? '', id: result.session_id };
}

function store(home: string, extra: { anchorLog?: string } = {}): ReturnType<typeof verifyStore> {
  return verifyStore({ sessionsDir: path.join(home, 'sessions'), sealLog: path.join(home, 'seals.jsonl'), keys: KeyRing.load(path.join(home, 'keys')), ...extra });
}

function statusOf(report: ReturnType<typeof verifyStore>, id: string): { status: string; reason?: string } | undefined {
  return report.sessions.find((s) => s.session_id === id);
}

/** Re-signs every checkpoint of a rewritten trail with `privateKey`, then recomputes the chain (an attacker with a key). */
function resign(recordLines: string[], privateKey: crypto.KeyObject, keyId: string): string[] {
  let out = rehash(recordLines);
  for (let pass = 0; pass < out.length; pass++) {
    const rows = out.map((line) => JSON.parse(line) as Row);
    const i = rows.findIndex((row, n) => row.kind === 'chain.checkpoint' && (row.payload['key_id'] !== keyId || row.payload['head_hash'] !== rows[n - 1]?.content_hash));
    if (i < 0) break;
    const row = rows[i] as Row;
    const head = (rows[i - 1] as Row).content_hash;
    row.payload = { count: i, head_hash: head, key_id: keyId, signature: crypto.sign(null, Buffer.from(checkpointText(row.session_id, i, head)), privateKey).toString('base64') };
    out = rehash(rows.map((r) => JSON.stringify(r)));
  }
  return out;
}

describe('signing keys', () => {
  it('makes an Ed25519 pair: private key 0600, id = first 8 bytes of SHA-256 of the raw public key', () => {
    const dir = path.join(tempDir(), 'keys');
    const keyId = KeyRing.generate(dir);
    expect(fs.statSync(path.join(dir, `${keyId}.key`)).mode & 0o777).toBe(0o600);
    const raw = crypto.createPublicKey(fs.readFileSync(path.join(dir, `${keyId}.pub`))).export({ format: 'der', type: 'spki' }).subarray(-32);
    expect(keyId).toBe(crypto.createHash('sha256').update(raw).digest('hex').slice(0, 16));
    expect(KeyRing.load(dir).activeKeyId).toBe(keyId);
  });

  it('after a rotation signs with the new key and still verifies what the old one signed', async () => {
    const { home, keyId: first } = signedHome();
    const before = await signedSession(home);
    const second = KeyRing.generate(path.join(home, 'keys'));
    const after = await signedSession(home);
    const ring = KeyRing.load(path.join(home, 'keys'));
    expect(ring.list().map((k) => k.keyId).sort()).toEqual([first, second].sort());
    expect(verifyTrail(before.trail, undefined, { keys: ring }).signatures).toMatchObject({ key_id: first, verified: true });
    expect(verifyTrail(after.trail, undefined, { keys: ring }).signatures).toMatchObject({ key_id: second, verified: true });
  });

  it('refuses to sign with a private key readable by others', () => {
    const { home, keyId } = signedHome();
    fs.chmodSync(path.join(home, 'keys', `${keyId}.key`), 0o644);
    expect(() => agent('acme/signed', { home }).session()).toThrow(/readable by others/);
    expect(fs.existsSync(path.join(home, 'sessions')) ? fs.readdirSync(path.join(home, 'sessions')) : []).toEqual([]);
  });

  it('refuses a swapped public key file', () => {
    const { home, keyId } = signedHome();
    const { publicKey } = crypto.generateKeyPairSync('ed25519');
    fs.writeFileSync(path.join(home, 'keys', `${keyId}.pub`), publicKey.export({ format: 'pem', type: 'spki' }));
    expect(() => KeyRing.load(path.join(home, 'keys'))).toThrow(AuraError);
    expect(() => KeyRing.load(path.join(home, 'keys'))).toThrow(/a key file was swapped/);
  });
});

describe('checkpoints', () => {
  it('add a final one after session.close when the cadence did not just write one', async () => {
    const { home } = signedHome();
    const { trail } = await signedSession(home, 10);
    const kinds = lines(trail).map((line) => (JSON.parse(line) as Row).kind);
    expect(kinds.slice(-2)).toEqual(['session.close', 'chain.checkpoint']);
    expect(verifyTrail(trail, undefined, { keys: KeyRing.load(path.join(home, 'keys')) })).toMatchObject({ complete: true, signatures: { verified: true } });
  });

  it('are ordinary events on the cadence and after session.close, signed, and Python still verifies the trail', async () => {
    const { home, keyId } = signedHome();
    const { trail } = await signedSession(home, 12);
    const rows = lines(trail).map((line) => JSON.parse(line) as Row);
    const positions = rows.flatMap((row, i) => (row.kind === 'chain.checkpoint' ? [i] : []));
    // 2 opening events + 12 steps + close = 15 events, a checkpoint after every 5: the third falls
    // right after session.close, so it is also the final one.
    expect(positions).toEqual([5, 11, 17]);
    for (const i of positions) {
      expect(rows[i]?.payload).toMatchObject({ count: i, head_hash: rows[i - 1]?.content_hash, key_id: keyId });
    }
    expect(rows[16]?.kind).toBe('session.close');
    expect(pythonVerify(trail)).toEqual({ valid: true, events: rows.length });
    const report = verifyTrail(trail, undefined, { keys: KeyRing.load(path.join(home, 'keys')) });
    expect(report).toMatchObject({ hash_chain_valid: true, complete: true, signatures: { signed: true, key_id: keyId, checkpoints: 3, verified: true } });
    expect(verifyTrail(trail).signatures.verified).toBeNull();
  });
});

describe('attacks on a signed store', () => {
  it('a clean store verifies', async () => {
    const { home } = signedHome();
    await signedSession(home);
    await signedSession(home);
    const report = store(home);
    expect(report).toMatchObject({ ok: true, seal_log: { entries: 2, valid: true }, counts: { verified: 2 } });
  });

  it('catches an edit with the whole chain recomputed: the checkpoint no longer covers the head', async () => {
    const { home } = signedHome();
    const { trail, id } = await signedSession(home);
    fs.writeFileSync(trail, `${rehash(lines(trail).map((l) => l.replace('"i": 7', '"i": 70'))).join('\n')}\n`);
    const keys = KeyRing.load(path.join(home, 'keys'));
    expect(verifyTrail(trail, undefined, { keys })).toMatchObject({ hash_chain_valid: false, reason: 'signature_invalid' });
    expect(statusOf(store(home), id)).toMatchObject({ status: 'damaged', reason: 'signature_invalid' });
  });

  it('catches checkpoints re-signed with another key', async () => {
    const { home } = signedHome();
    const { trail } = await signedSession(home);
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
    const forgedId = crypto.createHash('sha256').update(raw).digest('hex').slice(0, 16);
    const forged = writeLines(trail, 'forged.jsonl', resign(lines(trail).map((l) => l.replace('"i": 7', '"i": 70')), privateKey, forgedId));
    expect(verifyTrail(forged)).toMatchObject({ hash_chain_valid: true });
    const report = verifyTrail(forged, undefined, { keys: KeyRing.load(path.join(home, 'keys')) });
    expect(report).toMatchObject({ reason: 'signature_invalid' });
    expect(report.message).toMatch(/not trusted/);
  });

  it('catches checkpoints stripped out, by the cadence the session declared', async () => {
    const { home } = signedHome();
    const { trail } = await signedSession(home);
    const stripped = writeLines(trail, 'stripped.jsonl', rehash(lines(trail).filter((l) => !l.includes('"kind": "chain.checkpoint"'))));
    expect(verifyTrail(stripped)).toMatchObject({ hash_chain_valid: false, reason: 'signature_invalid' });
  });

  for (const [where, keep] of [
    ['above the last checkpoint', -1],
    ['below the last checkpoint', -4],
  ] as const) {
    it(`catches the tail cut ${where}`, async () => {
      const { home } = signedHome();
      const { trail, id, summary } = await signedSession(home);
      fs.writeFileSync(trail, `${lines(trail).slice(0, keep).join('\n')}\n`);
      expect(statusOf(store(home), id)).toMatchObject({ status: 'damaged', reason: 'truncated' });
      const cli = auraJson(['verify', 'chain', trail, '--summary', summary], { home });
      expect(cli.status).toBe(1);
      expect(cli.json['reason']).toBe('truncated');
    });
  }

  it('catches a deleted session', async () => {
    const { home } = signedHome();
    const { trail, id } = await signedSession(home);
    await signedSession(home);
    fs.rmSync(trail);
    const report = store(home);
    expect(report.ok).toBe(false);
    expect(statusOf(report, id)).toMatchObject({ status: 'missing_trail' });
  });

  it('catches a seal line deleted from the middle of the log', async () => {
    const { home } = signedHome();
    for (let i = 0; i < 3; i++) await signedSession(home);
    const log = path.join(home, 'seals.jsonl');
    const entries = lines(log);
    fs.writeFileSync(log, `${[entries[0], entries[2]].join('\n')}\n`);
    const report = store(home);
    expect(report.seal_log).toMatchObject({ valid: false });
    expect(report.seal_log.message).toMatch(/does not link/);
    expect(report.ok).toBe(false);
  });

  it('catches a seal log cut short: its sessions are left unsealed', async () => {
    const { home } = signedHome();
    await signedSession(home);
    const last = await signedSession(home);
    const log = path.join(home, 'seals.jsonl');
    fs.writeFileSync(log, `${lines(log).slice(0, 1).join('\n')}\n`);
    const report = store(home);
    expect(report.seal_log.valid).toBe(true);
    expect(statusOf(report, last.id)).toMatchObject({ status: 'unsealed', reason: 'unsealed' });
    expect(report.ok).toBe(false);
  });

  it('catches a seal rewritten and its log re-chained, by the seal signature', async () => {
    const { home } = signedHome();
    const { trail, id } = await signedSession(home);
    // The attacker cuts the trail, then makes the seal and the log agree with the cut trail.
    const cut = lines(trail).slice(0, -5);
    fs.writeFileSync(trail, `${cut.join('\n')}\n`);
    const log = path.join(home, 'seals.jsonl');
    const [entry] = readSealLog(log).entries;
    const last = JSON.parse(cut.at(-1) ?? '{}') as Row;
    const seal = { ...(entry?.seal ?? { session_id: id, first_hash: null, closed_at: null, key_id: null, signature: null }), events: cut.length, head_hash: last.content_hash };
    fs.writeFileSync(log, `${JSON.stringify({ seal, prev_hash: null, hash: sealEntryHash(null, seal) })}\n`);
    expect(statusOf(store(home), id)).toMatchObject({ status: 'damaged', reason: 'signature_invalid' });
  });

  it('catches a rewritten seal log by its anchor copy', async () => {
    const { home } = signedHome();
    const { anchorDir } = anchoredHome(home);
    const first = await signedSession(home);
    const second = await signedSession(home);
    const anchorLog = path.join(anchorDir, 'seals.jsonl');
    expect(store(home, { anchorLog })).toMatchObject({ ok: true, anchor: { entries: 2, matches: true } });
    // Drop the last seal and keep the log a valid chain: only the anchor tells.
    const log = path.join(home, 'seals.jsonl');
    fs.writeFileSync(log, `${lines(log).slice(0, 1).join('\n')}\n`);
    const report = store(home, { anchorLog });
    expect(report).toMatchObject({ ok: false, anchor: { matches: false } });
    // The session whose seal went is named, not only the store: its row and verify chain say so.
    expect(statusOf(report, second.id)).toMatchObject({ status: 'damaged', reason: 'seal_mismatch' });
    expect(statusOf(report, first.id)).toMatchObject({ status: 'verified' });
    const chain = auraJson(['verify', 'chain', second.id], { home });
    expect(chain).toMatchObject({ status: 1, json: { status: 'damaged', reason: 'seal_mismatch' } });
    expect(chain.json['message']).toContain('anchor copy seals it');
    expect(auraJson(['verify', 'chain', first.id], { home })).toMatchObject({ status: 0, json: { status: 'verified' } });
  });
});

describe('checkpoints where observers record', () => {
  it('a checkpoint falls right after the event that made it due, before the alerts its observers record: the session verifies', async () => {
    const { home } = signedHome();
    // An observer that answers every event it is handed with an alert of its own.
    const echo: Observer = { id: 'echo', kinds: ['step'], onEvent: (event, context) => void context.emit('observer.alert', { seen: event.event_id }) };
    const session = agent('acme/observed', { home }).session({ observers: [echo] });
    for (let i = 0; i < 30; i++) session.emit('step', { i });
    const result = await session.close();
    const kinds = lines(result.log_path).map((line) => (JSON.parse(line) as Row).kind);
    expect(kinds.filter((kind) => kind === 'observer.alert').length).toBeGreaterThan(5);
    expect(kinds.filter((kind) => kind === 'chain.checkpoint').length).toBeGreaterThan(5);
    expect(result.chain).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(auraJson(['verify', 'chain', result.session_id], { home })).toMatchObject({ status: 0, json: { status: 'verified' } });
  });
});

describe('the anchor copy of the seal log', () => {
  it('begun after the store: the seals before it are not expected in it, those after it are', async () => {
    const { home } = signedHome();
    const before = await signedSession(home);
    const { anchorDir } = anchoredHome(home);
    const after = await signedSession(home);
    const anchorLog = path.join(anchorDir, 'seals.jsonl');
    expect(store(home, { anchorLog })).toMatchObject({ ok: true, anchor: { entries: 1, matches: true } });
    expect(auraJson(['verify', 'chain', before.id], { home }).json).toMatchObject({ status: 'verified' });
    expect(auraJson(['verify', 'store'], { home })).toMatchObject({ status: 0 });
    // A seal added to the log after the anchor began, and not to the anchor, was added after the fact.
    const third = await signedSession(home);
    fs.writeFileSync(anchorLog, `${lines(anchorLog).slice(0, 1).join('\n')}\n`);
    const report = store(home, { anchorLog });
    expect(statusOf(report, third.id)).toMatchObject({ status: 'damaged', reason: 'seal_mismatch' });
    expect(statusOf(report, after.id)).toMatchObject({ status: 'verified' });
    expect(statusOf(report, before.id)).toMatchObject({ status: 'verified' });
  });

  it('is where AURA_ANCHOR_DIR says, whatever the home\'s config says: a config rewritten to name a forged copy is not read', async () => {
    const { home } = signedHome();
    const anchorDir = tempDir();
    const env = { AURA_ANCHOR_DIR: anchorDir };
    await signedSession(home);
    const demo = auraJson(['demo'], { home, env });
    expect(demo.status).toBe(0);
    const log = path.join(home, 'seals.jsonl');
    expect(fs.readFileSync(path.join(anchorDir, 'seals.jsonl'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    // The last session deleted with its seal, and a copy of the cut log named as the anchor in the home's config.
    fs.writeFileSync(log, `${lines(log).slice(0, 1).join('\n')}\n`);
    const sessions = path.join(home, 'sessions');
    for (const name of fs.readdirSync(sessions).filter((file) => file.startsWith(String(demo.json['session_id'])))) fs.rmSync(path.join(sessions, name));
    const forged = tempDir();
    fs.copyFileSync(log, path.join(forged, 'seals.jsonl'));
    fs.appendFileSync(path.join(home, 'config.yaml'), `anchor_dir: ${forged}\n`);
    expect(auraJson(['verify', 'store'], { home }).json).toMatchObject({ ok: true });
    expect(auraJson(['verify', 'store'], { home, env })).toMatchObject({ status: 1, json: { anchor: { matches: false } } });
  });

  it('kept by a home and by a project of it (storage: project) in one folder, each in its own file; one shared by two stores fails verify store saying so', async () => {
    const { home, anchorDir } = anchoredHome();
    const project = tempDir();
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'storage: project\n');
    for (const args of [['demo'], ['--project', project, 'demo'], ['demo']]) expect(auraJson(args, { home }).status).toBe(0);
    expect(fs.readdirSync(anchorDir)).toHaveLength(2);
    expect(auraJson(['verify', 'store'], { home })).toMatchObject({ status: 0, json: { anchor: { matches: true } } });
    expect(auraJson(['--project', project, 'verify', 'store'], { home })).toMatchObject({ status: 0, json: { anchor: { matches: true } } });
    // Another home given the same anchor file: its seals are strangers to this store.
    const other = tempDir();
    expect(auraJson(['--anchor-dir', anchorDir, 'demo'], { home: other }).status).toBe(0);
    const shared = auraJson(['verify', 'store'], { home });
    expect(shared.status).toBe(1);
    expect((shared.json['anchor'] as { message: string }).message).toContain('shared with another store');
    expect((shared.json['sessions'] as { status: string }[]).every((s) => s.status === 'intact')).toBe(true);
  });

  it("is named after a project's folder itself, however its path was given (a symlink, a trailing slash): one project, one copy", async () => {
    const { home, anchorDir } = anchoredHome();
    const project = tempDir();
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'storage: project\n');
    const link = path.join(tempDir(), 'link');
    fs.symlinkSync(project, link);
    for (const given of [project, link, `${project}/`]) expect(auraJson(['--project', given, 'demo'], { home }).status).toBe(0);
    expect(fs.readdirSync(anchorDir)).toHaveLength(1);
    for (const given of [project, link]) expect(auraJson(['--project', given, 'verify', 'store'], { home })).toMatchObject({ status: 0, json: { anchor: { matches: true } } });
  });

  it('is written before the seal log: a copy that cannot be written fails the close and leaves the log without the seal, so no reader takes the session for tampered', async () => {
    const { home, anchorDir } = anchoredHome();
    await signedSession(home);
    // The copy's file is a folder now: appending to it fails at once.
    fs.rmSync(path.join(anchorDir, 'seals.jsonl'));
    fs.mkdirSync(path.join(anchorDir, 'seals.jsonl'));
    const session = agent('acme/signed', { home }).session();
    session.emit('step', { i: 1 });
    await expect(session.close()).rejects.toThrow(/seals\.jsonl/);
    expect(readSealLog(path.join(home, 'seals.jsonl')).entries.map((entry) => entry.seal.session_id)).not.toContain(session.id);
  });
});

describe('a seal log whose last line was cut short', () => {
  it('does not stop later closes: the torn line ends where it stands, the next seal is a line of its own, and verify store names the torn line', async () => {
    const home = tempDir();
    await signedSession(home);
    const log = path.join(home, 'seals.jsonl');
    fs.truncateSync(log, fs.statSync(log).size - 20);
    const next = await signedSession(home);
    const text = fs.readFileSync(log, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text.split('\n').filter(Boolean)).toHaveLength(2);
    expect(JSON.parse(text.split('\n')[1] ?? '{}')).toMatchObject({ seal: { session_id: next.id }, prev_hash: null });
    const report = store(home);
    expect(report.ok).toBe(false);
    expect(JSON.stringify(report)).toContain('line 1');
  });
});

describe('aura keys and aura verify store', () => {
  it('init, list, refuse a second init, rotate; verify store exits 0 on a clean store and 1 on a damaged one', () => {
    const home = tempDir();
    const init = auraJson(['keys', 'init'], { home });
    expect(init.status).toBe(0);
    expect(init.json['key_id']).toMatch(/^[0-9a-f]{16}$/);
    const again = aura(['keys', 'init'], { home });
    expect(again.status).toBe(2);
    expect(again.stderr).toContain("use 'aura keys rotate'");
    expect(auraJson(['keys', 'rotate'], { home }).status).toBe(0);
    const list = auraJson(['keys', 'list'], { home });
    expect((list.json['keys'] as unknown[]).length).toBe(2);

    const demo = auraJson(['demo'], { home });
    expect(demo.status).toBe(0);
    const verified = auraJson(['verify', 'store'], { home });
    expect(verified.status).toBe(0);
    expect(verified.json).toMatchObject({ ok: true, counts: { verified: 1 } });
    const human = aura(['verify', 'store'], { home });
    expect(human.stdout).toContain('✓ store verified · 1 session: 1 verified\n');

    const trail = String(demo.json['trail']);
    fs.writeFileSync(trail, `${lines(trail).slice(0, -2).join('\n')}\n`);
    const damaged = aura(['verify', 'store'], { home });
    expect(damaged.status).toBe(1);
    expect(damaged.stdout).toMatch(/damaged\s+truncated/);
    expect(damaged.stdout).toContain('✗ store has problems · 1 session: 1 damaged\n');
  });

  it('verify chain checks signatures against --public-key', async () => {
    const { home, keyId } = signedHome();
    const { trail } = await signedSession(home);
    const run = auraJson(['verify', 'chain', trail, '--public-key', path.join(home, 'keys', `${keyId}.pub`)], { home: tempDir() });
    expect(run.status).toBe(0);
    expect(run.json['signatures']).toMatchObject({ signed: true, verified: true, checkpoints: 3 });
    const strangerDir = path.join(tempDir(), 'keys');
    const stranger = KeyRing.generate(strangerDir);
    const untrusted = auraJson(['verify', 'chain', trail, '--public-key', path.join(strangerDir, `${stranger}.pub`)], { home: tempDir() });
    expect(untrusted.status).toBe(1);
    expect(untrusted.json).toMatchObject({ reason: 'signature_invalid' });
  });
});
