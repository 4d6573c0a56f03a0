import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AURA_PY, interopIndex, pythonTrail } from '../helpers/fixtures.js';
import { spawnSync } from 'node:child_process';
import { aura, AURA_BIN, auraJson, STACK_TRACE } from '../helpers/cli.js';
import { lines, writeLines } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

describe('aura demo', () => {
  it('writes a real session to the sessions folder, and prints its path, verdict and verify result', () => {
    const home = tempDir();
    const run = aura(['demo'], { home });
    expect(run.status).toBe(0);
    const id = /session (aura_sess_[0-9a-f]{12})/.exec(run.stdout)?.[1] ?? '';
    const trail = path.join(home, 'sessions', `${id}.jsonl`);
    expect(run.stdout).toContain(trail);
    expect(run.stdout).toMatch(/verdict\s+FAIL \(findings: POLICY_VIOLATION, SCHEMA_VIOLATION/);
    expect(run.stdout).toMatch(/shell\.exec denied by deny_tools/);
    expect(run.stdout).toMatch(/calendar\.book held for approval req_[0-9a-f]{10}, approved by demo-operator/);
    expect(run.stdout).toMatch(/mail\.send arguments refused by their schema, then fixed/);
    expect(run.stdout).toMatch(/calendar\.invite_status polled 5 times with no progress: break nudged at the 3rd, stopped at the 5th \(ACTION_FIXATION\), refused the next call \(LOOP_BROKEN\)/);
    expect(run.stdout).toMatch(/secret\s+the injected key appears in none of the files aura wrote/);
    expect(run.stdout).toMatch(/contacts\.lookup returned personal data, masked before it was recorded: a\*\*\*@e\*\*\*\.com, \+\*\*\* \*\*\* \*\*\* \*78, \*\*\*\* \*\*\*\* \*\*\*\* 1111/);
    expect(run.stdout).toMatch(/pii\s+the raw e-mail, phone and card number appear in none of the files aura wrote/);
    expect(run.stdout).toMatch(/verify\s+hash chain valid, complete, matches the seal/);
    expect(fs.existsSync(path.join(home, 'sessions', `${id}.summary.json`))).toBe(true);
    expect(lines(trail).length).toBeGreaterThan(10);
    const kinds = lines(trail).map((line) => (JSON.parse(line) as { kind: string }).kind);
    expect(kinds).toEqual(
      expect.arrayContaining(['turn.start', 'model.call', 'tool.call', 'tool.result', 'tool.error', 'capability.injected', 'constraint.violated', 'constraint.approval_required', 'constraint.approved', 'observer.alert', 'membrane.nudge', 'task.complete']),
    );
    expect(kinds.at(-1)).toBe('session.close');

    const verified = auraJson(['verify', 'chain', trail, '--summary', path.join(home, 'sessions', `${id}.summary.json`)], { home });
    expect(verified.status).toBe(0);
    expect(verified.json).toMatchObject({ hash_chain_valid: true, complete: true, events: kinds.length });
  });

  it('honours --home and --project with storage: project', () => {
    const project = tempDir();
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'storage: project\n');
    const run = auraJson(['--home', tempDir(), '--project', project, 'demo']);
    expect(run.status).toBe(0);
    expect(String(run.json['trail'])).toBe(path.join(project, '.aura', 'sessions', `${String(run.json['session_id'])}.jsonl`));
  });

  it('seals the demo into --anchor-dir too, which verify chain then checks the session against', () => {
    const home = tempDir();
    const anchor = tempDir();
    const run = auraJson(['--home', home, '--anchor-dir', anchor, 'demo']);
    expect(run.status).toBe(0);
    const id = String(run.json['session_id']);
    expect(fs.readFileSync(path.join(anchor, 'seals.jsonl'), 'utf8')).toBe(fs.readFileSync(path.join(home, 'seals.jsonl'), 'utf8'));
    expect(auraJson(['--anchor-dir', anchor, 'verify', 'chain', id], { home })).toMatchObject({ status: 0, json: { status: 'intact' } });
  });

  it('refuses an empty --home, --project or --anchor-dir (each would name the current folder) and a --project that does not exist', () => {
    const cwd = tempDir();
    for (const flag of ['--home', '--project', '--anchor-dir']) {
      const run = aura([flag, '', 'sessions', 'list'], { cwd });
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(`invalid ${flag} "": expected a folder path`);
    }
    expect(fs.readdirSync(cwd)).toEqual([]);
    const missing = path.join(tempDir(), 'no-such-project');
    const run = aura(['--project', missing, 'sessions', 'list']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`--project folder not found: ${missing}`);
  });
});

