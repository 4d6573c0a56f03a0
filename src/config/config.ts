/**
 * Configuration and storage paths, resolved as Aura resolves them (reference §4): defaults, then
 * `{AURA_HOME}/config.yaml`, then `{project}/aura.project.yaml`, then the caller's overrides.
 * `storage: project` with a project directory keeps everything in `{project}/.aura/`.
 * Resolving never creates a directory: read-only commands leave the disk as they found it.
 * A key that is not a config key, or a value outside its set, is an error naming the file and line:
 * a typo must not quietly turn a setting off.
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError, describeCause, InvalidOptionError, OtlpConfigError } from '../errors.js';
import { parseFsyncPolicy, type FsyncPolicy } from '../spine/writer.js';
import { auraHome, realFolder } from './home.js';
import { parseOtelSettings, type OtelSettings } from './otel.js';
import { parseYamlSource, type KeyPath } from './yaml-source.js';

/** The keys a config file (or `overrides`) may set. */
export const CONFIG_KEYS = [
  'storage',
  'export_on_close',
  'fsync',
  'default_session_mode',
  'project_dir',
  'checkpoint_every',
  'anchor_dir',
  'otel',
  'identity_required',
  'identity_export_pii',
  'pii_key',
  'store',
  // Python Aura's identity adapter settings: accepted so that both can share one AURA_HOME; aura does not read them.
  'identity',
  'identity_redact_fields',
] as const;

/** Where aura keeps its files. */
export interface AuraPaths {
  /** `AURA_HOME` (default `~/.aura`): always holds the global config. */
  readonly home: string;
  /** The folder sessions and agents live in: `home`, or `{project}/.aura` with project storage. */
  readonly base: string;
  readonly sessions: string;
  readonly agents: string;
  readonly registryState: string;
  /** Signing keys (always under `home`: one set of keys for every project). */
  readonly keys: string;
  /** The seal log: one signed seal a closed session, hash-chained. */
  readonly sealLog: string;
  /** A second seal log elsewhere (config `anchor_dir`), or null. */
  readonly anchorLog: string | null;
  readonly globalConfig: string;
  readonly projectConfig: string | null;
  readonly projectDir: string | null;
  readonly storage: 'global' | 'project';
}

/** Known config keys, checked; anything else is kept in `values` untouched. */
export interface AuraSettings {
  readonly storage: 'global' | 'project';
  readonly export_on_close: boolean;
  readonly fsync: FsyncPolicy;
  readonly default_session_mode: string;
  readonly project_dir: string | null;
  /** Events between signed checkpoints (default 1000). */
  readonly checkpoint_every: number;
  /** A folder for a second copy of every seal, off the system ideally (default none). */
  readonly anchor_dir: string | null;
  /** OTLP export: live push, protocol, headers, what spans carry (default: files only). */
  readonly otel: OtelSettings;
  /**
   * The fleet store: a `postgres://` URL, or a secret ref (`env:NAME`) holding one (default none:
   * the local sessions folder). `aura push` ships to it, and the readers read it.
   */
  readonly store: string | null;
}

/** A config file and whether it was there. */
export interface ConfigFile {
  readonly layer: 'global' | 'project';
  readonly path: string;
  readonly loaded: boolean;
}

/** The config file a key was set in, and where in it each part of its value is. */
export interface ConfigOrigin {
  readonly path: string;
  lineOf(keys: KeyPath): number | null;
}

/** The resolved configuration. */
export interface AuraConfig {
  readonly paths: AuraPaths;
  readonly settings: AuraSettings;
  readonly values: Readonly<Record<string, unknown>>;
  readonly files: readonly ConfigFile[];
  /** The file each key's value came from (the last that set it); none for defaults and overrides. */
  readonly origins: Readonly<Record<string, ConfigOrigin>>;
}

