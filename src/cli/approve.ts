/** `aura approve <session_id> <request_id> --principal P`: releases one call waiting for approval in a live session. */

import type { AuraConfig } from '../config/config.js';
import { handOffApproval } from '../store/approval-handoff.js';
import { EXIT, printable, type CommandResult } from './output.js';

/**
 * Hands the approval to the process writing the session (the proxy), which records it in the
 * trail when the agent retries the call.
 */
export function approveCommand(sessionKey: string, requestId: string, principal: string, config: AuraConfig): CommandResult {
  const handed = handOffApproval(config.paths.sessions, sessionKey, requestId, principal);
  return {
    exitCode: EXIT.ok,
    json: handed,
    human: printable(`approved ${handed.request_id}${handed.tool === null ? '' : ` (${handed.tool})`} in ${handed.session_id} as ${handed.principal}: the call goes through when the agent retries it with the same arguments`),
  };
}