describe('aura demo with a known secret', () => {
  it('never writes the injected secret to the trail, the summary or the spans', () => {
    const home = tempDir();
    const secret = 'weather-key-5d1c9e0b7a2f4c31';
    const env = { ...process.env, NO_COLOR: '1', AURA_HOME: home, AURA_DEMO_WEATHER_KEY: secret };
    const run = spawnSync(process.execPath, [AURA_BIN, 'demo', '--json'], { env, encoding: 'utf8' });
    expect(run.status).toBe(0);
    const demo = JSON.parse(run.stdout) as { exports: { jsonl: string; summary: string; otel: string }; secret_leaked_into: string[]; pii_leaked_into: string[]; findings: string[] };
    expect(demo.secret_leaked_into).toEqual([]);
    expect(demo.pii_leaked_into).toEqual([]);
    expect(demo.findings).toContain('PII_MASKED');
    for (const file of [demo.exports.jsonl, demo.exports.summary, demo.exports.otel]) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text.length).toBeGreaterThan(0);
      expect(text, file).not.toContain(secret);
      for (const value of ['ana.traveller@example.com', '+351 912 345 678', '4111 1111 1111 1111']) expect(text, file).not.toContain(value);
    }
    expect(fs.readFileSync(demo.exports.jsonl, 'utf8')).toContain('"inject_as": "api_key"');
  });
});

