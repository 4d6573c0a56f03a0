/**
 * Where aura's home is: its own module, so that the Claude Code hook's loader finds it before it
 * loads anything else.
 */

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The aura home: `explicit`, else `AURA_HOME`, else `~/.aura`, as an absolute path. */
export function auraHome(explicit: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env['AURA_HOME'];
  return path.resolve(explicit ?? (fromEnv === undefined || fromEnv === '' ? path.join(os.homedir(), '.aura') : fromEnv));
}

/** A folder's path with its links resolved, however it was given (`proj`, `./proj/`, a symlink to it); resolved as written when it does not exist. */
export function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}
