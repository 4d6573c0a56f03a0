/** What every command is given: the configuration chosen by the global options, and trusted keys. */

import * as fs from 'node:fs';
import { resolveConfig, type AuraConfig } from '../config/config.js';
import { InvalidOptionError, NotFoundError } from '../errors.js';
import { KeyRing } from '../spine/signing.js';
import type { SessionMaterial } from '../store/material.js';
import { sessionIdOfKey } from '../store/session-files.js';
import { materialWithKeys, type SessionSource } from '../store/source.js';

/** The global options of `aura`. */
export interface GlobalOptions {
  readonly home?: string;
  readonly project?: string;
  readonly anchorDir?: string;
}

/**
 * Resolves the configuration the global options name.
 * @throws InvalidOptionError for an empty folder option (it would name the current folder)
 * @throws NotFoundError for a `--project` folder that does not exist
 */
export function configFor(options: GlobalOptions): AuraConfig {
  for (const [flag, value] of [['--home', options.home], ['--project', options.project], ['--anchor-dir', options.anchorDir]] as const) {
    if (value === '') throw new InvalidOptionError(flag, value, 'a folder path');
  }
  // A project is read, never made: a mistyped one would quietly drop its aura.project.yaml.
  if (options.project !== undefined && !fs.statSync(options.project, { throwIfNoEntry: false })?.isDirectory()) throw new NotFoundError('--project folder', options.project);
  return resolveConfig({
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.project === undefined ? {} : { projectDir: options.project }),
    ...(options.anchorDir === undefined ? {} : { overrides: { anchor_dir: options.anchorDir } }),
  });
}

/** How a command was told which public keys to trust. */
export interface KeyOptions {
  readonly keys?: string;
  readonly publicKey?: string;
}

/**
 * The trusted keys: `--public-key F`, else `--keys DIR`, else `AURA_TRUSTED_KEYS` (a folder of public
 * keys or one `.pub` file), else the keys in `AURA_HOME/keys` when there are any, else none (then
 * signatures are not checked, and the output says so).
 * @throws NotFoundError for a keys folder or file that does not exist
 * @throws InvalidOptionError for a keys folder that holds no public key: it would trust nothing
 */
export function keysFor(options: KeyOptions, config: AuraConfig, env: NodeJS.ProcessEnv = process.env): KeyRing | null {
  return givenKeysFor(options, env) ?? homeKeys(config);
}

/**
 * The keys the reader named (`--public-key`, `--keys`, `AURA_TRUSTED_KEYS`), or null. The fleet
 * store's readers take these or each session's host's keys: the keys of the home they run in are
 * this host's, not the hosts'.
 */
export function givenKeysFor(options: KeyOptions, env: NodeJS.ProcessEnv = process.env): KeyRing | null {
  if (options.publicKey !== undefined) return KeyRing.ofPublicKey(options.publicKey);
  if (options.keys !== undefined) return trustedFolder('--keys', options.keys);
  return anchoredKeys(env);
}

/**
 * The keys a reader of `source` judges with: those it named; for the sessions folder, else the
 * home's. The fleet store's readers fall back on each session's host's keys instead (its `keysOf`).
 */
export function readerKeys(source: Pick<SessionSource, 'kind'>, given: KeyRing | null, config: AuraConfig): KeyRing | null {
  return source.kind === 'store' ? given : (given ?? homeKeys(config));
}

/** The keys in `AURA_HOME/keys`, when there are any. */
function homeKeys(config: AuraConfig): KeyRing | null {
  const home = KeyRing.load(config.paths.keys);
  return home.list().length > 0 ? home : null;
}

/**
 * The keys `AURA_TRUSTED_KEYS` names, or null when it is unset. Anyone who can write `AURA_HOME` can
 * add a key to its `keys/` folder; a copy kept where the hosts cannot write is the trust anchor.
 * @throws NotFoundError when what it names does not exist
 * @throws InvalidOptionError for a folder that holds no public key
 */
