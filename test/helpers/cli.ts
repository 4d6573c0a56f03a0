/** Runs the built `aura` binary as a user would, and captures what it prints. */

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { REPO } from './fixtures.js';
import { tempDir } from './temp.js';

/** What one run printed and how it exited. */
export interface CliRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** What a stack trace looks like in output: no command may print one. */
export const STACK_TRACE = /\n\s+at /;

/** The built binary (test/global-setup.ts builds it). */
export const AURA_BIN = path.join(REPO, 'dist', 'cli', 'bin.cjs');

/**
 * The environment of a run: AURA_HOME is `home`, else an empty folder of its own, so no run reads
 * the AURA_HOME or `~/.aura` of whoever runs the tests.
 */
function cliEnv(home: string | undefined, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NO_COLOR: '1', ...extra, AURA_HOME: home ?? extra['AURA_HOME'] ?? tempDir('aura-cli-home-') };
}

/** Runs `aura ...args` with AURA_HOME set to `home` (else an empty home). */
export function aura(args: readonly string[], options: { readonly home?: string; readonly cwd?: string; readonly env?: Readonly<Record<string, string>> } = {}): CliRun {
  const env = cliEnv(options.home, options.env);
  const run = spawnSync(process.execPath, [AURA_BIN, ...args], { env, cwd: options.cwd ?? REPO, encoding: 'utf8' });
  return { status: run.status ?? -1, stdout: run.stdout, stderr: run.stderr };
}

/** Runs `aura ...args --json` and parses its output. */
export function auraJson(args: readonly string[], options: Parameters<typeof aura>[1] = {}): { status: number; json: Record<string, unknown>; stderr: string } {
  const run = aura([...args, '--json'], options);
  return { status: run.status, json: JSON.parse(run.stdout) as Record<string, unknown>, stderr: run.stderr };
}

/** Runs `aura ...args` without blocking the test's event loop (for servers in the same process). */
export function auraAsync(args: readonly string[], options: { readonly home?: string; readonly env?: Readonly<Record<string, string>> } = {}): Promise<CliRun> {
  const env = cliEnv(options.home, options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AURA_BIN, ...args], { env, cwd: REPO });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ status: code ?? -1, stdout, stderr }));
  });
}

/** The URL an `aura mcp --http` or `aura proxy --http` server says on stderr it listens at; rejects with what it printed if it exits first. */
export function listeningUrl(server: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let seen = '';
    server.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
      if (match !== null) resolve(match[1] as string);
    });
    server.once('exit', () => reject(new Error(`aura exited before it listened: ${seen}`)));
  });
}

/** `word` quoted for a POSIX shell, whatever it holds (spaces, quotes). */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** The words a POSIX shell reads in `command` (a real shell, not a model of one). */
export function shellWords(command: string): string[] {
  const run = spawnSync('/bin/sh', ['-c', `set -- ${command}; printf '%s\\0' "$@"`], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`sh could not read ${command}: ${run.stderr}`);
  return run.stdout.split('\0').slice(0, -1);
}
