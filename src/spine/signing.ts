/**
 * Ed25519 signing keys and the texts they sign (`node:crypto` only). A key's id is the first 8
 * bytes of SHA-256 of its raw public key, in hex. Keys live in a folder as `{key_id}.key` (PKCS#8
 * PEM, mode 0600) and `{key_id}.pub` (SPKI PEM), with `active` naming the key that signs now;
 * after a rotation, older public keys stay to verify older records.
 *
 * A signed text is a small note in the spirit of C2SP signed notes: an origin line naming what is
 * signed, then one value a line. Verifiers rebuild the text from the record and check the
 * signature; nothing signed is ever parsed back out of a signature.
 */

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AuraError, NotFoundError, ReadError } from '../errors.js';
import { makeFolder, removeFile, writing } from '../store/fs-write.js';
import { readTextFile } from '../store/json-file.js';

/** A public key and its id. */
export interface PublicKeyEntry {
  readonly keyId: string;
  readonly publicKey: crypto.KeyObject;
  readonly path: string;
}

/** The key that signs, with its id. */
export interface Signer {
  readonly keyId: string;
  sign(text: string): string;
}

const KEY_ID = /^[0-9a-f]{16}$/;

/** The id of a public key: hex of the first 8 bytes of SHA-256 of its 32 raw bytes. */
export function keyIdOf(publicKey: crypto.KeyObject): string {
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return crypto.createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

/** The text a checkpoint signs. */
export function checkpointText(sessionId: string, count: number, headHash: string): string {
  return `aura/session/${sessionId}\n${count}\n${headHash}\n`;
}

/** The text a seal signs. */
export function sealText(seal: { session_id: string; events: number; first_hash: string | null; head_hash: string | null; closed_at: string | null }): string {
  return `aura/seal/${seal.session_id}\n${seal.events}\n${seal.first_hash ?? '-'}\n${seal.head_hash ?? '-'}\n${seal.closed_at ?? '-'}\n`;
}

/** The text a seal-log entry signs: its hash, which chains over the seal and every entry before it. */
export function sealLogText(entryHash: string): string {
  return `aura/seal-log\n${entryHash}\n`;
}

/** True when `signature` (base64) is `key`'s signature of `text`. */
export function verifySignature(publicKey: crypto.KeyObject, text: string, signature: unknown): boolean {
  if (typeof signature !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false;
  return crypto.verify(null, Buffer.from(text, 'utf8'), publicKey, Buffer.from(signature, 'base64'));
}

/** A keys folder: the trusted public keys by id, and the active signing key. */
export class KeyRing {
  private constructor(
    readonly dir: string,
    private readonly publicKeys: ReadonlyMap<string, PublicKeyEntry>,
    readonly activeKeyId: string | null,
  ) {}

  /**
   * Reads a keys folder. A public key file whose content does not hash to its name is refused:
   * a swapped key file must not become trusted.
   * @throws AuraError `READ_FAILED` for a swapped or unreadable key file
   */
  static load(dir: string): KeyRing {
    const keys = new Map<string, PublicKeyEntry>();
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new KeyRing(dir, keys, null);
      throw new ReadError(dir, error);
    }
    for (const name of names.filter((n) => n.endsWith('.pub')).sort()) {
      const entry = readKeyFile(path.join(dir, name), true);
      keys.set(entry.keyId, entry);
    }
    const activeFile = path.join(dir, 'active');
    const active = fs.existsSync(activeFile) ? fs.readFileSync(activeFile, 'utf8').trim() : null;
    return new KeyRing(dir, keys, active !== null && KEY_ID.test(active) ? active : null);
  }

  /**
   * A ring of one public key file (`--public-key F`, `AURA_TRUSTED_KEYS=F`). Named as a keys folder
   * names its keys (`{key_id}.pub`), it must hold that key, as there.
   * @throws AuraError `READ_FAILED` for a private key, a swapped key file or an unreadable one
   */
  static ofPublicKey(file: string): KeyRing {
    const entry = readKeyFile(file, false);
    return new KeyRing(path.dirname(file), new Map([[entry.keyId, entry]]), null);
  }

  /**
   * A ring of public keys given as PEM texts (the keys hosts pushed to the fleet store), each
   * under the id its own bytes hash to. A text that is not an Ed25519 public key is skipped.
   */
  static ofPublicKeyTexts(texts: readonly string[], origin: string): KeyRing {
    const keys = new Map<string, PublicKeyEntry>();
    for (const text of texts) {
      let publicKey: crypto.KeyObject;
      try {
        publicKey = crypto.createPublicKey(text);
      } catch {
        continue;
      }
      if (publicKey.asymmetricKeyType !== 'ed25519') continue;
      const keyId = keyIdOf(publicKey);
      keys.set(keyId, { keyId, publicKey, path: origin });
    }
    return new KeyRing(origin, keys, null);
  }

  /** The trusted public key with this id. */
  publicKey(keyId: unknown): crypto.KeyObject | null {
    return typeof keyId === 'string' ? (this.publicKeys.get(keyId)?.publicKey ?? null) : null;
  }

  /** Every trusted key. */
  list(): PublicKeyEntry[] {
    return [...this.publicKeys.values()];
  }

  /**
   * The active signing key, or null when there is none.
   * @throws AuraError `READ_FAILED` when its private key file is readable by others than its owner
   */
  signer(): Signer | null {
    if (this.activeKeyId === null) return null;
    const file = path.join(this.dir, `${this.activeKeyId}.key`);
    let mode: number;
    try {
      mode = fs.statSync(file).mode;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError('private key', file);
      throw new ReadError(file, error);
    }
    if ((mode & 0o077) !== 0) {
      throw new AuraError('READ_FAILED', `${file} is readable by others (mode ${(mode & 0o777).toString(8)}): chmod 600 it before it signs anything`, { data: { path: file } });
    }
    const privateKey = crypto.createPrivateKey(fs.readFileSync(file, 'utf8'));
    const keyId = this.activeKeyId;
    return { keyId, sign: (text) => crypto.sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64') };
  }

  /**
   * Makes a new key pair, makes it the active one, and returns its id. Older keys stay trusted.
   * @throws WriteError naming the file or folder that could not be written; no part of the new key is left
   */
  static generate(dir: string): string {
    const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
    const keyId = keyIdOf(publicKey);
    const privateFile = path.join(dir, `${keyId}.key`);
    const publicFile = path.join(dir, `${keyId}.pub`);
    const active = path.join(dir, 'active');
    const staging = path.join(dir, 'active.staging');
    writing(dir, () => makeFolder(dir, 0o700));
    try {
      writing(privateFile, () => fs.writeFileSync(privateFile, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' }));
      writing(publicFile, () => fs.writeFileSync(publicFile, publicKey.export({ format: 'pem', type: 'spki' }), { mode: 0o644, flag: 'wx' }));
      writing(active, () => {
        fs.writeFileSync(staging, `${keyId}\n`);
        fs.renameSync(staging, active);
      });
    } catch (error) {
      for (const file of [privateFile, publicFile, staging]) removeFile(file);
      throw error;
    }
    return keyId;
  }
}

/**
 * A public key file and its id. One of a keys folder (`inFolder`), or one named as a keys folder
 * names its keys (`{key_id}.pub`), must hold the key its name says: a swapped key file must not
 * become trusted.
 * @throws AuraError `READ_FAILED` for a swapped, unreadable or private key file
 */
function readKeyFile(file: string, inFolder: boolean): PublicKeyEntry {
  const publicKey = readPublicKey(file);
  const keyId = keyIdOf(publicKey);
  const name = path.basename(file);
  if ((inFolder || KEY_FILE_NAME.test(name)) && name !== `${keyId}.pub`) throw new AuraError('READ_FAILED', `${file} holds the key ${keyId}, not the one its name says: a key file was swapped`, { data: { path: file } });
  return { keyId, publicKey, path: file };
}

const KEY_FILE_NAME = /^[0-9a-f]{16}\.pub$/;

function readPublicKey(file: string): crypto.KeyObject {
  const text = readTextFile(file, 'public key');
  // Node derives a public key from a private one: trusted so, a signing key would sit in a verifier's set.
  if (text.includes('PRIVATE KEY')) throw new AuraError('READ_FAILED', `${file} is a private key: trust its public key ({key_id}.pub) instead, and keep the private key where only the signer reads it`, { data: { path: file } });
  try {
    const key = crypto.createPublicKey(text);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`an ${String(key.asymmetricKeyType)} key, not Ed25519`);
    return key;
  } catch (error) {
    throw new AuraError('READ_FAILED', `${file} is not an Ed25519 public key: ${(error as Error).message}`, { data: { path: file } });
  }
}