export function anchoredKeys(env: NodeJS.ProcessEnv = process.env): KeyRing | null {
  const named = env['AURA_TRUSTED_KEYS'];
  if (named === undefined || named === '') return null;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(named);
  } catch {
    throw new NotFoundError('AURA_TRUSTED_KEYS', named);
  }
  return stat.isDirectory() ? trustedFolder('AURA_TRUSTED_KEYS', named) : KeyRing.ofPublicKey(named);
}

function trustedFolder(option: string, dir: string): KeyRing {
  if (!fs.existsSync(dir)) throw new NotFoundError(`${option} folder`, dir);
  const ring = KeyRing.load(dir);
  if (ring.list().length === 0) throw new InvalidOptionError(option, dir, 'a folder holding public keys ({key_id}.pub); this one holds none, so no signature would be trusted');
  return ring;
}

/**
 * A port flag (`--http`, `--port`): decimal digits, 0 to 65535, 0 for any free port.
 * @throws InvalidOptionError naming the flag
 */
export function portOption(flag: string, value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidOptionError(flag, value, 'a port number (0 for any free port)');
  return port;
}

/**
 * A count or size flag (`--max-sessions`, `--idle-timeout`): decimal digits, at least 1.
 * @throws InvalidOptionError naming the flag
 */
export function positiveOption(flag: string, value: string, what: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1 || !Number.isSafeInteger(number)) throw new InvalidOptionError(flag, value, what);
  return number;
}

/** How a command was told where sessions are: `--store URL`, `--no-store` (the local folder), or neither. */
export interface StoreOptions {
  readonly store?: string | false;
}

/**
 * The fleet store's URL: `--store URL`, else the config key `store` (a URL or a secret ref), else
 * null (the local folder). `--no-store` picks the folder whatever the config says.
 * @throws InvalidOptionError for a value that is not a postgres:// URL or a ref that resolves to one
 */
export async function storeUrlFor(options: StoreOptions, config: AuraConfig): Promise<string | null> {
  if (options.store === false) return null;
  const given = typeof options.store === 'string' ? { value: options.store, where: '--store' } : config.settings.store === null ? null : { value: config.settings.store, where: 'store (config)' };
  // The PostgreSQL client (a fifth of a `sessions list` start) only when a store is named.
  if (given === null) return null;
  const { resolveStoreUrl } = await import('../store/postgres/connection.js');
  return resolveStoreUrl(given.value, given.where);
}

/**
 * Where the readers read: the fleet store when one is selected, else the sessions folder. Each is
 * loaded only when used (the PostgreSQL client only for a store).
 * @throws InvalidOptionError, StoreError
 */
export async function sourceFor(options: StoreOptions, config: AuraConfig): Promise<SessionSource> {
  const url = await storeUrlFor(options, config);
  if (url === null) {
    const { FolderSource } = await import('../store/folder-source.js');
    return new FolderSource(config.paths.sessions, config.paths.sealLog, config.paths.anchorLog);
  }
  const { PostgresSource } = await import('../store/postgres/pg-source.js');
  return PostgresSource.open(url);
}

/**
 * One session's material, from the folder or the fleet store as {@link sourceFor} chooses, with
 * the keys it is judged against (`given`, else as {@link readerKeys} has it): what `report show`
 * and `report html` read. A key that names no session is refused before a store is reached.
 * @throws InvalidSessionIdError, NotFoundError, InvalidOptionError, StoreError
 */
export async function sessionMaterialFor(sessionKey: string, options: StoreOptions, given: KeyRing | null, config: AuraConfig): Promise<{ files: SessionMaterial; keys: KeyRing | null }> {
  sessionIdOfKey(sessionKey);
  const source = await sourceFor(options, config);
  return materialWithKeys(source, sessionKey, readerKeys(source, given, config)).finally(() => source.close());
}
