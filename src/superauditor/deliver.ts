/**
 * The delivery seam of the SuperAuditor Standard v1.1 (seed §5–§6, DESIGN §5): a pure function
 * of (detector output, per_kind_limit) to the `get_session_findings` response. Trim per kind in
 * detector order; observe capping by taking limit + 1 (never infer it from count == limit);
 * count over the returned set; render the summary from that same set.
 */

import type { Severity } from '../audit/kinds.js';
import { valueExcerpt } from '../spine/json-shape.js';
import { VERSION } from '../version.js';

/** The version of the standard this server implements. */
export const SUPERAUDITOR_VERSION = '1.1';

/** The default `per_kind_limit` (seed §5.1). */
export const DEFAULT_PER_KIND_LIMIT = 5;

/** One finding as the detector gives it: a kind and server-defined payload. */
export interface DetectorFinding {
  readonly kind: string;
  readonly [key: string]: unknown;
}

/** A delivered finding: `kind`, `severity` from the static map, the payload. */
export interface DeliveredFinding {
  readonly kind: string;
  readonly severity: Severity;
  readonly [key: string]: unknown;
}

/** The response of `get_session_findings` (seed §5.2). */
export interface FindingsResponse {
  readonly findings: readonly DeliveredFinding[];
  readonly total: number;
  readonly counts_by_kind: Readonly<Record<string, number>>;
  readonly counts_by_severity: Readonly<Partial<Record<Severity, number>>>;
  readonly capped_kinds: readonly string[];
  readonly per_kind_limit: number;
  readonly summary?: string;
  readonly identity_shared?: true;
  readonly _meta: { readonly server_version: string; readonly superauditor: string };
}

/** A request refused by the seam; the MCP tool turns it into a tool error. */
export class DeliveryError extends Error {}

/** Delivery options. */
export interface DeliveryOptions {
  readonly perKindLimit?: unknown;
  readonly includeSummary?: boolean;
  /** A shared transport with no declared session key (seed §7, C8). */
  readonly identityShared?: boolean;
  /** The static map; the fallback for a kind it lacks is `info` (C5). */
  readonly severityOf: (kind: string) => Severity;
}

/**
 * `per_kind_limit` from outside: an integer >= 1, or absent for the default. Anything else is
 * refused, never clamped or read as 0 (v1.1 §5.1, C14).
 * @throws DeliveryError
 */
export function checkPerKindLimit(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_PER_KIND_LIMIT;
  // Past 2^53 a number no longer names one integer (and the answer's schema refuses it).
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw new DeliveryError(`per_kind_limit must be an integer >= 1 (at most ${Number.MAX_SAFE_INTEGER}), got ${valueExcerpt(value)}`);
  }
  return value as number;
}

/** The delivered response for detector output. @throws DeliveryError */
export function deliver(output: readonly DetectorFinding[], options: DeliveryOptions): FindingsResponse {
  const limit = checkPerKindLimit(options.perKindLimit);
  // Probe at limit + 1: a kind that had one more than the limit is capped; one at the limit is not.
  const taken = new Map<string, number>();
  const capped = new Set<string>();
  const findings: DeliveredFinding[] = [];
  for (const [index, finding] of output.entries()) {
    const count = (taken.get(finding.kind) ?? 0) + 1;
    taken.set(finding.kind, count);
    if (count === limit + 1) capped.add(finding.kind);
    if (count > limit) continue;
    findings.push(withSeverity(finding, options.severityOf(finding.kind), index));
  }
  const countsByKind: Record<string, number> = {};
  const countsBySeverity: Partial<Record<Severity, number>> = {};
  for (const finding of findings) {
    countsByKind[finding.kind] = (countsByKind[finding.kind] ?? 0) + 1;
    countsBySeverity[finding.severity] = (countsBySeverity[finding.severity] ?? 0) + 1;
  }
  return {
    findings,
    total: findings.length,
    counts_by_kind: countsByKind,
    counts_by_severity: countsBySeverity,
    capped_kinds: [...capped],
    per_kind_limit: limit,
    ...(options.includeSummary === false ? {} : { summary: summaryOf(findings, [...capped], limit) }),
    ...(options.identityShared === true ? { identity_shared: true as const } : {}),
    _meta: { server_version: VERSION, superauditor: SUPERAUDITOR_VERSION },
  };
}

/**
 * The finding with `severity` from the map. A detector's own grade under `severity` is moved to
 * `detector_severity`, never over a key already there (v1.1 §3, C11).
 */
function withSeverity(finding: DetectorFinding, severity: Severity, index: number): DeliveredFinding {
  const { kind, severity: own, ...payload } = finding;
  if (own !== undefined && own !== severity) {
    if ('detector_severity' in payload) throw new DeliveryError(`finding ${index} (${kind}) has its own severity and a detector_severity: refusing to overwrite either`);
    return { kind, severity, ...payload, detector_severity: own };
  }
  return { kind, severity, ...payload };
}

/** Prose from the returned set only, so it never disagrees with `findings` (seed §5.2). */
function summaryOf(findings: readonly DeliveredFinding[], capped: readonly string[], limit: number): string {
  if (findings.length === 0) return 'No findings.';
  const order: Severity[] = ['critical', 'warn', 'info'];
  const parts = order.flatMap((severity) => {
    const kinds = new Map<string, number>();
    for (const f of findings) if (f.severity === severity) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
    return kinds.size === 0 ? [] : [`${severity}: ${[...kinds].map(([kind, n]) => `${kind} ×${n}`).join(', ')}`];
  });
  const cappedText = capped.length === 0 ? '' : ` Capped at ${limit} per kind: ${capped.join(', ')} (pull again with a higher per_kind_limit to see more).`;
  return `${findings.length} finding(s). ${parts.join('; ')}.${cappedText}`;
}
