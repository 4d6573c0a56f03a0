import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { configure, currentConfig } from '../../src/config/configure.js';
import { ConfigError, InvalidOptionError } from '../../src/errors.js';
import { agent } from '../../src/session/agent.js';
import { expectAuraError } from '../helpers/errors.js';
import { tempDir } from '../helpers/temp.js';

describe('resolveConfig', () => {
  it('uses AURA_HOME, and ~/.aura without it', () => {
    const home = tempDir();
    expect(resolveConfig({ env: { AURA_HOME: home } }).paths).toMatchObject({ home, base: home, sessions: path.join(home, 'sessions'), storage: 'global' });
    // A home of the test's own: the config of whoever runs the tests is not read.
    const user = tempDir();
    const before = process.env['HOME'];
    process.env['HOME'] = user;
    try {
      expect(resolveConfig({ env: {} }).paths.home).toBe(path.join(user, '.aura'));
    } finally {
      process.env['HOME'] = before;
    }
  });

  it('merges defaults < config.yaml < aura.project.yaml < overrides', () => {
    const home = tempDir();
    const project = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\nexport_on_close: false\nidentity_export_pii: true\n');
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'fsync: none\n');
    const config = resolveConfig({ home, projectDir: project, overrides: { export_on_close: true } });
    expect(config.settings).toMatchObject({ fsync: 'none', export_on_close: true, storage: 'global' });
    expect(config.values['identity_export_pii']).toBe(true);
    expect(config.files).toEqual([
      { layer: 'global', path: path.join(home, 'config.yaml'), loaded: true },
      { layer: 'project', path: path.join(project, 'aura.project.yaml'), loaded: true },
    ]);
  });

  it("keeps sessions in the project's .aura with storage: project, and reads project_dir from config", () => {
    const home = tempDir();
    const project = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), `project_dir: ${project}\n`);
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'storage: project\n');
    const { paths } = resolveConfig({ home });
    expect(paths).toMatchObject({ projectDir: project, storage: 'project', base: path.join(project, '.aura'), globalConfig: path.join(home, 'config.yaml') });
  });

  it('creates nothing on disk', () => {
    const home = path.join(tempDir(), 'absent');
    resolveConfig({ home });
    expect(fs.existsSync(home)).toBe(false);
  });

  it('refuses a config file that is not a mapping, naming the file', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), '- a\n- b\n');
    const error = expectAuraError(() => resolveConfig({ home }), ConfigError, 'CONFIG_INVALID');
    expect(error.message).toContain(path.join(home, 'config.yaml'));
  });

  it('gives the line of a YAML syntax error', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'storage: global\nfsync: "open\n');
    const error = expectAuraError(() => resolveConfig({ home }), ConfigError, 'CONFIG_INVALID');
    expect(error.data?.line).toBeGreaterThanOrEqual(2);
  });

  it('refuses a value outside its set, naming the file, the line and the allowed values', () => {
    const home = tempDir();
    const file = path.join(home, 'config.yaml');
    for (const [line, message] of [
      ['storage: cloud', `invalid storage "cloud": expected 'global' or 'project'`],
      ['export_on_close: maybe', 'invalid export_on_close "maybe": expected true or false'],
      ['fsync: 3', `invalid fsync 3: expected 'close', 'every', 'none'`],
      ['checkpoint_every: 0', 'invalid checkpoint_every 0: expected a positive integer'],
      ['identity_required: "yes"', 'invalid identity_required "yes": expected true or false'],
      ['anchor_dir: ""', 'invalid anchor_dir "": expected a folder path'],
      ['otel:\n  endpoint: http://127.0.0.1:4318\n  capture_tool_content: always', 'invalid OTLP export setting otel.capture_tool_content: expected true or false'],
    ] as const) {
      fs.writeFileSync(file, `# aura\ndefault_session_mode: task\n${line}\n`);
      const error = expectAuraError(() => resolveConfig({ home }), ConfigError, 'CONFIG_INVALID');
      const at = line.startsWith('otel') ? 5 : 3;
      expect(error.data).toEqual({ path: file, line: at });
      expect(error.message).toBe(`${file}:${at}: ${message}`);
    }
  });

  it('resolves a relative anchor_dir against the folder of the file that sets it, and one given in code against the current folder', () => {
    const home = tempDir();
    const project = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'anchor_dir: anchor\n');
    expect(resolveConfig({ home }).paths.anchorLog).toBe(path.join(home, 'anchor', 'seals.jsonl'));
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'anchor_dir: ../elsewhere\n');
    expect(resolveConfig({ home, projectDir: project }).paths.anchorLog).toBe(path.join(path.dirname(project), 'elsewhere', 'seals.jsonl'));
    expect(resolveConfig({ home, overrides: { anchor_dir: 'here' } }).paths.anchorLog).toBe(path.resolve('here', 'seals.jsonl'));
  });

  it('refuses a key that is not a config key, in config.yaml or aura.project.yaml, naming the file and line', () => {
    const home = tempDir();
    const project = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\nexport_on_clsoe: false\n');
    const error = expectAuraError(() => resolveConfig({ home }), ConfigError, 'CONFIG_INVALID');
    expect(error.data).toEqual({ path: path.join(home, 'config.yaml'), line: 2 });
    expect(error.message).toContain('unknown config key "export_on_clsoe"; expected one of storage, export_on_close, fsync,');
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\n');
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'storage: project\n\notel:\n  endpoint: http://127.0.0.1:4318\n  protocl: http/json\n');
    const nested = expectAuraError(() => resolveConfig({ home, projectDir: project }), ConfigError, 'CONFIG_INVALID');
    expect(nested.data).toEqual({ path: path.join(project, 'aura.project.yaml'), line: 5 });
    expect(nested.message).toContain('otel.protocl: unknown key; known: endpoint, protocol, headers');
  });

  it('refuses an unknown key given in code as overrides', () => {
    const error = expectAuraError(() => resolveConfig({ home: tempDir(), overrides: { fsnyc: 'every' } }), InvalidOptionError, 'INVALID_OPTION');
    expect(error.message).toContain('expected a config key: storage,');
  });

  it('lists the keys expected where a scalar stands for a mapping', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\notel: high\n');
    const error = expectAuraError(() => resolveConfig({ home }), ConfigError, 'CONFIG_INVALID');
    expect(error.data?.line).toBe(2);
    expect(error.message).toContain('otel: expected a mapping with the keys endpoint, protocol, headers, timeout_ms, close_timeout_ms, capture_tool_content');
  });

  it("accepts Python Aura's identity keys, so both can share one AURA_HOME", () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'identity:\n  adapter: manual\nidentity_redact_fields: [email, name]\nidentity_required: false\n');
    expect(resolveConfig({ home }).values['identity_redact_fields']).toEqual(['email', 'name']);
  });

  it('names the file and line of a pii_key that is not a secret ref, when an agent is loaded', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\npii_key: hunter2-plaintext\n');
    const error = expectAuraError(() => agent('acme/pii', { home }), ConfigError, 'CONFIG_INVALID');
    expect(error.data).toEqual({ path: path.join(home, 'config.yaml'), line: 2 });
    expect(error.message).toContain('invalid pii_key');
    expect(error.message).not.toContain('hunter2');
  });
});

describe('configure', () => {
  it('sets the defaults that currentConfig uses, below options given to a call', () => {
    const home = tempDir();
    const other = tempDir();
    try {
      configure({ home });
      expect(currentConfig().paths.home).toBe(home);
      expect(currentConfig({ home: other }).paths.home).toBe(other);
    } finally {
      configure();
    }
  });
});
