import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTrail } from '../../src/spine/trail-reader.js';
import { verifyTrail } from '../../src/spine/verify.js';
import { objectOf } from '../../src/spine/json-shape.js';
import type { AuraEvent } from '../../src/spine/record.js';
import { aura, shellWords } from '../helpers/cli.js';
import { REPO } from '../helpers/fixtures.js';
import { spansOnDisk } from '../helpers/otlp-receiver.js';
import { pythonVerify } from '../helpers/python.js';
import { tempDir } from '../helpers/temp.js';

const BIN = path.join(REPO, 'dist', 'cli', 'bin.cjs');

const PROFILE = `agent_ref: acme/claude
rules:
  - { type: deny_tools, tools: [delete_account] }
  - { type: confirm_before, tools: [pay] }
observers:
  - { preset: break, config: { soft: 3, hard: 4 } }
`;

interface HookRun {
  readonly status: number;
  readonly output: Record<string, unknown> | null;
  readonly stderr: string;
}

/** One hook process, as Claude Code runs it: the input on stdin, the answer on stdout. */
function hook(home: string, profile: string, input: Record<string, unknown>): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'hook', 'claude-code', '--home', home, '--profile', profile], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? -1, output: stdout.trim() === '' ? null : (JSON.parse(stdout) as Record<string, unknown>), stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

