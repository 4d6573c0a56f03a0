/**
 * A refusal by the guarded path, as text a model can act on: the error's code and message, the
 * rule when one refused, and what to do next. Generic over every `AuraError`: the advice follows
 * from what the error carries (an approval request, a rule), not from its class. The proxy, the
 * framework adapters and the Claude Code hook all say it this way.
 */

import { objectOf, stringOf } from '../spine/json-shape.js';

/** What a refusal names besides its text. */
export interface Refusal {
  readonly text: string;
  readonly code: string;
  readonly request_id: string | null;
}

/**
 * @param approveWith how a person releases a request where this call came from (a command, or
 *   the app's own approval), said after "A person must approve …:"
 */
export function refusalOf(error: { readonly code: string; readonly message: string; readonly data?: unknown }, approveWith: (requestId: string) => string): Refusal {
  const data = objectOf(error.data);
  const requestId = stringOf(data['request_id']);
  const rule = data['rule'];
  const answered = data['kind'] === 'tool.result';
  // A check of results refuses after the tool ran: calling it again runs it again. A request bound
  // to a call digest releases that call only; one without (a stopped session) releases the session.
  const next = answered
    ? 'The tool ran, but aura keeps its answer back. Calling the tool again runs it again, and an answer like this one is refused again: reach the goal another way, or ask the user to change the policy.'
    : requestId !== null && data['digest'] !== undefined
      ? `The tool did not run. A person must approve this exact call: ${approveWith(requestId)}. Then call the tool again with exactly the same arguments (changed arguments make a new request).`
      : requestId !== null
        ? `The tool did not run, and no tool will until a person lets the session go on: ${approveWith(requestId)}. Meanwhile, change strategy: repeating the same calls will be stopped again.`
        : rule !== undefined
          ? 'The tool did not run, and the same call will be refused again: reach the goal another way, or ask the user to change the policy.'
          : 'The tool did not run: fix what the message names, or ask the user for help.';
  const text = `aura refused ${answered ? "this call's answer" : 'this call'} (${error.code}): ${error.message}${rule === undefined ? '' : ` [rule: ${JSON.stringify(rule)}]`}. ${next}`;
  return { text, code: error.code, request_id: requestId };
}

/** How a person approves from a shell: sessions whose writer reads `aura approve` hand-offs (the proxy, the Claude Code hook). */
export function approveCommand(sessionId: string): (requestId: string) => string {
  return (requestId) => `aura approve ${sessionId} ${requestId} --principal <their name>`;
}