/** How to resolve a configuration. */
export interface ConfigOptions {
  /** Overrides `AURA_HOME`. */
  readonly home?: string;
  /** The project directory (else the `project_dir` config key). */
  readonly projectDir?: string;
  /** Values that win over every file. */
  readonly overrides?: Readonly<Record<string, unknown>>;
  /** The environment to read `AURA_HOME` from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const DEFAULTS: AuraSettings = {
  storage: 'global',
  export_on_close: true,
  fsync: 'close',
  default_session_mode: 'script',
  project_dir: null,
  checkpoint_every: 1000,
  anchor_dir: null,
  otel: parseOtelSettings(undefined),
  store: null,
};

/** Resolves the configuration and paths; reads config files, writes nothing. */
export function resolveConfig(options: ConfigOptions = {}): AuraConfig {
  const env = options.env ?? process.env;
  const home = auraHome(options.home, env);
  const globalConfig = path.join(home, 'config.yaml');
  const files: ConfigFile[] = [];
  let values: Record<string, unknown> = { ...DEFAULTS };
  const origins = new Map<string, ConfigOrigin>();
  const layer = (kind: ConfigFile['layer'], file: string): void => {
    const read = readConfigFile(file);
    files.push({ layer: kind, path: file, loaded: read !== null });
    if (read === null) return;
    values = { ...values, ...read.values };
    for (const key of Object.keys(read.values)) origins.set(key, read.origin);
  };

  layer('global', globalConfig);
  const projectSetting = options.projectDir ?? (typeof values['project_dir'] === 'string' ? values['project_dir'] : undefined);
  const projectDir = projectSetting === undefined ? null : path.resolve(projectSetting);
  let projectConfig: string | null = null;
  if (projectDir !== null) {
    projectConfig = path.join(projectDir, 'aura.project.yaml');
    layer('project', projectConfig);
  }
  // The anchor is what someone able to write the home must not be able to move: where the
  // environment names it, no config file (the home's own among them) can.
  const anchorFromEnv = env['AURA_ANCHOR_DIR'];
  if (anchorFromEnv !== undefined && anchorFromEnv !== '') {
    values = { ...values, anchor_dir: anchorFromEnv };
    origins.delete('anchor_dir');
  }
  for (const key of Object.keys(options.overrides ?? {})) {
    if (!isConfigKey(key)) throw new InvalidOptionError('overrides', key, `a config key: ${CONFIG_KEYS.join(', ')}`);
    origins.delete(key);
  }
  values = { ...values, ...options.overrides };

  const located = { origins: Object.fromEntries(origins) };
  // A relative anchor_dir in a config file names a folder beside that file, not the current folder.
  const anchorFile = origins.get('anchor_dir')?.path;
  const anchor = values['anchor_dir'];
  if (anchorFile !== undefined && typeof anchor === 'string' && anchor !== '') values = { ...values, anchor_dir: path.resolve(path.dirname(anchorFile), anchor) };
  const settings = withConfigOrigin(located, () => checkSettings(values, projectDir));
  const base = settings.storage === 'project' && projectDir !== null ? path.join(projectDir, '.aura') : home;
  return {
    paths: {
      home,
      base,
      sessions: path.join(base, 'sessions'),
      agents: path.join(base, 'agents'),
      registryState: path.join(base, 'registry_state.json'),
      keys: path.join(home, 'keys'),
      sealLog: path.join(base, 'seals.jsonl'),
      anchorLog: settings.anchor_dir === null ? null : path.join(settings.anchor_dir, anchorLogName(home, base)),
      globalConfig,
      projectConfig,
      projectDir,
      storage: settings.storage,
    },
    settings,
    values,
    files,
    origins: located.origins,
  };
}

/**
 * Runs `read` over config values; an invalid value it refuses (InvalidOptionError, OtlpConfigError)
 * that a config file set becomes a ConfigError naming that file, the line and the allowed values.
 */
export function withConfigOrigin<T>(config: Pick<AuraConfig, 'origins'>, read: () => T): T {
  try {
    return read();
  } catch (error) {
    const keys = error instanceof InvalidOptionError ? [error.data?.option ?? ''] : error instanceof OtlpConfigError ? (error.data?.source ?? '').split('.') : [];
    const origin = config.origins[keys[0] ?? ''];
    if (origin === undefined || !(error instanceof Error)) throw error;
    throw new ConfigError(origin.path, origin.lineOf(keys), error.message);
  }
}

/**
 * The anchor copy's file: `seals.jsonl` for the home's own log, and one named after the folder for
 * a project's (`storage: project`), so that a project inheriting the home's `anchor_dir` keeps its
 * seals apart from the home's.
 */
function anchorLogName(home: string, base: string): string {
  return base === home ? 'seals.jsonl' : `seals-${createHash('sha256').update(realFolder(base)).digest('hex').slice(0, 12)}.jsonl`;
}

function isConfigKey(key: string): boolean {
  return (CONFIG_KEYS as readonly string[]).includes(key);
}

function checkSettings(values: Record<string, unknown>, projectDir: string | null): AuraSettings {
  const storage = values['storage'];
  if (storage !== 'global' && storage !== 'project') throw new InvalidOptionError('storage', storage, "'global' or 'project'");
  const exportOnClose = values['export_on_close'];
  if (typeof exportOnClose !== 'boolean') throw new InvalidOptionError('export_on_close', exportOnClose, 'true or false');
  const mode = values['default_session_mode'];
  if (typeof mode !== 'string') throw new InvalidOptionError('default_session_mode', mode, 'a session mode');
  const every = values['checkpoint_every'];
  if (typeof every !== 'number' || !Number.isInteger(every) || every < 1) throw new InvalidOptionError('checkpoint_every', every, 'a positive integer');
  const anchor = values['anchor_dir'];
  if (anchor !== null && (typeof anchor !== 'string' || anchor === '')) throw new InvalidOptionError('anchor_dir', anchor, 'a folder path');
  const project = values['project_dir'];
  if (project !== null && typeof project !== 'string') throw new InvalidOptionError('project_dir', project, 'a folder path');
  for (const flag of ['identity_required', 'identity_export_pii']) {
    if (values[flag] !== undefined && typeof values[flag] !== 'boolean') throw new InvalidOptionError(flag, values[flag], 'true or false');
  }
  const store = values['store'];
  if (store !== null && (typeof store !== 'string' || store === '')) throw new InvalidOptionError('store', typeof store === 'string' ? store : typeof store, 'a postgres:// URL or a secret ref such as env:AURA_STORE_URL');
  return {
    storage,
    export_on_close: exportOnClose,
    fsync: parseFsyncPolicy(values['fsync']),
    default_session_mode: mode,
    project_dir: projectDir,
    checkpoint_every: every,
    anchor_dir: anchor === null ? null : path.resolve(anchor),
    otel: parseOtelSettings(values['otel']),
    store,
  };
}

/**
 * The keys and values of a config file (YAML or JSON), and where they are; null when there is no file.
 * @throws ConfigError naming the file and line: unreadable, not YAML, not a mapping, an unknown key
 */
function readConfigFile(file: string): { values: Record<string, unknown>; origin: ConfigOrigin } | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(file, null, `cannot read: ${describeCause(error)}`);
  }
  const yaml = parseYamlSource(text, (message, line) => new ConfigError(file, line, message));
  const origin: ConfigOrigin = { path: file, lineOf: yaml.lineOf };
  if (yaml.value === null || yaml.value === undefined) return { values: {}, origin };
  if (typeof yaml.value !== 'object' || Array.isArray(yaml.value)) throw new ConfigError(file, 1, `expected a mapping of config keys to values (${CONFIG_KEYS.join(', ')})`);
  const values = yaml.value as Record<string, unknown>;
  for (const key of Object.keys(values)) {
    if (!isConfigKey(key)) throw new ConfigError(file, yaml.lineOf([key]), `unknown config key ${JSON.stringify(key)}; expected one of ${CONFIG_KEYS.join(', ')}`);
  }
  return { values, origin };
}
