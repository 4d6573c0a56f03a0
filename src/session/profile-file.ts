/**
 * Agent profiles from a YAML (or JSON) file, with every key of Aura's profile (reference §5.1)
 * plus `default_tool_policy`. A key that is not one of them is an error naming the file and line:
 * a typo must not quietly switch a rule off. A string anywhere in it that has the shape of a known
 * credential is an error too: a profile names secrets by ref, it never holds one.
 */

import * as fs from 'node:fs';
import { fileSource, profileError, type ProfileSource } from '../policy/profile-source.js';
import { refuseCredentials } from '../policy/secrets.js';

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
const OBJECT_KEYS: readonly ProfileKey[] = ['ids', 'variables', 'spectrum', 'sequencer', 'middleware', 'proxy', 'claude_code'];
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
export function readProfileFile(path: string): ProfileFile {
  // A short process (a Claude Code hook) reads its profile for its own keys and again for the agent.
  const stat = statOrNull(path);
  const key = stat === null ? null : `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}:${stat.ino}`;
  const known = lastRead;
  if (key !== null && known !== null && known.path === path && known.key === key) return known.file;
  const file = parseProfileFile(path);
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

function parseProfileFile(path: string): ProfileFile {
  const source = fileSource(path);
  const value = source.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw profileError(source, [], 'a profile must be a mapping of keys to values');
  const values = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(values)) {
    if (!(PROFILE_KEYS as readonly string[]).includes(key)) throw profileError(source, [key], `unknown profile key; expected one of ${PROFILE_KEYS.join(', ')}`);
    if (item === null) continue;
    const k = key as ProfileKey;
    if (STRING_KEYS.includes(k) && typeof item !== 'string') throw profileError(source, [key], 'expected a string');
    if (OBJECT_KEYS.includes(k) && (typeof item !== 'object' || Array.isArray(item))) throw profileError(source, [key], 'expected a mapping');
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
