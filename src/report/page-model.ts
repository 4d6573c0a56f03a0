/**
 * What a session's report page shows, as one JSON-ready value: the report of `aura report show`
 * (same readers, so Python Aura sessions work too), the chain checked against its seal and the
 * trusted keys, and the timeline compacted so that a 100k-event session stays a page a browser
 * opens (one array a row, kinds by index, each payload once as its canonical text).
 *
 * Everything here comes from files on disk and is untrusted: the page renders it as text only.
 */

import { ruleType } from '../audit/conformance.js';
import type { Finding } from '../audit/detector.js';
import { verdictReason } from '../audit/report.js';
import { checkedSessionReport } from '../audit/session-report.js';
import { canonicalJson } from '../spine/canonical.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import { PythonNumber } from '../spine/python-number.js';
import type { AuraEvent } from '../spine/record.js';
import type { KeyRing } from '../spine/signing.js';
import type { ChainReport, ChainSeal } from '../spine/verify.js';
import type { SessionFiles } from '../store/session-files.js';
import { materialOf, type SessionMaterial } from '../store/material.js';
import { statusLabel, type SessionStatus, type SessionStatusName, type SignatureFacet } from '../store/session-status.js';

/** Where a kind sits on the timeline: picks its colour and its filter group. */
export type KindGroup = 'session' | 'turn' | 'model' | 'tool' | 'policy' | 'approval' | 'observer' | 'pii' | 'sequencer' | 'chain' | 'mcp' | 'other';

/**
 * One timeline row: `[event_id, timestamp, kind index, latency_ms or null, marker or null, payload text]`.
 * A tuple, not an object, because keys repeated 100k times would be a third of the page.
 */
export type EventRow = [string, string, number, number | null, string | null, string];

/** How the chain of the trail stands, for people. */
export interface ChainStatus {
  /** Re-checked from the trail, or only what a stored summary says (the trail is gone). */
  readonly checked: boolean;
  readonly hash_chain_valid: boolean | null;
  readonly complete: boolean | null;
  readonly events: number | null;
  readonly reason: string | null;
  readonly event_id: string | null;
  readonly line: number | null;
  readonly message: string | null;
  /** The session's status (store/session-status.ts), and the label every surface shows for it. */
  readonly status: SessionStatusName;
  readonly label: string;
  /** `verified`, `predates_signing`, `unchecked` (signed, no trusted keys given), `pending` (signed, no signature written yet), `unsigned` or `invalid`. */
  readonly signatures: SignatureFacet;
  readonly key_id: string | null;
  readonly checkpoints: number;
  /** The seal the trail was checked against (from the summary), if there is one. */
  readonly seal: { readonly events: number; readonly first_hash: string | null; readonly head_hash: string | null; readonly signed: boolean } | null;
  readonly first_hash: string | null;
  readonly head_hash: string | null;
}

/** Events over time: counts in equal time buckets, per group. */
export interface EventChart {
  readonly start: string | null;
  readonly end: string | null;
  readonly buckets: readonly { readonly total: number; readonly groups: Readonly<Partial<Record<KindGroup, number>>> }[];
}

/** Everything the page shows. */
export interface ReportPageModel {
  readonly session_id: string;
  readonly agent_ref: string | null;
  readonly policy_version: string | null;
  readonly opened_at: string | null;
  readonly closed_at: string | null;
  readonly verdict: string;
  /** Why the verdict is below pass (`conformance: …; critical: …`), or null. */
  readonly verdict_reason: string | null;
  readonly source: 'trail' | 'summary';
  readonly stored_by: string | null;
  readonly disagreements: readonly string[];
  readonly chain: ChainStatus;
  readonly findings: readonly Finding[];
  readonly scorecard: Readonly<Record<string, unknown>>;
  readonly recommendations: readonly string[];
  /** `[kind, group]` by index, as the rows refer to them. */
  readonly kinds: readonly (readonly [string, KindGroup])[];
  readonly events: readonly EventRow[];
  /** The longest tool latency, so the page scales latency bars without a pass over the rows. */
  readonly max_latency_ms: number;
  readonly chart: EventChart;
  readonly generator: string;
}

/** How the page is built. */
export interface PageModelOptions {
  /** Keep the operator's e-mail, name and subject (config `identity_export_pii`). */
  readonly exportPii?: boolean;
  /** Trusted public keys: with none, signatures read as `unchecked`. */
  readonly keys?: KeyRing | null;
  /** Names this aura in the page footer. */
  readonly generator: string;
}

const CHART_BUCKETS = 60;
// A page a browser opens: a payload of megabytes (a file a tool read) is shown by its start, and a
// page stops showing payloads once it holds this many characters of them (`aura logs` has them all).
const MAX_PAYLOAD_SHOWN = 64 * 1024;
const MAX_PAYLOADS_SHOWN = 32 * 1024 * 1024;