describe('aura verify chain', () => {
  const index = interopIndex();
  for (const [name, { session_id }] of Object.entries(index.sessions)) {
    it(`exits 0 for the Python Aura trail ${name}`, () => {
      const run = auraJson(['verify', 'chain', pythonTrail(session_id)]);
      expect(run.status).toBe(0);
      expect(run.json).toMatchObject({ hash_chain_valid: true, complete: true });
    });
  }
  for (const [name, entry] of Object.entries(index.tampered)) {
    it(`answers ${name} as index.json requires, in JSON and for people`, () => {
      const file = path.join(AURA_PY, 'tampered', entry.file);
      const run = auraJson(['verify', 'chain', file]);
      const must = entry.aura_must_answer;
      if (must.exit !== undefined) expect(run.status).toBe(must.exit);
      if (must.reason !== undefined) expect(run.json['reason']).toBe(must.reason);
      if (must.hash_chain_valid !== undefined) expect(run.json['hash_chain_valid']).toBe(must.hash_chain_valid);
      if (must.complete !== undefined) expect(run.json['complete']).toBe(must.complete);
      const human = aura(['verify', 'chain', file]);
      expect(human.status).toBe(run.status);
      if (must.reason !== undefined) expect(human.stdout).toContain(must.reason);
      expect(human.stdout + human.stderr).not.toMatch(STACK_TRACE);
    });
  }

  it('exits 1 with truncated when the trail is shorter than its summary says', () => {
    const home = tempDir();
    const demo = auraJson(['demo'], { home });
    const trail = String(demo.json['trail']);
    const cut = writeLines(trail, 'cut.jsonl', lines(trail).slice(0, -3));
    const run = auraJson(['verify', 'chain', cut, '--summary', trail.replace('.jsonl', '.summary.json')]);
    expect(run.status).toBe(1);
    expect(run.json).toMatchObject({ hash_chain_valid: false, reason: 'truncated' });
  });

  it('accepts a session id and finds its trail in the sessions folder', () => {
    const home = tempDir();
    const demo = auraJson(['demo'], { home });
    expect(auraJson(['verify', 'chain', String(demo.json['session_id'])], { home }).status).toBe(0);
  });

  it("keeps each command's compiled code in the home's cache, files only this user may write, and takes them as they are", () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const caches = (): string[] => fs.readdirSync(path.join(home, 'cache')).filter((name) => /^(cli-[0-9a-f]{16}-[a-z-]+|verify-chain-[0-9a-f]{16})\.v8cache$/.test(name)).sort();
    expect(caches()).toEqual([expect.stringMatching(/^cli-.*-demo\.v8cache$/)]);
    const demoCache = path.join(home, 'cache', caches()[0] as string);
    expect(fs.statSync(demoCache).mode & 0o777).toBe(0o600);
    const written = fs.readFileSync(demoCache);
    // A cache holds the code its command compiled: `verify chain`, from its own bundle, does not load the demo's.
    expect(auraJson(['verify', 'chain', id], { home }).status).toBe(0);
    expect(caches()).toEqual([expect.stringMatching(/^cli-.*-demo\.v8cache$/), expect.stringMatching(/^verify-chain-[0-9a-f]{16}\.v8cache$/)]);
    const verifyCache = path.join(home, 'cache', caches()[1] as string);
    expect(fs.statSync(verifyCache).size).toBeLessThan(written.length / 2);
    // `verify store` runs from the whole command line's bundle, with a cache of its own.
    expect(auraJson(['verify', 'store'], { home }).status).toBe(0);
    expect(caches()).toContainEqual(expect.stringMatching(/^cli-.*-verify\.v8cache$/));
    const verifyWritten = fs.readFileSync(verifyCache);
    expect(auraJson(['verify', 'chain', id], { home }).status).toBe(0);
    expect(fs.readFileSync(verifyCache).equals(verifyWritten)).toBe(true);
    expect(fs.readFileSync(demoCache).equals(written)).toBe(true);
  });

  it('never runs a rewritten bundle from the cache of the one before, even at the same length', () => {
    // A copy of the built command (its bundles need nothing outside dist/ for --version).
    const copy = tempDir();
    fs.cpSync(path.dirname(path.dirname(AURA_BIN)), copy, { recursive: true, filter: (source) => !source.endsWith('.map') && !source.endsWith('.d.ts') });
    const bin = path.join(copy, 'cli', 'bin.cjs');
    const home = tempDir();
    const version = (): string => spawnSync(process.execPath, [bin, '--home', home, '--version'], { encoding: 'utf8' }).stdout.trim();
    const { version: built } = JSON.parse(fs.readFileSync(path.join(path.dirname(path.dirname(path.dirname(AURA_BIN))), 'package.json'), 'utf8')) as { version: string };
    expect(version()).toBe(`aura-harness ${built}`);
    expect(version()).toBe(`aura-harness ${built}`);
    expect(fs.readdirSync(path.join(home, 'cache'))).toHaveLength(1);
    // V8 checks a cache against the text's length only: the same length with other text must still be compiled anew.
    const bundle = path.join(copy, 'cli.cjs');
    const other = built.replace(/\d/g, (digit) => String((Number(digit) + 1) % 10));
    const text = fs.readFileSync(bundle, 'latin1');
    expect(text).toContain(`VERSION=${JSON.stringify(built)}`);
    fs.writeFileSync(bundle, text.replace(`VERSION=${JSON.stringify(built)}`, `VERSION=${JSON.stringify(other)}`), 'latin1');
    expect(version()).toBe(`aura-harness ${other}`);
  });

  const usage: [string, string[], RegExp][] = [
    ['a missing file', ['verify', 'chain', '/nonexistent/trail.jsonl'], /trail not found: \/nonexistent\/trail\.jsonl/],
    ['a folder instead of a file', ['verify', 'chain', '/tmp'], /cannot read \/tmp/],
    ['a summary that is not JSON', ['verify', 'chain', pythonTrail(index.sessions['clean_pass']?.session_id ?? ''), '--summary', pythonTrail(index.sessions['clean_pass']?.session_id ?? '')], /is not a JSON summary/],
    ['no path', ['verify', 'chain'], /missing required argument 'path'/],
    ['no subcommand', ['verify'], /Usage: aura verify/],
    ['an unknown option', ['verify', 'chain', 'x', '--frobnicate'], /unknown option '--frobnicate'/],
  ];
  for (const [what, args, message] of usage) {
    it(`exits 2 with a clear message for ${what}`, () => {
      const run = aura(args, { home: tempDir() });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(STACK_TRACE);
    });
  }
});

describe('session ids from outside', () => {
  const hostile = ['../../etc/passwd', 'aura_sess_x', '../aura_sess_0123456789ab', 'aura_sess_0123456789AB', '/etc/passwd', 'aura_sess_0123456789ab/../../x'];
  for (const command of ['export', 'export-otel']) {
    for (const id of hostile) {
      it(`${command} refuses ${JSON.stringify(id)} with exit 2`, () => {
        const run = aura([command, id], { home: tempDir() });
        expect(run.status).toBe(2);
        expect(run.stderr).toContain('invalid session id');
        expect(run.stderr).not.toMatch(STACK_TRACE);
      });
    }
  }

  it('export of an unknown session exits 2 saying it is not found', () => {
    const run = aura(['export', 'aura_sess_0123456789ab'], { home: tempDir() });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/trail not found: .*aura_sess_0123456789ab\.jsonl/);
  });
});

