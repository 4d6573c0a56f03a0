/**
 * CPU time of other processes, read from Linux's `/proc` (null elsewhere): what a scenario with
 * several processes (client, proxy, upstream) needs to say which of them the machine's cores
 * spend a call on, and so what ratio the machine allows at all.
 */

import * as fs from 'node:fs';

// Clock ticks per second of /proc/<pid>/stat's times: USER_HZ, 100 on every Linux build Node supports.
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of one live process, or null where `/proc` does not tell. */
export function processCpuSeconds(pid: number): number | null {
  return statSeconds(`/proc/${pid}/stat`, 11);
}

/** User + system CPU seconds this process's finished and waited-for children used, or null where `/proc` does not tell. */
export function childrenCpuSeconds(): number | null {
  return statSeconds('/proc/self/stat', 13);
}

/** The two clock-tick fields of a stat file from `field` (counted after the command name, as proc(5)'s 3rd is 0), in seconds. */
function statSeconds(file: string, field: number): number | null {
  let stat: string;
  try {
    stat = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [user, system] = [Number(fields[field]), Number(fields[field + 1])];
  return Number.isFinite(user) && Number.isFinite(system) ? (user + system) / TICKS_PER_SECOND : null;
}

/** The pids of a process's direct children, or [] where `/proc` does not tell. */
export function childPids(pid: number): number[] {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    return [];
  }
}