/** A payload's text as the page shows it, `before` characters of payloads already on the page. */
function shownPayload(text: string, before: number): string {
  if (before + Math.min(text.length, MAX_PAYLOAD_SHOWN) > MAX_PAYLOADS_SHOWN) return `(not shown: the page holds ${MAX_PAYLOADS_SHOWN / 1024 / 1024} MiB of payloads already; aura logs shows every event whole)`;
  if (text.length <= MAX_PAYLOAD_SHOWN) return text;
  return `${text.slice(0, MAX_PAYLOAD_SHOWN)} … (${text.length - MAX_PAYLOAD_SHOWN} more characters; aura logs shows the event whole)`;
}

/**
 * Builds the page model of one session.
 * @throws NotFoundError when there is neither a trail nor a summary; ReadError or AuraError `READ_FAILED` for an unreadable summary
 */
export function reportPageModel(session: SessionFiles | SessionMaterial, options: PageModelOptions): ReportPageModel {
  const files = materialOf(session);
  // One read of the trail, against its seal and the trusted keys, serves the status, the report and the timeline.
  const { status, report } = checkedSessionReport(files, options.keys ?? null, options.exportPii === true);
  const trail = status.trail;
  const summary = report.summary;
  const audit = summary.audit_report;
  const kinds = new Map<string, number>();
  const kindList: (readonly [string, KindGroup])[] = [];
  let maxLatency = 0;
  let shown = 0;
  const rows: EventRow[] = (trail?.events ?? []).map((event) => {
    let index = kinds.get(event.kind);
    if (index === undefined) {
      index = kindList.length;
      kinds.set(event.kind, index);
      kindList.push([event.kind, groupOf(event.kind)]);
    }
    const latency = numberOf(event.telemetry['latency_ms']);
    if (latency !== null && latency > maxLatency) maxLatency = latency;
    const payload = shownPayload(canonicalJson(event.payload, 'payload'), shown);
    shown += payload.length;
    return [event.event_id, event.timestamp, index, latency, markerOf(event), payload];
  });
  return {
    session_id: files.sessionId,
    agent_ref: stringOf(summary['agent_ref']) ?? stringOf(objectOf(summary['agent_ids'])['name']),
    policy_version: stringOf(summary['policy_version']),
    opened_at: stringOf(summary['opened_at']) ?? rows[0]?.[1] ?? null,
    closed_at: stringOf(summary['closed_at']),
    verdict: String(audit['verdict'] ?? 'unknown'),
    verdict_reason: verdictReason(audit['verdict'], audit.findings, summary['conformance']),
    source: report.source,
    stored_by: report.stored_by,
    disagreements: report.disagreements,
    chain: trail === null ? storedChain(audit, status) : chainStatus(trail.chain, status),
    findings: audit.findings,
    scorecard: objectOf(audit['scorecard']),
    recommendations: Array.isArray(audit['recommendations']) ? audit['recommendations'].map(String) : [],
    kinds: kindList,
    events: rows,
    max_latency_ms: maxLatency,
    chart: chartOf(trail?.events ?? [], kindList, kinds),
    generator: options.generator,
  };
}

function chainStatus(chain: ChainReport, status: SessionStatus): ChainStatus {
  const sig = chain.signatures;
  return {
    checked: true,
    status: status.status,
    label: statusLabel(status),
    hash_chain_valid: chain.hash_chain_valid,
    complete: chain.complete,
    events: chain.events,
    reason: status.reason ?? chain.reason ?? null,
    event_id: chain.event_id ?? null,
    line: chain.line ?? null,
    message: status.message ?? chain.message ?? null,
    signatures: status.signatures,
    key_id: sig.key_id,
    checkpoints: sig.checkpoints,
    seal: sealFacts(status.seal),
    first_hash: chain.first_hash,
    head_hash: chain.head_hash,
  };
}

function sealFacts(seal: ChainSeal | null): ChainStatus['seal'] {
  return seal === null ? null : { events: seal.events, first_hash: seal.first_hash ?? null, head_hash: seal.head_hash ?? null, signed: typeof seal.signature === 'string' };
}

/** With no trail, only what the summary says, marked as not re-checked. */
function storedChain(audit: Readonly<Record<string, unknown>>, status: SessionStatus): ChainStatus {
  const seal = status.seal;
  return {
    checked: false,
    status: status.status,
    label: statusLabel(status),
    hash_chain_valid: typeof audit['hash_chain_valid'] === 'boolean' ? audit['hash_chain_valid'] : null,
    complete: null,
    events: seal?.events ?? null,
    reason: 'missing_trail',
    event_id: null,
    line: null,
    message: 'the trail is missing: shown from the stored summary, not re-checked',
    signatures: status.signatures,
    key_id: seal?.key_id ?? null,
    checkpoints: 0,
    seal: sealFacts(seal),
    first_hash: seal?.first_hash ?? null,
    head_hash: seal?.head_hash ?? null,
  };
}

