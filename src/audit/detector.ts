/**
 * THE detector (DESIGN §1, SuperAuditor §5.3): runs every probe over a session and returns its
 * findings with their static severity, in a stable order (by the event they rest on, then kind).
 * A probe that throws is never silently omitted: its findings are replaced by one `CHECK_CRASHED`
 * finding naming it (SuperAuditor v1.1 §5.4).
 */

import { severityOf, type Severity } from './kinds.js';
import { PROBES, type Probe, type ProbeContext, type ProbeFinding } from './probes.js';

/** One finding: a stable kind, its static severity, the events it rests on, and what to act on. */
export interface Finding {
  readonly kind: string;
  readonly severity: Severity;
  readonly message: string;
  readonly event_ids: readonly string[];
  readonly [key: string]: unknown;
}

/**
 * The store probe's finding that something could not be read, and why, beside what could:
 * `place` says what (a session's `session_id`, a folder's `sessions_dir`).
 */
export function storeCrash(message: string, place: Readonly<Record<string, string>> = {}): Finding {
  return { kind: 'CHECK_CRASHED', severity: severityOf('CHECK_CRASHED'), message, event_ids: [], probe: 'store', ...place };
}

/** Runs the probes (the registry by default) and orders their findings. */
export function detect(context: ProbeContext, probes: readonly Probe[] = PROBES): Finding[] {
  const found: ProbeFinding[] = [];
  for (const probe of probes) {
    try {
      found.push(...probe.run(context));
    } catch (error) {
      found.push({
        kind: 'CHECK_CRASHED',
        message: `probe ${probe.id} threw: ${error instanceof Error ? error.message : String(error)}`,
        event_ids: [],
        at: context.events.length,
        probe: probe.id,
        error: error instanceof Error ? error.name : 'Error',
      });
    }
  }
  // A stable sort: within one event and kind, probe order is kept.
  found.sort((a, b) => a.at - b.at || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
  return found.map((finding) => {
    const { kind, message, event_ids, ...rest } = finding;
    delete (rest as { at?: number }).at;
    return { kind, severity: severityOf(kind), message, event_ids, ...rest };
  });
}
