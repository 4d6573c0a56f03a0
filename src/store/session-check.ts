/**
 * One session's status from already-read material (its lines as bytes, its summary's text, its
 * seal-log entry, the trusted keys): integrity, completeness, signatures, the seal, and whether the
 * seal-log entry holds. The fleet store goes through this one function and nothing else, at
 * ingest and in `verify store --store`, so both surfaces give one verdict on the same bytes.
 *
 * It takes material, never a path or a connection (sigstore's verify takes fetched data), and
 * calls the chain verifier of spine/verify.ts on it. Everything in the material is untrusted.
 */

import { ChainVerificationError } from '../errors.js';
import type { AuraEvent } from '../spine/record.js';
import type { KeyRing } from '../spine/signing.js';
import { readTrailLines, type TrailRead } from '../spine/trail-reader.js';
import type { TrailLine } from '../spine/trail-lines.js';
import type { ChainReport, ChainSeal } from '../spine/verify.js';
import { sealEntryHash, type SealLogEntry } from './seal-log.js';
import { sealOfSummary } from './summary-seal.js';
import type { StoreStatus } from './verify-store.js';
import { parseJsonStrict } from '../spine/fast-record.js';

/** What is checked. */
export interface SessionEvidence {
  readonly sessionId: string;
  /** Each line's bytes, with its newline when it had one. */
  readonly lines: readonly Buffer[];
  /** The summary's text, or null. */
  readonly summaryText: string | null;
  /** The session's entry of its host's seal log, or null. */
  readonly sealEntry: SealLogEntry | null;
  readonly keys: KeyRing | null;
  /** The session is claimed closed (pushed whole), not open (followed as it grows). */
  readonly closed: boolean;
}

/** The verdict. */
export interface SessionCheck {
  /** `verified`, `open` (followed, intact so far), `damaged`, or `unsealed` (closed with no seal to check). */
  readonly status: Exclude<StoreStatus, 'missing_trail'>;
  readonly chain: ChainReport;
  /** The seal the trail was checked against, and where it came from. */
  readonly seal: ChainSeal | null;
  readonly sealFrom: 'seal_log' | 'summary' | null;
  /** Signatures: `verified`, `unchecked` (signed, no trusted key given), `unsigned` or `invalid`. */
  readonly signatures: 'verified' | 'unchecked' | 'unsigned' | 'invalid';
  /** Why the session is not `verified` or `open`. */
  readonly problem: string | null;
  /** The trail read on the same pass: the detector's input. */
  readonly trail: TrailRead;
  /** Each line's record, by line (null for a line that is not one): the fields stored beside the bytes. */
  readonly records: readonly (AuraEvent | null)[];
  /** Another session id that the events, the summary or the seal name: a forged or mislabelled session. */
  readonly foreignId: string | null;
}

/** Lines from their bytes, numbered from 1, as the file reader gives them. */
export function* linesOfBytes(lines: readonly Buffer[]): Generator<TrailLine> {
  for (let i = 0; i < lines.length; i++) {
    const bytes = lines[i] as Buffer;
    const terminated = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
    yield { text: bytes.toString('utf8', 0, terminated ? bytes.length - 1 : bytes.length), number: i + 1, terminated };
  }
}

/** Checks one session's material. Throws only for a bug. */
export function checkSession(evidence: SessionEvidence): SessionCheck {
  const problems: string[] = [];
  const named = new Set<string>();
  const fromSummary = summarySealOf(evidence, problems, named);
  const entry = evidence.sealEntry;
  if (entry !== null) checkSealEntry(evidence.sessionId, entry, fromSummary, problems, named);
  // The seal-log entry is the seal of record: a summary can be rebuilt, the log is chained.
  const seal: ChainSeal | null = entry !== null ? { ...entry.seal } : fromSummary;
  const sealFrom = entry !== null ? 'seal_log' : fromSummary !== null ? 'summary' : null;
  const records: (AuraEvent | null)[] = [];
  const trail = readTrailLines(linesOfBytes(evidence.lines), evidence.closed ? (seal ?? undefined) : undefined, evidence.keys === null ? {} : { keys: evidence.keys }, (record) => {
    records.push(record);
    if (record !== null && typeof record.session_id === 'string' && record.session_id !== evidence.sessionId) named.add(record.session_id);
  });
  const chain = trail.chain;
  if (named.size > 0) problems.push(`it names session ${[...named].join(', ')}, not ${evidence.sessionId}`);
  const signatures = chain.reason === 'signature_invalid' ? 'invalid' : !chain.signatures.signed && typeof seal?.signature !== 'string' ? 'unsigned' : chain.signatures.verified === true ? 'verified' : 'unchecked';
  const intact = chain.hash_chain_valid && chain.reason === undefined;
  if (!intact) problems.unshift(chain.message ?? `the chain failed: ${chain.reason ?? 'unknown'}`);
  let status: SessionCheck['status'];
  if (problems.length > 0) status = 'damaged';
  else if (!evidence.closed) status = 'open';
  else if (seal === null) status = 'unsealed';
  else status = 'verified';
  const problem = status === 'unsealed' ? 'it has no seal: neither a seal-log entry nor a sealed summary (Python Aura, or closed before sealing)' : (problems[0] ?? null);
  return { status, chain, seal, sealFrom, signatures, problem, trail, records, foreignId: [...named][0] ?? null };
}

function summarySealOf(evidence: SessionEvidence, problems: string[], named: Set<string>): ChainSeal | null {
  if (evidence.summaryText === null) return null;
  let value: unknown;
  try {
    value = parseJsonStrict(evidence.summaryText);
  } catch {
    problems.push('its summary is not JSON');
    return null;
  }
  const sessionId = (value as Record<string, unknown> | null)?.['session_id'];
  if (typeof sessionId === 'string' && sessionId !== evidence.sessionId) named.add(sessionId);
  try {
    return sealOfSummary(value, `${evidence.sessionId}.summary.json`);
  } catch (error) {
    if (error instanceof ChainVerificationError) throw error;
    problems.push(error instanceof Error ? error.message : String(error));
    return null;
  }
}

/** The entry's hash holds, it seals this session, and it agrees with the summary's signed seal. */
function checkSealEntry(sessionId: string, entry: SealLogEntry, fromSummary: ChainSeal | null, problems: string[], named: Set<string>): void {
  if (entry.seal.session_id !== sessionId) named.add(String(entry.seal.session_id));
  if (sealEntryHash(entry.prev_hash, entry.seal) !== entry.hash) problems.push('its seal-log entry does not match its hash (edited)');
  if (fromSummary !== null && typeof fromSummary.signature === 'string' && (fromSummary.signature !== entry.seal.signature || fromSummary.head_hash !== entry.seal.head_hash || fromSummary.events !== entry.seal.events)) {
    problems.push("its summary's seal differs from its seal-log entry");
  }
}
