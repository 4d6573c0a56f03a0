/**
 * `{id}.summary.json` (reference §18.4): Aura's keys, in Aura's order, plus the chain seal, built
 * from the trail as read back from disk, so the summary describes the file and not a copy in
 * memory. The same function serves a session closing and `aura export` rebuilding a summary.
 */

import { objectOf, stringOf } from '../spine/json-shape.js';
import { buildAuditReport, type AuditReport } from '../audit/report.js';
import { buildConformance, type Conformance } from '../audit/conformance.js';
import { AUDITED_KINDS } from '../audit/probes.js';
import { IdentityRedactor } from './operator-redaction.js';
import { escapeNonAscii } from '../spine/canonical.js';
import type { TrailRead } from '../spine/trail-reader.js';
import type { Seal } from '../store/seal-log.js';
import type { AuraEvent, JsonObject } from '../spine/record.js';
import type { OtelExportStats } from './live-queue.js';
import { PACKAGE_NAME, VERSION } from '../version.js';

/** The summary of one session. */
export interface SessionSummary {
  readonly session_id: string;
  readonly aura_id: string | null;
  readonly agent_ref: string | null;
  readonly agent_name: string | null;
  readonly policy_version: string | null;
  readonly mode: string | null;
  readonly snapshot_hash: string | null;
  readonly open_snapshot_hash: string | null;
  readonly trace_id: string | null;
  /** The label the session declared (`agent.session({ sessionKey })`), or null. */
  readonly session_key: string | null;
  readonly agent_ids: JsonObject;
  readonly purpose: string | null;
  /** The bound operator, PII fields nulled unless `identity_export_pii` (reference §17.4), as everywhere else in the summary. */
  readonly identity: { readonly operator: JsonObject } | null;
  readonly conformance: Conformance;
  readonly audit_report: AuditReport;
  readonly event_count: number;
  readonly log: string;
  /** The seal: what a later `verify chain --summary` compares the trail against. */
  readonly chain: { readonly events: number; readonly first_hash: string | null; readonly head_hash: string | null };
  /** The signed seal, when the session was signed (evidence: `seals.jsonl` holds the same). */
  readonly seal: Seal | null;
  readonly opened_at: string | null;
  readonly closed_at: string | null;
  readonly close_reason: string | null;
  readonly generator: { readonly name: string; readonly version: string };
  /** The format of this file; a reader refuses a newer one. */
  readonly summary_version: 1;
  /** Live OTLP export, when it was on: spans the collector took and spans dropped. */
  readonly otel?: OtelExportStats;
}

/** How a summary is built. */
export interface SummaryOptions {
  /** Keep the operator's e-mail, name and subject (config `identity_export_pii`). */
  readonly exportPii?: boolean;
  /** Seals the trail as read: given the chain's extent and close time, returns the seal. */
  readonly seal?: (extent: { events: number; first_hash: string | null; head_hash: string | null; closed_at: string | null }) => Seal | null;
  /** What live export did (a closing session only). */
  readonly otel?: OtelExportStats;
  /** Declared sequencer steps the trail does not hold (a Python Aura session's, from its summary). */
  readonly declaredSteps?: readonly string[] | null;
}

/** The kinds whose content a summary reads. */
const SUMMARY_KINDS: ReadonlySet<string> = new Set([...AUDITED_KINDS, 'membrane.ingress', 'session.close']);

/**
 * Which events of a trail, read in order, a summary reads (a digest keeps these and counts the
 * rest): the first, those of {@link SUMMARY_KINDS}, and those whose trailer names another operator
 * than the event before (the operator's identity is redacted wherever it appears).
 */
export function summaryKeeps(): (event: AuraEvent) => boolean {
  let first = true;
  let operator = '';
  return (event) => {
    const ids = event.agent_ids['ids'];
    const named = ids !== null && typeof ids === 'object' && !Array.isArray(ids) && 'operator' in ids ? (JSON.stringify(ids['operator']) ?? '') : '';
    const keep = first || named !== operator || SUMMARY_KINDS.has(event.kind);
    first = false;
    operator = named;
    return keep;
  };
}

