/**
 * Approvals bound to the exact call (reference §6.5, fixing §21.11): a request records the digest
 * of the call it holds (tool, canonical arguments, session); an approval releases one retry whose
 * digest matches, once. A changed argument is a new request; an approval for one call never
 * releases another.
 */

import { ApprovalError } from '../errors.js';
import { canonicalJson } from '../spine/canonical.js';
import { sha256 } from '../spine/hash.js';

/** One approval request. */
export interface ApprovalRequest {
  readonly request_id: string;
  readonly digest: string;
  readonly tool: string;
  state: 'pending' | 'approved' | 'used';
  principal: string | null;
}

/**
 * The digest of a call: SHA-256 over the canonical text of `{args, salt, session_id, tool}`.
 * @param salt the session's secret (session/approval-salt.ts), never recorded: the digest binds the
 *   arguments as made, and without it the digest on the trail could be brute-forced back to what
 *   the record redacts or masks (a password in a command, a phone number has few candidates).
 */
export function callDigest(sessionId: string, tool: string, args: unknown, salt: string): string {
  return sha256(canonicalJson({ session_id: sessionId, tool, args: args ?? null, salt }, 'call'));
}

/** The approval requests of one session. */
export class ApprovalBook {
  private readonly requests = new Map<string, ApprovalRequest>();

  constructor(private readonly newId: () => string) {}

  /** The request holding this exact call, pending or approved, if there is one. */
  open(digest: string): ApprovalRequest | undefined {
    for (const request of this.requests.values()) if (request.digest === digest && request.state !== 'used') return request;
    return undefined;
  }

  /** A new pending request for a call. */
  request(digest: string, tool: string, requestId = this.newId()): ApprovalRequest {
    const request: ApprovalRequest = { request_id: requestId, digest, tool, state: 'pending', principal: null };
    this.requests.set(request.request_id, request);
    return request;
  }

  /**
   * Approves a pending request.
   * @throws ApprovalError for an unknown, used or already approved request
   */
  approve(requestId: string, principal: string | null): ApprovalRequest {
    const request = this.requests.get(requestId);
    if (request === undefined) throw new ApprovalError(requestId, 'unknown_request');
    if (request.state === 'used') throw new ApprovalError(requestId, 'already_used');
    if (request.state === 'approved') throw new ApprovalError(requestId, 'already_approved');
    request.state = 'approved';
    request.principal = principal;
    return request;
  }

  /** Whether a request waits for approval. */
  hasPending(): boolean {
    for (const request of this.requests.values()) if (request.state === 'pending') return true;
    return false;
  }

  /** The request with this id, if one was made. */
  byId(requestId: string): ApprovalRequest | undefined {
    return this.requests.get(requestId);
  }

  /** Every request made, in the order made. */
  all(): IterableIterator<Readonly<ApprovalRequest>> {
    return this.requests.values();
  }

  /** Marks an approved request used by the call it released. */
  use(request: ApprovalRequest): void {
    request.state = 'used';
  }
}
