/** `aura sessions list`: the sessions in the sessions folder. */

import type { AuraConfig } from '../config/config.js';
import { PASSING_STATUSES as PASSING, statusLabel } from '../store/session-status.js';
import { listFolder } from '../store/session-list.js';
import { keysFor, sourceFor, type StoreOptions } from './context.js';
import { colors, EXIT, skippedLines, table, type CommandResult } from './output.js';

/** Lists the sessions of the folder, or of the fleet store, oldest first. */
export async function sessionsListCommand(options: StoreOptions, config: AuraConfig): Promise<CommandResult> {
  const source = await sourceFor(options, config);
  const keys = keysFor({}, config);
  // The folder is listed once, for its sessions and the files named like trails that are not read.
  const { sessions, skipped } = await (source.kind === 'folder' ? Promise.resolve(listFolder(source.label, { sealLog: config.paths.sealLog, keys, anchorLog: config.paths.anchorLog })) : source.list(keys).then((listed) => ({ sessions: listed, skipped: [] }))).finally(() => source.close());
  const verdict = (value: string | null): string => {
    if (value === 'pass') return colors.green('pass');
    if (value === 'warn') return colors.yellow('warn');
    if (value === 'fail') return colors.red('fail');
    return '-';
  };
  const human = (): string =>
    sessions.length === 0
      ? `no sessions in ${source.label}`
      : table(
          ['SESSION', 'AGENT', 'OPENED', 'EVENTS', 'VERDICT', 'STATUS', 'STATE'],
          sessions.map((s) => [
            s.session_id,
            s.agent_ref ?? '-',
            s.opened_at?.slice(0, 19).replace('T', ' ') ?? '-',
            String(s.events),
            verdict(s.verdict),
            PASSING.has(s.status) ? statusLabel(s) : colors.red(statusLabel(s)),
            s.state,
          ]),
        );
  return {
    exitCode: EXIT.ok,
    json: { ...(source.kind === 'folder' ? { sessions_dir: source.label, ...(skipped.length === 0 ? {} : { skipped }) } : { store: source.label }), sessions },
    human: () => [human(), ...skippedLines(skipped)].join('\n'),
  };
}