/** A Claude Code session's hook inputs, in the hooks reference's shapes. */
function claude(sessionId: string) {
  const common = { session_id: sessionId, transcript_path: `/home/me/.claude/projects/p/${sessionId}.jsonl`, cwd: '/home/me/project', permission_mode: 'default' };
  return {
    start: () => ({ ...common, hook_event_name: 'SessionStart', source: 'startup', model: 'claude-sonnet-4-5' }),
    prompt: (prompt: string) => ({ ...common, hook_event_name: 'UserPromptSubmit', prompt }),
    pre: (id: string, tool: string, input: Record<string, unknown>) => ({ ...common, hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input, tool_use_id: id }),
    post: (id: string, tool: string, input: Record<string, unknown>, response: unknown) => ({ ...common, hook_event_name: 'PostToolUse', tool_name: tool, tool_input: input, tool_response: response, tool_use_id: id }),
    stop: () => ({ ...common, hook_event_name: 'Stop', stop_hook_active: false }),
    end: () => ({ ...common, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' }),
  };
}

function setup(profileText = PROFILE): { home: string; profile: string } {
  const home = tempDir();
  const profile = path.join(home, 'claude.yaml');
  fs.writeFileSync(profile, profileText);
  return { home, profile };
}

function trailOf(home: string): { file: string; events: readonly AuraEvent[] } {
  const sessions = path.join(home, 'sessions');
  const name = fs.readdirSync(sessions).find((file) => file.endsWith('.jsonl') && !file.endsWith('.otel.jsonl') && !file.endsWith('.approvals.jsonl'));
  const file = path.join(sessions, name ?? '');
  return { file, events: readTrail(file).events };
}

function decision(run: HookRun): string | null {
  return ((run.output?.['hookSpecificOutput'] as { permissionDecision?: string } | undefined)?.permissionDecision) ?? null;
}

function reason(run: HookRun): string {
  return ((run.output?.['hookSpecificOutput'] as { permissionDecisionReason?: string } | undefined)?.permissionDecisionReason) ?? '';
}

describe('aura hook claude-code', () => {
  it('records one Claude Code session across hook processes, answers PreToolUse from the profile, and closes it at SessionEnd', async () => {
    const { home, profile } = setup();
    const c = claude('2f9c1d7e-sess-one');
    const run = (input: Record<string, unknown>) => hook(home, profile, input);

    expect((await run(c.start())).status).toBe(0);
    await run(c.prompt('Tidy the repo and pay the invoice'));
    // Allowed by default: no decision, Claude Code's own permissions decide.
    const bash = await run(c.pre('toolu_01', 'Bash', { command: 'git status', description: 'status' }));
    expect(bash).toMatchObject({ status: 0, output: null });
    await run(c.post('toolu_01', 'Bash', { command: 'git status' }, { stdout: 'clean', stderr: '', interrupted: false }));
    await run(c.pre('toolu_02', 'Read', { file_path: '/home/me/project/README.md' }));
    await run(c.post('toolu_02', 'Read', { file_path: '/home/me/project/README.md' }, { type: 'text', file: { content: '# hi' } }));
    await run(c.pre('toolu_03', 'mcp__github__create_issue', { title: 'tidy' }));
    await run(c.post('toolu_03', 'mcp__github__create_issue', { title: 'tidy' }, [{ type: 'text', text: 'issue 7' }]));
    // Denied: the refusal is what Claude reads.
    const denied = await run(c.pre('toolu_04', 'delete_account', { user: 'bob' }));
    expect(decision(denied)).toBe('deny');
    expect(reason(denied)).toContain('aura refused this call (POLICY_DENIED)');
    // Held for approval: the person at the permission prompt decides; the tool ran, so they approved.
    const held = await run(c.pre('toolu_05', 'pay', { amount: 120 }));
    expect(decision(held)).toBe('ask');
    await run(c.post('toolu_05', 'pay', { amount: 120 }, { paid: true }));
    // The approval was for exactly that call.
    expect(decision(await run(c.pre('toolu_06', 'pay', { amount: 999 })))).toBe('ask');
    await run(c.stop());
    expect((await run(c.end())).status).toBe(0);

    const { file, events } = trailOf(home);
    const intents = events.filter((e) => e.kind === 'tool.intent');
    expect(intents.map((e) => e.payload['tool_call_id'])).toEqual(['toolu_01', 'toolu_02', 'toolu_03', 'toolu_04', 'toolu_05', 'toolu_06']);
    expect(intents[0]?.payload['target']).toEqual({ kind: 'bash', command: 'git status' });
    expect(intents[1]?.payload['target']).toEqual({ kind: 'file', path: '/home/me/project/README.md' });
    expect(intents[2]?.payload['target']).toEqual({ kind: 'mcp', server: 'github', tool: 'create_issue' });
    const approved = events.find((e) => e.kind === 'constraint.approved');
    const released = events.find((e) => e.kind === 'tool.call' && e.payload['tool'] === 'pay');
    expect(released?.payload['approval']).toEqual({ request_id: approved?.payload['request_id'], principal: 'the person at the Claude Code permission prompt' });
    expect(released?.payload['tool_call_id']).toBe('toolu_05');
    expect(events.filter((e) => e.kind === 'tool.call' && e.payload['tool'] === 'pay')).toHaveLength(1);
    expect(events.at(-1)?.kind).toBe('session.close');
    expect(events.at(-1)?.payload['reason']).toBe('claude_code_prompt_input_exit');
    expect(new Set(events.map((e) => e.session_id)).size).toBe(1);

    expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: true, complete: true, events: events.length });
    expect(pythonVerify(file)).toEqual({ valid: true, events: events.length });
    const spans = spansOnDisk(file.replace(/\.jsonl$/, '.otel.jsonl'));
    expect(spans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'toolu_04')?.attributes['error.type']).toBe('policy_denied');
    expect(spans.filter((s) => s.name === 'execute_tool Bash')).toHaveLength(1);
    // The lease is gone with the session; the next hook of this Claude session opens a new one.
    expect(fs.readdirSync(path.join(home, 'sessions')).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });

  it('loses and merges nothing when parallel tool calls run their hooks in parallel processes', async () => {
    const { home, profile } = setup();
    const c = claude('parallel-sess');
    await hook(home, profile, c.start());
    const ids = Array.from({ length: 8 }, (_, i) => `toolu_p${i}`);
    const pre = await Promise.all(ids.map((id, i) => hook(home, profile, c.pre(id, 'Grep', { pattern: `p${i}`, path: '/home/me/project' }))));
    expect(pre.map((r) => r.status)).toEqual(ids.map(() => 0));
    await Promise.all(ids.map((id, i) => hook(home, profile, c.post(id, 'Grep', { pattern: `p${i}`, path: '/home/me/project' }, { numFiles: i }))));
    const { file, events } = trailOf(home);
    for (const kind of ['tool.intent', 'tool.call', 'tool.result']) {
      expect(events.filter((e) => e.kind === kind).map((e) => e.payload['tool_call_id']).sort()).toEqual([...ids].sort());
    }
    expect(new Set(events.map((e) => e.event_id)).size).toBe(events.length);
    expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: true, complete: false, events: events.length });
    expect(pythonVerify(file)).toEqual({ valid: true, events: events.length });
    // Open between hooks: its lease names this test's process, which lives.
    expect(aura(['sessions', 'list', '--json'], { home }).stdout).toContain('"open"');
  });

  it('stops a polling loop across hook processes with break, and goes on once a person approves from a shell', async () => {
    const { home, profile } = setup();
    const c = claude('loop-sess');
    const poll = { command: 'curl -s http://127.0.0.1:9/job/7' };
    for (let i = 1; i <= 4; i++) {
      expect(decision(await hook(home, profile, c.pre(`toolu_l${i}`, 'Bash', poll)))).toBeNull();
      await hook(home, profile, c.post(`toolu_l${i}`, 'Bash', poll, { stdout: 'pending', stderr: '', interrupted: false }));
    }
    const stopped = await hook(home, profile, c.pre('toolu_l5', 'Bash', poll));
    expect(decision(stopped)).toBe('deny');
    expect(reason(stopped)).toContain('(LOOP_BROKEN)');
    const command = /aura approve (aura_sess_[0-9a-f]{12}) (loop_[0-9a-f]+)/.exec(reason(stopped));
    expect(command).not.toBeNull();
    const approve = aura(['approve', command?.[1] ?? '', command?.[2] ?? '', '--principal', 'alice'], { home });
    expect(approve.status).toBe(0);
    expect(decision(await hook(home, profile, c.pre('toolu_l6', 'Bash', { command: 'cat result.txt' })))).toBeNull();
    const { events } = trailOf(home);
    expect(events.find((e) => e.kind === 'constraint.approved')?.payload).toMatchObject({ request_id: command?.[2], principal: 'alice' });
  });

  it('keeps the credentials a session handles out of the trail: a pasted key, a token in a command, a .env file read, then closes verified', async () => {
    const { home, profile } = setup();
    const c = claude('sess-secrets');
    const key = `sk-proj-${'Q7w'.repeat(12)}`;
    const token = `ghp_${'k3'.repeat(18)}`;
    expect((await hook(home, profile, c.start())).status).toBe(0);
    expect((await hook(home, profile, c.prompt(`use this key: ${key}`))).status).toBe(0);
    const command = { command: `curl -H "Authorization: token ${token}" https://api.github.com/user` };
    expect(decision(await hook(home, profile, c.pre('toolu_1', 'Bash', command)))).toBeNull();
    expect((await hook(home, profile, c.post('toolu_1', 'Bash', command, { stdout: '{"login": "me"}', stderr: '' }))).status).toBe(0);
    const read = { file_path: '/home/me/project/.env' };
    expect(decision(await hook(home, profile, c.pre('toolu_2', 'Read', read)))).toBeNull();
    const env = `OPENAI_API_KEY=${key}\nDATABASE_URL=postgres://app:db-pass-5521@db/app\nDEBUG=true\n`;
    expect((await hook(home, profile, c.post('toolu_2', 'Read', read, { type: 'text', file: { filePath: read.file_path, content: env } }))).status).toBe(0);
    expect((await hook(home, profile, c.end())).status).toBe(0);
    const { file, events } = trailOf(home);
    const trail = fs.readFileSync(file, 'utf8');
    for (const secret of [key, token, 'db-pass-5521']) expect(trail.includes(secret), secret).toBe(false);
    // What is left says what was there, and what was done.
    expect(trail).toContain('OPENAI_API_KEY=[redacted]');
    expect(trail).toContain('postgres://app:[redacted]@db/app');
    expect(trail).toContain('api.github.com/user');
    expect(events.filter((e) => e.kind === 'tool.call')).toHaveLength(2);
    expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: true, complete: true });
    expect(pythonVerify(file)).toMatchObject({ valid: true });
    for (const derived of ['.summary.json', '.otel.jsonl']) {
      const text = fs.readFileSync(file.replace(/\.jsonl$/, derived), 'utf8');
      for (const secret of [key, token, 'db-pass-5521']) expect(text.includes(secret), `${derived}: ${secret}`).toBe(false);
    }
  });

  it('denies a denied tool whose arguments the trail cannot hold (nested too deep), recording why; a result it cannot hold is recorded as why with its call', async () => {
    const { home, profile } = setup();
    const c = claude('deep-args');
    let deep: unknown = 'x';
    for (let i = 0; i < 600; i++) deep = [deep];
    const denied = await hook(home, profile, c.pre('toolu_1', 'delete_account', { id: 7, deep }));
    expect(denied.status).toBe(0);
    expect(denied.output).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } });
    const ran = await hook(home, profile, c.post('toolu_2', 'Read', { file_path: '/tmp/a' }, { deep }));
    expect(ran.status).toBe(0);
    const { file, events } = trailOf(home);
    const intent = events.find((e) => e.kind === 'tool.intent' && e.payload['tool'] === 'delete_account');
    expect(String(objectOf(intent?.payload['args'])['not_recorded'])).toMatch(/^args\[?.*is not JSON: nested deeper than 500 levels$/);
    expect(String(objectOf(intent?.payload['args'])['not_recorded']).length).toBeLessThan(300);
    const result = events.find((e) => e.kind === 'tool.result');
    expect(result?.payload).toMatchObject({ tool: 'Read', tool_call_id: 'toolu_2', args: { file_path: '/tmp/a' } });
    expect(String(objectOf(result?.payload['result'])['not_recorded'])).toMatch(/is not JSON: nested deeper than 500 levels/);
    expect(verifyTrail(file)).toMatchObject({ hash_chain_valid: true });

    // A tool the profile allows is not allowed on aura's word when aura could not see its arguments; refused when failing closed.
    const allowing = setup('agent_ref: acme/claude\nrules:\n  - { type: allow_tools, tools: [Bash] }\n');
    const unseen = await hook(allowing.home, allowing.profile, c.pre('toolu_3', 'Bash', { command: 'cat /run/secrets/db', deep }));
    expect(unseen).toMatchObject({ status: 0, output: null });
    const closed = setup('agent_ref: acme/claude\nrules:\n  - { type: allow_tools, tools: [Bash] }\nclaude_code: { on_error: deny }\n');
    expect(decision(await hook(closed.home, closed.profile, c.pre('toolu_4', 'Bash', { command: 'ls', deep })))).toBe('deny');
    // What such a call printed is not recorded: its command, which would say whether it printed a secret, was not.
    await hook(allowing.home, allowing.profile, c.post('toolu_3', 'Bash', { command: 'cat /run/secrets/db', deep }, { stdout: 'Printed-Secret-0042' }));
    expect(fs.readFileSync(trailOf(allowing.home).file, 'utf8')).not.toContain('Printed-Secret-0042');
  });

  it('refuses a PreToolUse it cannot read when told to fail closed (its input too large, not a hook input; its profile unreadable), and says why', async () => {
    const { home, profile } = setup();
    const run = (args: readonly string[], input: string): { status: number | null; stdout: string; stderr: string } => {
      const result = spawnSync(process.execPath, [BIN, 'hook', 'claude-code', '--home', home, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    };
    const denied = (result: { stdout: string }): string => String(objectOf(objectOf(JSON.parse(result.stdout))['hookSpecificOutput'])['permissionDecision']);
    const pre = JSON.stringify(claude('unreadable').pre('toolu_1', 'Bash', { command: 'ls' }));
    const huge = `{"session_id": "x", "hook_event_name": "PreToolUse", "tool_input": {"content": "${'x'.repeat(65 * 1024 * 1024)}"}}`;
    for (const input of [huge, '{"session_id": 7, "hook_event_name": "PreToolUse"}', 'not json']) {
      const closed = run(['--profile', profile, '--event', 'PreToolUse', '--on-error', 'deny'], input);
      expect(closed.status).toBe(0);
      expect(denied(closed)).toBe('deny');
      expect(closed.stderr).toContain('aura hook claude-code:');
      // Not told to: Claude Code's own permissions decide; another event's hook never refuses.
      expect(run(['--profile', profile, '--event', 'PreToolUse'], input)).toMatchObject({ status: 1, stdout: '' });
      expect(run(['--profile', profile, '--event', 'PostToolUse', '--on-error', 'deny'], input)).toMatchObject({ status: 1, stdout: '' });
    }
    // A profile that cannot be read is a policy that cannot be applied: refused, unless told to allow.
    const broken = path.join(home, 'broken.yaml');
    fs.writeFileSync(broken, 'rules: [ { type: deny_tools, tools: [x] }\n');
    const unread = run(['--profile', broken, '--event', 'PreToolUse'], pre);
    expect(denied(unread)).toBe('deny');
    expect(unread.stdout).toMatch(/refuse calls it cannot check/);
    expect(run(['--profile', path.join(home, 'missing.yaml')], pre).stdout).toMatch(/"permissionDecision":"deny"/);
    expect(run(['--profile', broken, '--on-error', 'allow'], pre)).toMatchObject({ status: 1, stdout: '' });
    expect(run(['--on-error', 'maybe'], pre)).toMatchObject({ status: 1, stdout: '', stderr: expect.stringMatching(/--on-error/) });
  });

  it('denies a tool the profile denies even while another hook holds the trail past the wait (a huge result being written), and says it was not recorded', async () => {
    const { home, profile } = setup();
    const c = claude('busy-trail');
    await hook(home, profile, c.start());
    const { file } = trailOf(home);
    // The append lock of a live process (this one), as a hook writing a result of megabytes holds it.
    fs.writeFileSync(`${file}.append.lock`, JSON.stringify({ pid: process.pid, host: os.hostname(), session_id: 'busy' }));
    try {
      const denied = await hook(home, profile, c.pre('toolu_b1', 'delete_account', { id: 7 }));
      expect(denied.status).toBe(0);
      expect(decision(denied)).toBe('deny');
      expect(reason(denied)).toMatch(/^aura refused this call: .*delete_account.*It was not recorded/);
      // A tool it does not deny is left to Claude Code's own permissions, as before.
      expect(await hook(home, profile, c.pre('toolu_b2', 'Read', { file_path: '/tmp/a' }))).toMatchObject({ status: 1, output: null });
    } finally {
      fs.rmSync(`${file}.append.lock`);
    }
  }, 60_000);

  it('fails closed on an internal error when the profile says so, and records it in the trail', async () => {
    const { home, profile } = setup(`${PROFILE}claude_code: { on_error: deny }\n`);
    const c = claude('error-sess');
    await hook(home, profile, c.start());
    // A lone surrogate is valid JSON text but no trail can hold it: in a tool's name, nothing stands in for it.
    const broken = await hook(home, profile, c.pre('toolu_e1', 'Write\ud800', { file_path: '/tmp/x' }));
    expect(decision(broken)).toBe('deny');
    expect(reason(broken)).toContain("its profile says to refuse calls it cannot check");
    expect(broken.stderr).toContain('aura hook claude-code:');
    const { events } = trailOf(home);
    expect(events.at(-1)).toMatchObject({ kind: 'hook.error', payload: { hook_event_name: 'PreToolUse', fail: 'closed', decision: 'deny' } });

    const open = setup();
    await hook(open.home, open.profile, c.start());
    const passed = await hook(open.home, open.profile, c.pre('toolu_e2', 'Write\ud800', { file_path: '/tmp/x' }));
    expect(passed).toMatchObject({ status: 1, output: null });
    expect(trailOf(open.home).events.at(-1)).toMatchObject({ kind: 'hook.error', payload: { fail: 'open', decision: 'none' } });
  });

  it('keeps its compiled code in a cache in the aura home, uses it, and compiles again when the cache is not one V8 takes or others may change', async () => {
    const { home, profile } = setup();
    const c = claude('sess-cache');
    const cacheDir = path.join(home, 'cache');
    const caches = (): string[] => fs.readdirSync(cacheDir).filter((name) => name.endsWith('.v8cache'));
    // The first parsed the profile's YAML and kept its value: it leaves the code cache to the next,
    // which reads that value, so that the cache holds no compiled yaml.
    expect(decision(await hook(home, profile, c.pre('toolu_c0', 'delete_account', { id: 0 })))).toBe('deny');
    expect(caches()).toEqual([]);
    expect(fs.readdirSync(cacheDir).filter((name) => name.startsWith('profile-'))).toHaveLength(1);
    expect(decision(await hook(home, profile, c.pre('toolu_c1', 'delete_account', { id: 1 })))).toBe('deny');
    expect(caches()).toHaveLength(1);
    const cache = path.join(cacheDir, caches()[0] as string);
    const written = fs.readFileSync(cache);
    expect(written.length).toBeGreaterThan(10_000);

    // Taken as it is: the next process does not write it again.
    expect(decision(await hook(home, profile, c.pre('toolu_c2', 'delete_account', { id: 2 })))).toBe('deny');
    expect(fs.readFileSync(cache).equals(written)).toBe(true);

    // A cache V8 refuses (here, not a cache at all) is written again; one of another build is dropped.
    fs.writeFileSync(cache, 'not a code cache');
    const stale = path.join(cacheDir, 'claude-code-hook-0000000000000000.v8cache');
    fs.writeFileSync(stale, 'an older build');
    expect(decision(await hook(home, profile, c.pre('toolu_c3', 'delete_account', { id: 3 })))).toBe('deny');
    expect(fs.readFileSync(cache).length).toBeGreaterThan(10_000);
    expect(fs.existsSync(stale)).toBe(false);

    // A cache others may change is code this user must not run: it is compiled past and written again, this user's own.
    fs.chmodSync(cache, 0o666);
    expect(decision(await hook(home, profile, c.pre('toolu_c4', 'delete_account', { id: 4 })))).toBe('deny');
    expect(fs.statSync(cache).mode & 0o777).toBe(0o600);
    expect(trailOf(home).events.filter((event) => event.kind === 'constraint.violated')).toHaveLength(5);
  });

  it('refuses input that is not a hook input, with a message and a non-blocking exit', async () => {
    const { home, profile } = setup();
    const run = await new Promise<HookRun>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'hook', 'claude-code', '--home', home, '--profile', profile]);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('close', (code) => resolve({ status: code ?? -1, output: null, stderr }));
      child.stdin.end('not json');
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("Claude Code's hook input");
    expect(fs.existsSync(path.join(home, 'sessions'))).toBe(false);
  });
});