describe('aura export and export-otel', () => {
  it('prints the summary, and rebuilds it from the trail when it is gone', () => {
    const home = tempDir();
    const demo = auraJson(['demo'], { home });
    const id = String(demo.json['session_id']);
    const summaryPath = path.join(home, 'sessions', `${id}.summary.json`);
    const original = fs.readFileSync(summaryPath, 'utf8');
    const printed = aura(['export', id], { home });
    expect(printed.status).toBe(0);
    expect(printed.stdout).toBe(original);
    fs.rmSync(summaryPath);
    fs.rmSync(path.join(home, 'sessions', `${id}.otel.jsonl`));
    const rebuilt = auraJson(['export', id], { home });
    expect(rebuilt.status).toBe(0);
    expect(rebuilt.json).toMatchObject({ session_id: id, audit_report: { verdict: 'fail', hash_chain_valid: true } });
    expect(JSON.parse(fs.readFileSync(summaryPath, 'utf8'))).toEqual(JSON.parse(original));
    expect(fs.existsSync(path.join(home, 'sessions', `${id}.otel.jsonl`))).toBe(true);
  });

  it('export-otel writes the same spans again from the trail, one OTLP/JSON request a line', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const otel = path.join(home, 'sessions', `${id}.otel.jsonl`);
    const atClose = fs.readFileSync(otel, 'utf8');
    fs.rmSync(otel);
    const run = auraJson(['export-otel', id], { home });
    expect(run.status).toBe(0);
    expect(run.json).toMatchObject({ session_id: id, path: otel, spans: lines(otel).length });
    expect(run.json['pushed']).toBeUndefined();
    expect(fs.readFileSync(otel, 'utf8')).toBe(atClose);
    const names = lines(otel).map((line) => (JSON.parse(line) as { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] }).resourceSpans[0]?.scopeSpans[0]?.spans[0]?.name);
    expect(names.at(-1)).toMatch(/^invoke_agent /);
    expect(names.filter((name) => name?.startsWith('execute_tool ')).length).toBeGreaterThan(0);
  });
});

describe('aura sessions list and paths', () => {
  it('lists sessions with agent, events, verdict and state', () => {
    const home = tempDir();
    const id = String(auraJson(['demo'], { home }).json['session_id']);
    const list = auraJson(['sessions', 'list'], { home });
    expect(list.status).toBe(0);
    expect(list.json['sessions']).toEqual([expect.objectContaining({ session_id: id, agent_ref: 'demo/trip-planner', verdict: 'fail', hash_chain_valid: true, state: 'closed' })]);
    const human = aura(['sessions', 'list'], { home });
    expect(human.stdout).toMatch(new RegExp(`${id}\\s+demo/trip-planner\\s+\\S+ \\S+\\s+\\d+\\s+fail\\s+intact\\s+closed`));
  });

  it('says so when there are no sessions', () => {
    const run = aura(['sessions', 'list'], { home: tempDir() });
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/no sessions in /);
  });

  it('shows the paths and creates nothing', () => {
    const home = path.join(tempDir(), 'not-yet');
    const run = auraJson(['paths'], { home });
    expect(run.status).toBe(0);
    expect(run.json).toMatchObject({ home, storage: 'global', sessions: path.join(home, 'sessions') });
    expect(fs.existsSync(home)).toBe(false);
  });

  it('exits 2 naming the file and line of a broken config.yaml', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'storage: global\nfsync: [unclosed\n');
    const run = aura(['paths'], { home });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(path.join(home, 'config.yaml'));
    expect(run.stderr).not.toMatch(STACK_TRACE);
  });

  it('exits 2 for a config value outside its set', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: sometimes\n');
    const run = aura(['demo'], { home });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("invalid fsync \"sometimes\": expected 'close', 'every', 'none'");
  });
});

describe('aura', () => {
  it('exits 2 for an unknown command', () => {
    const run = aura(['frobnicate']);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("unknown command 'frobnicate'");
  });

  it('prints its version and help with exit 0', () => {
    expect(aura(['--version']).stdout.trim()).toMatch(/^aura-harness \d+\.\d+\.\d+$/);
    const help = aura(['--help']);
    expect(help.status).toBe(0);
    for (const command of ['demo', 'verify', 'export', 'export-otel', 'sessions', 'paths']) expect(help.stdout).toContain(command);
  });
});
