/**
 * Shared pieces of the fault tests: temp homes, spawning fixtures from `test/fixtures/` with tsx
 * (as pino spawns its fixtures), and reading a trail's raw lines.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: fixtures run from here so `--import tsx` resolves. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A fixture script's absolute path. */
export function fixture(name: string): string {
  return path.join(ROOT, 'test', 'fixtures', name);
}

/** Starts a fixture under Node with tsx, stdout and stderr piped. */
export function spawnFixture(name: string, args: readonly string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', fixture(name), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** How a child ended, with everything it printed. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Waits for a child to exit, collecting its output; fails after `timeoutMs` (and kills it). */
export function waitForExit(child: ChildProcess, timeoutMs: number): Promise<ChildExit> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`fixture did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    // 'close', not 'exit': it comes after stdout and stderr are drained.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs a fixture to its end. */
export function runFixture(name: string, args: readonly string[], timeoutMs = 15_000): Promise<ChildExit> {
  return waitForExit(spawnFixture(name, args), timeoutMs);
}

/** The newline-terminated lines of a text (a last piece without a newline is left out). */
export function wholeLines(text: string): string[] {
  const lines = text.split('\n');
  lines.pop();
  return lines;
}

/** A trail file split into its whole lines and the unterminated rest ('' when it ends with a newline). */
export interface RawTrail {
  readonly whole: readonly string[];
  readonly tail: string;
}

export function rawTrail(trailPath: string): RawTrail {
  const text = fs.readFileSync(trailPath, 'utf8');
  const cut = text.lastIndexOf('\n') + 1;
  return { whole: wholeLines(text.slice(0, cut)), tail: text.slice(cut) };
}

/** The event ids of whole trail lines, in order. */
export function eventIdsOf(lines: readonly string[]): string[] {
  return lines.map((line) => (JSON.parse(line) as { event_id: string }).event_id);
}

/** True when the text parses as JSON. */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
