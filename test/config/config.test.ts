import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { configure, currentConfig } from '../../src/config/configure.js';
import { ConfigError, InvalidOptionError } from '../../src/errors.js';
import { expectAuraError } from '../helpers/errors.js';
import { tempDir } from '../helpers/temp.js';

describe('resolveConfig', () => {
  it('uses AURA_HOME, and ~/.aura without it', () => {
    const home = tempDir();
    expect(resolveConfig({ env: { AURA_HOME: home } }).paths).toMatchObject({ home, base: home, sessions: path.join(home, 'sessions'), storage: 'global' });
    expect(resolveConfig({ env: { HOME: '/nowhere' } }).paths.home).toMatch(/\.aura$/);
  });

  it('merges defaults < config.yaml < aura.project.yaml < overrides', () => {
    const home = tempDir();
    const project = tempDir();
    fs.writeFileSync(path.join(home, 'config.yaml'), 'fsync: every\nexport_on_close: false\nteam: blue\n');
    fs.writeFileSync(path.join(project, 'aura.project.yaml'), 'fsync: none\n');
    const config = resolveConfig({ home, projectDir: project, overrides: { export_on_close: true } });
    expect(config.settings).toMatchObject({ fsync: 'none', export_on_close: true, storage: 'global' });
    expect(config.values['team']).toBe('blue');
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

  it('refuses known keys with values outside their set', () => {
    const home = tempDir();
    for (const [line, option] of [
      ['storage: cloud', 'storage'],
      ['export_on_close: maybe', 'export_on_close'],
      ['fsync: 3', 'fsync'],
    ]) {
      fs.writeFileSync(path.join(home, 'config.yaml'), `${line}\n`);
      const error = expectAuraError(() => resolveConfig({ home }), InvalidOptionError, 'INVALID_OPTION');
      expect(error.data?.option).toBe(option);
    }
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