/** The timeline group of a kind, by its name: kinds added later fall in `other` and still show. */
export function groupOf(kind: string): KindGroup {
  if (kind === 'constraint.approval_required' || kind === 'constraint.approved') return 'approval';
  if (kind.startsWith('constraint.') || kind.startsWith('policy.') || kind === 'escalation.fired') return 'policy';
  if (kind.startsWith('session.') || kind === 'membrane.ingress' || kind === 'goal.complete') return 'session';
  if (kind.startsWith('turn.')) return 'turn';
  if (kind.startsWith('model.')) return 'model';
  if (kind.startsWith('tool.')) return 'tool';
  if (kind.startsWith('observer.') || kind.startsWith('membrane.') || kind === 'conformance.drift' || kind === 'slo.missed') return 'observer';
  if (kind.startsWith('middleware.')) return 'pii';
  if (kind.startsWith('sequencer.')) return 'sequencer';
  if (kind.startsWith('chain.')) return 'chain';
  if (kind.startsWith('mcp.')) return 'mcp';
  return 'other';
}

/** The short label a row carries beside its kind: who approved, which rule, what was masked. */
function markerOf(event: AuraEvent): string | null {
  const p = event.payload;
  switch (event.kind) {
    case 'constraint.approved':
      return `approved by ${stringOf(p['principal']) ?? 'unnamed principal'}`;
    case 'constraint.approval_required':
      return `approval required: ${stringOf(p['tool']) ?? stringOf(objectOf(objectOf(p['pending_event'])['payload'])['tool']) ?? stringOf(p['request_id']) ?? ''}`;
    case 'constraint.violated':
      return `${p['audit_only'] === true ? 'recorded' : 'denied'}: ${ruleType(p['rule'])}`;
    case 'observer.alert': {
      // A loop alert names its pattern; a limit alert only its type (observers/break.ts, limit.ts).
      const what = stringOf(p['pattern']) ?? stringOf(p['type']) ?? '';
      const message = stringOf(p['message']);
      return message === null || message.startsWith(what) ? `alert ${message ?? what}` : `alert ${what}: ${message}`;
    }
    case 'membrane.nudge':
      return `nudge${stringOf(p['message']) === null ? '' : `: ${stringOf(p['message']) ?? ''}`}`;
    case 'middleware.applied': {
      const redactions = numberOf(p['redactions']);
      const what = [stringOf(p['op']) ?? 'middleware', stringOf(p['strategy'])].filter((part) => part !== null).join(' ');
      return redactions === null ? what : `${what}: ${redactions} masked`;
    }
    case 'sequencer.step.start':
      return `step ${event.step_id ?? ''} ${stringOf(p['ref']) ?? stringOf(p['type']) ?? ''}`.trimEnd();
    case 'sequencer.step.end':
      return `step ${event.step_id ?? ''} ${stringOf(p['status']) ?? ''}`.trimEnd();
    case 'mcp.session':
      return stringOf(objectOf(p['client'])['name']) ?? stringOf(p['transport']);
    case 'turn.start':
    case 'turn.end':
      return p['turn'] === undefined ? null : `turn ${String(p['turn'])}`;
    default:
      return stringOf(p['tool']);
  }
}

function chartOf(events: readonly AuraEvent[], kindList: readonly (readonly [string, KindGroup])[], kinds: ReadonlyMap<string, number>): EventChart {
  const times = events.map((event) => Date.parse(event.timestamp));
  const valid = times.filter((t) => Number.isFinite(t));
  if (valid.length === 0) return { start: null, end: null, buckets: [] };
  let start = Infinity;
  let end = -Infinity;
  for (const t of valid) {
    if (t < start) start = t;
    if (t > end) end = t;
  }
  const span = Math.max(end - start, 1);
  const buckets = Array.from({ length: CHART_BUCKETS }, () => ({ total: 0, groups: {} as Partial<Record<KindGroup, number>> }));
  events.forEach((event, i) => {
    const t = times[i] as number;
    if (!Number.isFinite(t)) return;
    const bucket = buckets[Math.min(CHART_BUCKETS - 1, Math.floor(((t - start) / span) * CHART_BUCKETS))] as (typeof buckets)[number];
    const group = kindList[kinds.get(event.kind) ?? -1]?.[1] ?? 'other';
    bucket.total++;
    bucket.groups[group] = (bucket.groups[group] ?? 0) + 1;
  });
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString(), buckets };
}

function numberOf(value: unknown): number | null {
  // A float read from a trail may be a PythonNumber (spine/python-number.ts): its valueOf is the number.
  const n = typeof value === 'number' ? value : value instanceof PythonNumber ? value.valueOf() : NaN;
  return Number.isFinite(n) ? n : null;
}
