/**
 * `aura hook install claude-code [--settings FILE]`: the `hooks` block that makes Claude Code run
 * `aura hook claude-code` for each event aura records, printed, or merged into a settings file
 * (Claude Code's `~/.claude/settings.json` or a project's `.claude/settings.json`). A merge keeps
 * every other hook and key, and replaces aura's own entries rather than adding them twice.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AuraConfig } from '../config/config.js';
import { ConfigError, InvalidOptionError, TrailWriteError } from '../errors.js';
import { parseJson } from '../spine/native-json.js';
import { EXIT, type CommandResult } from './output.js';

/** The events aura records, and whether Claude Code matches them on the tool name. */
export const CLAUDE_CODE_EVENTS: readonly (readonly [event: string, toolMatcher: boolean])[] = [
  ['PreToolUse', true],
  ['PostToolUse', true],
  ['PostToolUseFailure', true],
  ['UserPromptSubmit', false],
  ['SessionStart', false],
  ['SessionEnd', false],
  ['Stop', false],
];

/** What `aura hook install` takes. */
export interface HookInstallOptions {
  readonly settings?: string;
  readonly profile?: string;
  readonly agent?: string;
}

// A hook that does not answer within this many seconds is ended by Claude Code.
const HOOK_TIMEOUT_S = 30;
const MARK = ' hook claude-code';

/** Prints, or merges into `--settings`, the hooks block for Claude Code. */
export function hookInstallCommand(target: string, options: HookInstallOptions, config: AuraConfig): CommandResult {
  if (target !== 'claude-code') throw new InvalidOptionError('target', target, "'claude-code'");
  const command = hookCommand(options, config);
  const hooks = Object.fromEntries(
    CLAUDE_CODE_EVENTS.map(([event, toolMatcher]) => [event, [{ ...(toolMatcher ? { matcher: '*' } : {}), hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_S }] }]]),
  );
  if (options.settings === undefined) return { exitCode: EXIT.ok, json: { hooks }, human: JSON.stringify({ hooks }, null, 2) };
  const file = path.resolve(options.settings);
  const settings = readSettings(file);
  const current = objectValue(settings['hooks'], file, 'hooks');
  for (const [event, entries] of Object.entries(hooks)) {
    const kept = listValue(current[event], file, `hooks.${event}`).filter((entry) => !isAuras(entry));
    current[event] = [...kept, ...entries];
  }
  settings['hooks'] = current;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const staging = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(staging, `${JSON.stringify(settings, null, 2)}\n`);
    fs.renameSync(staging, file);
  } catch (error) {
    throw new TrailWriteError(file, error);
  }
  return { exitCode: EXIT.ok, json: { settings: file, command, events: Object.keys(hooks) }, human: `aura's hooks for ${Object.keys(hooks).join(', ')} are in ${file}\ncommand: ${command}` };
}

/** The command Claude Code runs: this installation's binary, by absolute path (no npx on the hot path). */
function hookCommand(options: HookInstallOptions, config: AuraConfig): string {
  const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bin.cjs');
  const words = ['node', bin, 'hook', 'claude-code', '--home', config.paths.home];
  if (options.profile !== undefined) words.push('--profile', path.resolve(options.profile));
  if (options.agent !== undefined) words.push('--agent', options.agent);
  return words.map(shellWord).join(' ');
}

/** One word for the shell Claude Code runs hooks in. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function isAuras(entry: unknown): boolean {
  const hooks = (entry as { hooks?: unknown } | null)?.hooks;
  return Array.isArray(hooks) && hooks.some((hook) => typeof (hook as { command?: unknown } | null)?.command === 'string' && ((hook as { command: string }).command.includes(MARK)));
}

function readSettings(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(file, null, `cannot read: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    // Refuse rather than overwrite: the file holds the user's other settings.
    throw new ConfigError(file, null, `not valid JSON (${(error as Error).message})`);
  }
  return objectValue(value, file, '(top level)');
}

function objectValue(value: unknown, file: string, key: string): Record<string, unknown> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ConfigError(file, null, `${key} is not an object`);
  return { ...(value as Record<string, unknown>) };
}

function listValue(value: unknown, file: string, key: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new ConfigError(file, null, `${key} is not a list`);
  return value;
}
