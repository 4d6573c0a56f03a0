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
import { AuraError, ConfigError, InvalidOptionError, NotFoundError, WriteError } from '../errors.js';
import { onErrorChoice } from './on-error.js';
import { parseJsonStrict } from '../spine/fast-record.js';
import { makeFolder } from '../store/fs-write.js';
import { readTextFile } from '../store/json-file.js';
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
  /** `deny`: a call the hook cannot check (its input or profile unreadable) is refused. */
  readonly onError?: string;
}

// A hook that does not answer within this many seconds is ended by Claude Code.
const HOOK_TIMEOUT_S = 30;
// aura's own hook command, as this command writes it (`node …/bin.cjs hook claude-code …`; `bin.js`
// before, and a Windows path) or a
// person does (`aura hook claude-code`, `npx aura-harness hook claude-code`): the program, then
// the two words; another command that only mentions them is not aura's.
const AURAS_COMMAND = /(?:^|[\s/\\'"])(?:bin\.c?js|aura|aura-harness)['"]?\s+hook\s+claude-code(?:\s|$)/;

/** Prints, or merges into `--settings`, the hooks block for Claude Code. */
export function hookInstallCommand(target: string, options: HookInstallOptions, config: AuraConfig): CommandResult {
  if (target !== 'claude-code') throw new InvalidOptionError('target', target, "'claude-code'");
  if (options.onError !== undefined) onErrorChoice('--on-error', options.onError);
  const command = hookCommand(options, config);
  // Each event's command names it: the hook knows a PreToolUse it must refuse even when its input cannot be read.
  const hooks = Object.fromEntries(
    CLAUDE_CODE_EVENTS.map(([event, toolMatcher]) => [event, [{ ...(toolMatcher ? { matcher: '*' } : {}), hooks: [{ type: 'command', command: `${command} --event ${event}`, timeout: HOOK_TIMEOUT_S }] }]]),
  );
  if (options.settings === undefined) return { exitCode: EXIT.ok, json: { hooks }, human: JSON.stringify({ hooks }, null, 2) };
  const file = path.resolve(options.settings);
  const { settings, stats } = readSettings(file);
  const current = objectValue(settings['hooks'], file, 'hooks');
  for (const [event, entries] of Object.entries(hooks)) {
    const kept = listValue(current[event], file, `hooks.${event}`).flatMap(withoutAuras);
    current[event] = [...kept, ...entries];
  }
  settings['hooks'] = current;
  writeSettings(file, `${JSON.stringify(settings, null, 2)}\n`, stats);
  return { exitCode: EXIT.ok, json: { settings: file, command, events: Object.keys(hooks) }, human: `aura's hooks for ${Object.keys(hooks).join(', ')} are in ${file}\ncommand: ${command}` };
}

/** The command Claude Code runs: this installation's binary, by absolute path (no npx on the hot path). */
function hookCommand(options: HookInstallOptions, config: AuraConfig): string {
  const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bin.cjs');
  const words = ['node', bin, 'hook', 'claude-code', '--home', config.paths.home];
  if (options.profile !== undefined) words.push('--profile', path.resolve(options.profile));
  if (options.agent !== undefined) words.push('--agent', options.agent);
  if (options.onError !== undefined) words.push('--on-error', options.onError);
  return words.map(shellWord).join(' ');
}

/** One word for the shell Claude Code runs hooks in. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** An entry of a settings file without aura's own hooks: a person's hooks beside them in it are kept; an entry left with none goes. */
function withoutAuras(entry: unknown): unknown[] {
  const hooks = (entry as { hooks?: unknown } | null)?.hooks;
  if (!Array.isArray(hooks)) return [entry];
  const others = hooks.filter((hook) => !AURAS_COMMAND.test(String((hook as { command?: unknown } | null)?.command ?? '')));
  if (others.length === hooks.length) return [entry];
  return others.length === 0 ? [] : [{ ...(entry as object), hooks: others }];
}

/** The settings file's value and what it is on disk (null: not there yet). A pipe or a device is refused, never waited on. */
function readSettings(file: string): { readonly settings: Record<string, unknown>; readonly stats: fs.Stats | null } {
  let text: string;
  try {
    text = readTextFile(file, 'settings');
  } catch (error) {
    if (error instanceof NotFoundError) return { settings: {}, stats: null };
    throw new ConfigError(file, null, error instanceof AuraError ? error.message : `cannot read: ${String(error)}`);
  }
  let value: unknown;
  try {
    value = parseJsonStrict(text);
  } catch (error) {
    // Refuse rather than overwrite: the file holds the user's other settings (a duplicate key would lose one).
    throw new ConfigError(file, null, `not valid JSON (${(error as Error).message})`);
  }
  return { settings: objectValue(value, file, '(top level)'), stats: fs.statSync(file) };
}

/**
 * Replaces the settings whole, as the file they were read from: through a link to the file it
 * names, with its mode and owner (settings can hold secrets in `env`, readable by their owner only).
 */
function writeSettings(file: string, text: string, stats: fs.Stats | null): void {
  const target = stats === null ? file : fs.realpathSync(file);
  const staging = `${target}.${process.pid}.tmp`;
  try {
    makeFolder(path.dirname(target));
    fs.writeFileSync(staging, text, { flag: 'wx', ...(stats === null ? {} : { mode: stats.mode & 0o7777 }) });
    if (stats !== null) {
      fs.chmodSync(staging, stats.mode & 0o7777);
      if (process.getuid?.() === 0) fs.chownSync(staging, stats.uid, stats.gid);
    }
    fs.renameSync(staging, target);
  } catch (error) {
    fs.rmSync(staging, { force: true });
    throw new WriteError(target, error);
  }
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
