/**
 * Agent profiles from a YAML (or JSON) file, with every key of Aura's profile (reference §5.1)
 * plus `default_tool_policy`. A key that is not one of them is an error naming the file and line:
 * a typo must not quietly switch a rule off. A string anywhere in it that has the shape of a known
 * credential is an error too: a profile names secrets by ref, it never holds one.
 */

import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import { fileSource, profileError, textSource, type ProfileSource } from '../policy/profile-source.js';
import { refuseCredentials } from '../policy/secrets.js';
import { canonicalJson } from '../spine/canonical.js';
import { sha256 } from '../spine/hash.js';
import { parseJson } from '../spine/native-json.js';
import { replaceWhole } from '../store/fs-write.js';
import { readTextFile } from '../store/json-file.js';

/** The keys a profile may have. */
export const PROFILE_KEYS = [
  'aura_id',
  'agent_ref',
  'name',
  'ids',
  'purpose',
  'policy_version',
  'variables',
  'rules',
  'skills',
  'sequencer',
  'observers',
  'escalations',
  'spectrum',
  'capabilities',
  'types',
  'default_mode',
  'archived',
  'default_tool_policy',
  'middleware',
  /** `aura proxy`'s own settings: `{findings_tool: boolean}`. */
  'proxy',
  /** `aura hook claude-code`'s own settings: `{on_error: allow | deny}`. */
  'claude_code',
] as const;

/** A profile key. */
export type ProfileKey = (typeof PROFILE_KEYS)[number];

const STRING_KEYS: readonly ProfileKey[] = ['aura_id', 'agent_ref', 'name', 'purpose', 'default_mode', 'default_tool_policy'];
/** The keys whose value is a mapping, and what the error says it must hold (`spectrum`: its parser says). */
const MAPPING_KEYS: Readonly<Partial<Record<ProfileKey, string>>> = {
  ids: 'expected a mapping of id names to values',
  variables: 'expected a mapping of variable names to values',
  sequencer: 'expected a mapping with the key steps',
  middleware: 'expected a mapping with the key pii_mask',
  proxy: 'expected a mapping with the key findings_tool',
  claude_code: 'expected a mapping with the key on_error',
};
const LIST_KEYS: readonly ProfileKey[] = ['rules', 'skills', 'observers', 'escalations', 'capabilities', 'types'];

/** A profile file's values, checked for known keys and their basic types. */
export interface ProfileFile {
  readonly source: ProfileSource;
  readonly values: Readonly<Partial<Record<ProfileKey, unknown>>>;
}

/**
 * Reads and checks a profile file.
 * @throws NotFoundError, ReadError, ProfileError
 */
export function readProfileFile(path: string, options: { readonly cacheDir?: string } = {}): ProfileFile {
  // A short process (a Claude Code hook) reads its profile for its own keys and again for the agent.
  const stat = statOrNull(path);
  const key = stat === null ? null : `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}`;
  const known = lastRead;
  if (key !== null && known !== null && known.path === path && known.key === key) return known.file;
  const cached = options.cacheDir === undefined ? null : cachedSource(path, options.cacheDir);
  const file = checkProfile(cached?.source ?? fileSource(path));
  // Kept once it passed the checks: a profile with an error is read (and refused) from its YAML each time.
  cached?.keep?.();
  lastRead = key === null ? null : { path, key, file };
  return file;
}

let lastRead: { readonly path: string; readonly key: string; readonly file: ProfileFile } | null = null;

function statOrNull(path: string): fs.Stats | null {
  try {
    return fs.statSync(path);
  } catch {
    return null;
  }
}

/**
 * A profile file's source from its parsed value kept in `cacheDir` (a short process, the Claude
 * Code hook, reads the same profile every time: parsing its YAML was a tenth of the hook's own
 * work), and how to keep a value just parsed. The value is kept only when JSON gives it back as
 * it was, and used only for the same path and the same text; the YAML is parsed again only should
 * an error need the line of a key.
 */
function cachedSource(path: string, cacheDir: string): { readonly source: ProfileSource; readonly keep: (() => void) | null } {
  const text = readTextFile(path, 'profile');
  const cache = nodePath.join(cacheDir, `profile-${sha256(path).slice(0, 16)}.json`);
  const textHash = sha256(text);
  const kept = keptValue(cache, textHash);
  if (kept !== null) {
    let parsed: ProfileSource | null = null;
    return { source: { path, value: kept.value, lineOf: (keys) => (parsed ??= textSource(path, text)).lineOf(keys) }, keep: null };
  }
  const source = textSource(path, text);
  const json = JSON.stringify(source.value);
  // No .inf, no integer past 2^53: the next process must read the very same profile (in the same key order).
  const same = json !== undefined && canonicalOrNull(parseJson(json)) === canonicalOrNull(source.value) && canonicalOrNull(source.value) !== null;
  return { source, keep: same ? () => keep(cacheDir, cache, `{"text_sha256": ${JSON.stringify(textHash)}, "value": ${json}}`) : null };
}

function canonicalOrNull(value: unknown): string | null {
  try {
    return canonicalJson(value, 'profile');
  } catch {
    return null;
  }
}

/** The value kept for a text with this hash, or null. */
function keptValue(cache: string, textHash: string): { value: unknown } | null {
  try {
    const kept = parseJson(fs.readFileSync(cache, 'utf8')) as { text_sha256?: unknown; value?: unknown };
    return kept.text_sha256 === textHash && kept.value !== undefined ? { value: kept.value } : null;
  } catch {
    return null;
  }
}

/** Writes the cache whole; without it the next process parses the YAML. */
function keep(cacheDir: string, cache: string, text: string): void {
  try {
    fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
  } catch {
    return;
  }
  if (replaceWhole(cache, text)) keptOne = true;
}

let keptOne = false;

/** Whether this process kept a profile's parsed value: it parsed YAML that the next process will not. */
export function keptProfileValue(): boolean {
  return keptOne;
}

function checkProfile(source: ProfileSource): ProfileFile {
  const value = source.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw profileError(source, [], 'a profile must be a mapping of keys to values');
  const values = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(values)) {
    if (!(PROFILE_KEYS as readonly string[]).includes(key)) throw profileError(source, [key], `unknown profile key; expected one of ${PROFILE_KEYS.join(', ')}`);
    if (item === null) continue;
    const k = key as ProfileKey;
    if (STRING_KEYS.includes(k) && typeof item !== 'string') throw profileError(source, [key], 'expected a string');
    const mapping = MAPPING_KEYS[k];
    if (mapping !== undefined && (typeof item !== 'object' || Array.isArray(item))) throw profileError(source, [key], mapping);
    if (LIST_KEYS.includes(k) && !Array.isArray(item)) throw profileError(source, [key], 'expected a list');
    if (k === 'policy_version' && typeof item !== 'string' && typeof item !== 'number') throw profileError(source, [key], 'expected a version string');
    if (k === 'archived' && typeof item !== 'boolean') throw profileError(source, [key], 'expected true or false');
  }
  refuseCredentials(values, source, []);
  const skills = values['skills'];
  if (Array.isArray(skills)) skills.forEach((skill, i) => {
    if (typeof skill !== 'string') throw profileError(source, ['skills', i], 'expected a skill id');
  });
  return { source, values };
}