/** Builds the summary of the trail at `logPath` from what was read of it (all its events, or a digest of those {@link summaryKeeps} keeps). */
export function buildSummary(sessionId: string, trail: TrailRead, logPath: string, options: SummaryOptions = {}): SessionSummary {
  const { events, chain, digest } = trail;
  const ingress = payloadOf(events, 'membrane.ingress');
  const open = payloadOf(events, 'session.open');
  const close = lastPayloadOf(events, 'session.close');
  const context = objectOf(ingress['context']);
  const first = events[0];
  const agentIds = first?.agent_ids ?? {};
  const snapshot = stringOf(open['snapshot_hash']) ?? stringOf(ingress['snapshot_hash']);
  const policyVersion = stringOf(open['policy_version']) ?? stringOf(context['policy_version']) ?? stringOf(agentIds['policy_version']);
  const agentRef = stringOf(open['agent_ref']) ?? stringOf(context['agent_ref']) ?? stringOf(agentIds['agent_ref']);
  const conformance = buildConformance(events, snapshot, options.declaredSteps ?? null, digest);
  const closedAt = events.findLast((event) => event.kind === 'session.close')?.timestamp ?? null;
  const summary: SessionSummary = {
    session_id: sessionId,
    aura_id: first?.aura_id ?? null,
    agent_ref: agentRef,
    agent_name: stringOf(context['name']) ?? stringOf(agentIds['name']),
    policy_version: policyVersion,
    mode: stringOf(open['mode']) ?? stringOf(ingress['mode']),
    snapshot_hash: snapshot,
    open_snapshot_hash: snapshot,
    trace_id: first?.trace_id ?? null,
    session_key: stringOf(open['session_key']),
    agent_ids: agentIds,
    purpose: stringOf(open['purpose']) ?? stringOf(context['purpose']),
    identity: identityOf(events),
    conformance,
    audit_report: buildAuditReport(events, conformance, chain, { agent_ref: agentRef, policy_version: policyVersion }, digest),
    event_count: conformance.event_count,
    log: logPath,
    chain: { events: chain.events, first_hash: chain.first_hash, head_hash: chain.head_hash },
    seal: options.seal?.({ events: chain.events, first_hash: chain.first_hash, head_hash: chain.head_hash, closed_at: closedAt }) ?? null,
    opened_at: first?.timestamp ?? null,
    closed_at: closedAt,
    close_reason: stringOf(close['reason']),
    generator: { name: PACKAGE_NAME, version: VERSION },
    summary_version: 1,
    ...(options.otel === undefined ? {} : { otel: options.otel }),
  };
  if (options.exportPii === true) return summary;
  // The operator rides on copies of events too (conformance violations carry whole events).
  const identity = new IdentityRedactor();
  for (const event of events) identity.noteEvent(event.agent_ids, event.kind, event.payload);
  return identity.redact(summary);
}

/** The summary file's text: indented and ASCII-escaped, as Aura writes it (`json.dump(indent=2)`). */
export function summaryText(summary: SessionSummary): string {
  return `${escapeNonAscii(JSON.stringify(summary, null, 2))}\n`;
}

function identityOf(events: readonly AuraEvent[]): { operator: JsonObject } | null {
  const operator = objectOf(payloadOf(events, 'identity.bound')['operator']);
  return Object.keys(operator).length === 0 ? null : { operator };
}

function payloadOf(events: readonly AuraEvent[], kind: string): JsonObject {
  return events.find((event) => event.kind === kind)?.payload ?? {};
}

function lastPayloadOf(events: readonly AuraEvent[], kind: string): JsonObject {
  return events.findLast((event) => event.kind === kind)?.payload ?? {};
}
