/**
 * The checkpoint stage: with a signing key, a signed `chain.checkpoint` over every event so far,
 * each `checkpoint_every` events and once more at close (the evidence issue's format:
 * `{count, head_hash, key_id, signature}`).
 */

import { checkpointText, type Signer } from '../spine/signing.js';
import type { ChainHead } from './recorder.js';

const CHECKPOINT_KIND = 'chain.checkpoint';

export class Checkpointer {
  private since = 0;

  constructor(
    private readonly sessionId: string,
    /** Null when the session does not sign. */
    readonly signer: Signer | null,
    readonly every: number,
    private readonly record: (kind: string, payload: Readonly<Record<string, unknown>>) => unknown,
    private readonly head: () => ChainHead,
  ) {}

  /** Counts one recorded event, and checkpoints when the cadence is due. */
  after(kind: string): void {
    if (this.signer !== null && kind !== CHECKPOINT_KIND && ++this.since >= this.every) this.checkpoint(this.signer);
  }

  /** The final checkpoint covers `session.close` (unless the cadence just wrote one). */
  final(): void {
    if (this.signer !== null && this.since > 0) this.checkpoint(this.signer);
  }

  /** Events since the last checkpoint. */
  get sinceLast(): number {
    return this.since;
  }

  /** Takes up the cadence of a trail whose last checkpoint was `since` events ago. */
  resume(since: number): void {
    this.since = since;
  }

  private checkpoint(signer: Signer): void {
    const { count, headHash } = this.head();
    const head = headHash ?? '';
    this.since = 0;
    this.record(CHECKPOINT_KIND, { count, head_hash: head, key_id: signer.keyId, signature: signer.sign(checkpointText(this.sessionId, count, head)) });
  }
}
