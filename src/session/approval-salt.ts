/**
 * The salt of a session's approval digests (policy/approvals.ts): a secret mixed into each digest,
 * so that the digest the trail records cannot be recomputed from the trail and a guess of what the
 * record redacts or masks (a password in a command, a phone number).
 *
 * A session of one process keeps it in memory only. The processes of a shared session (the hooks
 * of a Claude Code session) must bind a call to one digest, the process that holds the call and a
 * later one that releases it: the first that needs the salt saves it beside the trail
 * (`{trail}.approval-salt`, readable by its owner only), and the later ones read it there. Each
 * holds the trail's append lock meanwhile, so no two make it at once. The close removes it: no
 * approval is made after.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { readRegularFileStart } from '../spine/regular-file.js';
import { removeFile, writing } from '../store/fs-write.js';

const SALT_BYTES = 16;
const SALT_TEXT = /^[0-9a-f]{32}$/;

/** Where a shared trail's salt is saved. */
export function saltPathOf(trailPath: string): string {
  return `${trailPath}.approval-salt`;
}

/** A new salt. */
export function newSalt(): string {
  return randomBytes(SALT_BYTES).toString('hex');
}

/**
 * The salt of a shared session: the one saved beside its trail, else a new one, saved there.
 * Something there that is not a salt (cut short by a crash, put there by hand) is replaced: a call
 * held under it is held again under a new request.
 * @throws WriteError when the salt cannot be saved
 */
export function sharedSalt(trailPath: string): string {
  const file = saltPathOf(trailPath);
  const saved = savedSalt(file);
  if (saved !== null) return saved;
  const salt = newSalt();
  writing(file, () => {
    removeFile(file);
    // Created anew (`wx`): a symlink put at its name is never written through.
    fs.writeFileSync(file, salt, { mode: 0o600, flag: 'wx' });
  });
  return salt;
}

/** Removes a shared trail's salt (the session has ended); one that cannot be removed must not fail the close. */
export function removeSalt(trailPath: string): void {
  try {
    removeFile(saltPathOf(trailPath));
  } catch {
    // Left behind (a folder in its place); no approval reads it after the close.
  }
}

function savedSalt(file: string): string | null {
  try {
    const text = readRegularFileStart(file, 'approval salt', SALT_BYTES * 2 + 1).toString('utf8');
    return SALT_TEXT.test(text) ? text : null;
  } catch {
    return null;
  }
}
