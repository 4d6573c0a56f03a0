/** `aura keys init | rotate | list`: the Ed25519 keys that sign checkpoints and seals. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { AuraError } from '../errors.js';
import { KeyRing } from '../spine/signing.js';
import { EXIT, table, type CommandResult } from './output.js';

/** Makes the first signing key. Refuses when one is already active: rotate instead. */
export function keysInitCommand(config: AuraConfig): CommandResult {
  const ring = KeyRing.load(config.paths.keys);
  if (ring.activeKeyId !== null) {
    throw new AuraError('INVALID_OPTION', `a signing key is already active (${ring.activeKeyId}) in ${config.paths.keys}: use 'aura keys rotate' for a new one`, {
      data: { option: 'keys init', value: ring.activeKeyId },
    });
  }
  return made(config, KeyRing.generate(config.paths.keys), 'made');
}

/** Makes a new key that signs from now on; older public keys stay to verify older records. */
export function keysRotateCommand(config: AuraConfig): CommandResult {
  return made(config, KeyRing.generate(config.paths.keys), 'rotated to');
}

function made(config: AuraConfig, keyId: string, verb: string): CommandResult {
  const publicKey = path.join(config.paths.keys, `${keyId}.pub`);
  return {
    exitCode: EXIT.ok,
    json: { key_id: keyId, public_key: publicKey, private_key: path.join(config.paths.keys, `${keyId}.key`) },
    human: `${verb} signing key ${keyId}\n  public key  ${publicKey} (copy it off this machine: verifiers trust it)\n  sessions opened from now on sign checkpoints and seals with it`,
  };
}

/** Lists the trusted keys and which one signs. */
export function keysListCommand(config: AuraConfig): CommandResult {
  const ring = KeyRing.load(config.paths.keys);
  const keys = ring.list().map((entry) => ({
    key_id: entry.keyId,
    active: entry.keyId === ring.activeKeyId,
    created: fs.statSync(entry.path).mtime.toISOString(),
    public_key: entry.path,
  }));
  return {
    exitCode: EXIT.ok,
    json: { keys_dir: config.paths.keys, active: ring.activeKeyId, keys },
    human:
      keys.length === 0
        ? `no keys in ${config.paths.keys}: run 'aura keys init'`
        : table(
            ['KEY', 'ACTIVE', 'CREATED', 'PUBLIC KEY'],
            keys.map((k) => [k.key_id, k.active ? 'yes' : '', k.created.slice(0, 19).replace('T', ' '), k.public_key]),
          ),
  };
}
