/** `aura sessions list`: the sessions in the sessions folder. */

import type { AuraConfig } from '../config/config.js';
import { listSessions } from '../store/session-list.js';
import { colors, EXIT, table, type CommandResult } from './output.js';

/** Lists the sessions, oldest first. */
export function sessionsListCommand(config: AuraConfig): CommandResult {
  const sessions = listSessions(config.paths.sessions);
  const verdict = (value: string | null): string => {
    if (value === 'pass') return colors.green('pass');
    if (value === 'warn') return colors.yellow('warn');
    if (value === 'fail') return colors.red('fail');
    return '-';
  };
  const human =
    sessions.length === 0
      ? `no sessions in ${config.paths.sessions}`
      : table(
          ['SESSION', 'AGENT', 'OPENED', 'EVENTS', 'VERDICT', 'CHAIN', 'STATE'],
          sessions.map((s) => [
            s.session_id,
            s.agent_ref ?? '-',
            s.opened_at?.slice(0, 19).replace('T', ' ') ?? '-',
            String(s.events),
            verdict(s.verdict),
            s.hash_chain_valid === null ? '-' : s.hash_chain_valid ? 'valid' : colors.red('broken'),
            s.state,
          ]),
        );
  return { exitCode: EXIT.ok, json: { sessions_dir: config.paths.sessions, sessions }, human };
}