describe('aura hook install claude-code', () => {
  it('merges the hooks block into a settings file, keeping other hooks and replacing its own', () => {
    const home = tempDir();
    const settings = path.join(home, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(settings));
    const other = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] };
    fs.writeFileSync(settings, JSON.stringify({ model: 'opus', hooks: { PreToolUse: [other] } }));
    for (let i = 0; i < 2; i++) expect(aura(['hook', 'install', 'claude-code', '--settings', settings, '--profile', 'claude.yaml'], { home }).status).toBe(0);
    const merged = JSON.parse(fs.readFileSync(settings, 'utf8')) as { model: string; hooks: Record<string, { matcher?: string; hooks: { type?: string; command: string }[] }[]> };
    expect(merged.model).toBe('opus');
    expect(Object.keys(merged.hooks).sort()).toEqual(['PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionEnd', 'SessionStart', 'Stop', 'UserPromptSubmit']);
    expect(merged.hooks['PreToolUse']).toHaveLength(2);
    expect(merged.hooks['PreToolUse']?.[0]).toEqual(other);
    // As the shell Claude Code runs it in reads it (the checkout's path may hold spaces).
    const words = shellWords(merged.hooks['PreToolUse']?.[1]?.hooks[0]?.command ?? '');
    expect(words).toEqual(['node', path.join(REPO, 'dist', 'cli', 'bin.cjs'), 'hook', 'claude-code', '--home', home, '--profile', expect.stringMatching(/\/claude\.yaml$/), '--event', 'PreToolUse']);
    // The command it wrote names the built entry, which is there to run.
    expect(fs.existsSync(words[1] ?? '')).toBe(true);

    // A person's hooks beside aura's in one entry, and a command that only mentions aura's words, are theirs: kept.
    const mine = { type: 'command', command: '/usr/local/bin/my-bash-guard' };
    const mentions = { matcher: '*', hooks: [{ type: 'command', command: 'notify-send hook claude-code-ran' }] };
    const older = [{ type: 'command', command: 'node /opt/aura/dist/cli/bin.js hook claude-code --home /h' }, { type: 'command', command: 'node "C:\\aura\\dist\\cli\\bin.cjs" hook claude-code --home C:\\h' }];
    merged.hooks['PreToolUse'] = [{ matcher: '*', hooks: [mine, ...(merged.hooks['PreToolUse']?.[1]?.hooks ?? [])] }, mentions, { matcher: '*', hooks: older }];
    fs.writeFileSync(settings, JSON.stringify(merged));
    expect(aura(['hook', 'install', 'claude-code', '--settings', settings], { home }).status).toBe(0);
    const again = JSON.parse(fs.readFileSync(settings, 'utf8')) as typeof merged;
    expect(again.hooks['PreToolUse']?.slice(0, 2)).toEqual([{ matcher: '*', hooks: [mine] }, mentions]);
    expect(again.hooks['PreToolUse']).toHaveLength(3);

    const printed = aura(['hook', 'install', 'claude-code', '--json'], { home });
    expect(JSON.parse(printed.stdout)).toMatchObject({ hooks: { SessionEnd: [{ hooks: [{ type: 'command' }] }] } });
    fs.writeFileSync(settings, '{ not json');
    const refused = aura(['hook', 'install', 'claude-code', '--settings', settings], { home });
    expect(refused.status).toBe(2);
    expect(fs.readFileSync(settings, 'utf8')).toBe('{ not json');
  });

  it("keeps the settings file as it was on disk: its mode, a link to it, and refuses a duplicate key, a pipe or a device", async () => {
    const home = tempDir();
    const real = path.join(home, 'dotfiles', 'settings.json');
    fs.mkdirSync(path.dirname(real));
    fs.writeFileSync(real, JSON.stringify({ env: { ANTHROPIC_API_KEY: 'kept-to-its-owner' } }), { mode: 0o600 });
    fs.chmodSync(real, 0o600);
    const link = path.join(home, 'settings.json');
    fs.symlinkSync(real, link);
    expect(aura(['hook', 'install', 'claude-code', '--settings', link], { home }).status).toBe(0);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(fs.statSync(real).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(real, 'utf8'))).toMatchObject({ env: { ANTHROPIC_API_KEY: 'kept-to-its-owner' }, hooks: { PreToolUse: [{ matcher: '*' }] } });

    const twice = path.join(home, 'twice.json');
    fs.writeFileSync(twice, '{"model": "a", "model": "b"}');
    expect(aura(['hook', 'install', 'claude-code', '--settings', twice], { home }).status).toBe(2);
    expect(fs.readFileSync(twice, 'utf8')).toBe('{"model": "a", "model": "b"}');

    const pipe = path.join(home, 'pipe.json');
    spawnSync('mkfifo', [pipe]);
    for (const special of [pipe, '/dev/zero']) {
      const run = await auraAsync(['hook', 'install', 'claude-code', '--settings', special], home);
      expect({ special, status: run.status }).toEqual({ special, status: 2 });
      expect(run.stderr).toMatch(/not a regular file/);
    }
  });
});

/** `aura` in a child that is given up on after 10 s: a command that waits on a pipe would hang the suite. */
function auraAsync(args: readonly string[], home: string): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO, 'dist', 'cli', 'bin.cjs'), '--home', home, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}
