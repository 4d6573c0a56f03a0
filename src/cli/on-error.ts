/** What the Claude Code hook does with a call it cannot check: `--on-error` and the profile's `claude_code.on_error`. */

import { InvalidOptionError } from '../errors.js';

/** A call the hook cannot check is let through to Claude Code's own permissions, or refused. */
export type OnError = 'allow' | 'deny';

/**
 * The choice `value` names, read from `where` (a flag or a profile key).
 * @throws InvalidOptionError for anything but `allow` or `deny`
 */
export function onErrorChoice(where: string, value: unknown): OnError {
  if (value !== 'allow' && value !== 'deny') throw new InvalidOptionError(where, value, "'allow' or 'deny'");
  return value;
}
