/**
 * The finding vocabulary (DESIGN §4): one static map from kind to severity, with what the
 * finding means and what to do about it. `critical` only where data already handed out cannot be
 * trusted; a kind whose evidence is a text match is marked `lexical` and is `info` (the type
 * allows nothing else, and a test checks it); a kind the map does not know is `info` at run time,
 * and a test fails when any probe can emit a kind missing here.
 */

/** How bad a finding is. */
export type Severity = 'critical' | 'warn' | 'info';

/** One entry of the vocabulary. */
export type KindEntry = {
  /** What the finding means (its payload keys are named in the probe that emits it). */
  readonly meaning: string;
  /** The recommendation the report gives for it. */
  readonly recommendation: string;
} & (
  | { readonly severity: Severity; readonly lexical?: false }
  /**
   * A kind whose evidence is a text match (a substring, a pattern, a similarity of words): it is
   * `info`, never more, because a text match can be wrong (SuperAuditor §4).
   */
  | { readonly severity: 'info'; readonly lexical: true }
);

/** Every finding kind aura emits. */
export const FINDING_KINDS = {
  HASH_CHAIN_BROKEN: {
    severity: 'critical',
    meaning: 'a line of the trail was edited, removed, reordered, or is not a whole record',
    recommendation: 'Treat this trail as tampered or damaged: keep the file as evidence and re-run the session.',
  },
  TRAIL_MISSING: {
    severity: 'critical',
    meaning: 'a session whose trail is gone, though the seal log seals it or the fleet store holds its record',
    recommendation: 'A stored session was deleted: restore its files (or its rows in the fleet store) from a copy and find who had write access (aura deletes no sealed or stored record).',
  },
  TRAIL_TRUNCATED: {
    severity: 'critical',
    meaning: 'the trail has fewer events, or another head, than its seal says',
    recommendation: 'The trail was cut or rewritten after close: restore it from a copy and find who had write access.',
  },
  SIGNATURE_INVALID: {
    severity: 'critical',
    meaning: 'a checkpoint or seal signature fails, is by an untrusted key, or is missing where one is due',
    recommendation: 'The signed record and the trail disagree: treat the trail as rewritten, and check the keys you trust.',
  },
  SUMMARY_MISMATCH: {
    severity: 'critical',
    meaning: "the stored summary disagrees with what the trail says now",
    recommendation: 'Trust the trail over the summary: rebuild the summary with aura export --rebuild and find out why they differ.',
  },
  TRAIL_TORN_TAIL: {
    severity: 'warn',
    meaning: 'the last line was cut short by an interrupted write; everything before it verifies',
    recommendation: 'The writer was interrupted mid-line: check why the process stopped.',
  },
  TRAIL_INCOMPLETE: {
    severity: 'warn',
    meaning: 'the trail does not end with session.close',
    recommendation: 'The session was never closed: its writer stopped early or it is still running.',
  },
  TRAIL_EMPTY: {
    severity: 'warn',
    meaning: 'the trail holds no events',
    recommendation: 'Nothing was recorded: check that the session opened at all.',
  },
  POLICY_VIOLATION: {
    severity: 'warn',
    meaning: 'a call or step broke a declared rule and was stopped',
    recommendation: 'Review the violated rules and the calls that broke them; tighten the agent or adjust the policy.',
  },
  CAPABILITY_DENIED: {
    severity: 'warn',
    meaning: 'a gated tool was called without a capability whose scope matches',
    recommendation: 'Call gated tools with a capability whose scope matches the arguments, or update the capability in the profile.',
  },
  CAPABILITY_AUDIT: {
    severity: 'info',
    meaning: 'a capability miss recorded, not enforced (spectrum low)',
    recommendation: 'Capability misses were only recorded at spectrum low: raise the level to enforce them.',
  },
  SCHEMA_VIOLATION: {
    severity: 'warn',
    meaning: 'tool arguments or a result did not match their schema',
    recommendation: 'Fix the tool arguments or results that do not match their schema, or correct the schema.',
  },
  APPROVAL_PENDING: {
    severity: 'warn',
    meaning: 'calls were held for approval and never approved',
    recommendation: 'Approve or reject the pending requests with a named principal.',
  },
  SECRET_BROKER_ERROR: {
    severity: 'warn',
    meaning: 'a secret ref did not resolve, so the gated call did not run',
    recommendation: 'Bind the missing secret refs in the broker (for env: refs, set the variables) before the next run.',
  },
  SEQUENCER_INCOMPLETE: {
    severity: 'warn',
    meaning: 'declared sequencer steps did not all complete, or ran out of order',
    recommendation: 'Re-run the sequence from the step that did not complete, or simplify the declared steps.',
  },
  STEP_FAILED: {
    severity: 'warn',
    meaning: 'a sequencer step ended with an error',
    recommendation: 'Inspect the failed steps and their errors; re-run once the cause is fixed.',
  },
  GOAL_DRIFT: {
    severity: 'info',
    lexical: true,
    meaning: "an action's text named a forbidden topic, or missed the goal's keywords (a text match, so only informational)",
    recommendation: 'Read the actions flagged as drifting from the goal: a word match may be wrong; align the agent, or tighten its allow lists.',
  },
  SCHEDULE_SLO_MISS: {
    severity: 'warn',
    meaning: 'a scheduled task missed its deadline',
    recommendation: 'Finish the task within its window, or adjust the schedule and grace.',
  },
  VERIFIED_IDENTITY_REQUIRED: {
    severity: 'warn',
    meaning: 'the policy required a verified operator and the bound one was not verified',
    recommendation: 'Bind a verified operator (an identity adapter that checks a credential), or lower the requirement knowingly.',
  },
  COGNITIVE_CYCLE_DETECTED: {
    severity: 'warn',
    meaning: 'an observer saw the agent loop: the same action repeated, or a cycle of actions',
    recommendation: 'Break the loop: change the prompt or tools, or stop the agent at the alert.',
  },
  REASONING_INERTIA: {
    severity: 'info',
    lexical: true,
    meaning: 'reasoning text repeated with no new action (a text match, so only informational)',
    recommendation: 'Look at the reasoning that repeated; it may be stuck.',
  },
  PII_MASKED: {
    severity: 'info',
    lexical: true,
    meaning: 'personal data was masked before it was recorded',
    recommendation: 'Personal data passed through this session; it was masked before recording.',
  },
  ESCALATION_FIRED: {
    severity: 'info',
    meaning: 'an escalation rule fired and its actions were recorded',
    recommendation: 'Follow up the escalations this session fired.',
  },
  OBSERVER_ALERT: {
    severity: 'warn',
    meaning: 'an observer raised an alert that is not a loop: a limit passed (events, tool calls, rate, tokens, wall time)',
    recommendation: 'Look at what passed its limit: raise the cap knowingly, or find why the agent needed more.',
  },
  OBSERVER_ERROR: {
    severity: 'warn',
    meaning: 'an observer threw; its checks for that event did not run',
    recommendation: 'Fix the observer that threw: its checks were not applied.',
  },
  SESSION_ABANDONED: {
    severity: 'warn',
    meaning: 'a session left open by a writer that is gone (its lock names a dead process)',
    recommendation: 'The writer died mid-session: aura export rebuilds its summary from what the trail holds.',
  },
  SUMMARY_MISSING: {
    severity: 'warn',
    meaning: 'a closed trail with no summary',
    recommendation: 'Its export failed or was skipped: aura export builds the summary from the trail.',
  },
  ORPHAN_ARTIFACT: {
    severity: 'warn',
    meaning: 'a summary or spans file whose trail is gone',
    recommendation: 'The trail was deleted or moved: restore it, or treat the summary as unverifiable.',
  },
  SIGNATURE_MISSING: {
    severity: 'critical',
    meaning: 'a sealed session is not signed where a signature is required: sealed after signing began in its store, or checked against trusted keys with nothing proving it predates signing',
    recommendation: 'Treat its signatures as stripped: compare the trail with a copy, and check which process wrote it without the key.',
  },
  SEAL_MISSING: {
    severity: 'warn',
    meaning: 'a closed session has no seal: no seal-log entry and no sealed summary',
    recommendation: 'It was closed before sealing, written by another tool, or its seal was removed: aura export rebuilds the summary, not the seal.',
  },
  SEAL_LOG_BROKEN: {
    severity: 'critical',
    meaning: 'the seal log does not walk: a seal was edited, removed or reordered',
    recommendation: 'Compare the seal log with its anchor copy and find who had write access to it.',
  },
  PUSH_REFUSED: {
    severity: 'critical',
    meaning: 'the fleet store refused a pushed session: its bytes differ from the stored session with the same id, or it names another session than its own',
    recommendation: 'Two copies claim one session: compare the host\'s files with aura pull of the stored one, and find which was forged.',
  },
  PUSH_GAP: {
    severity: 'warn',
    meaning: "a host's seal log links to a sealed session that the fleet store does not hold: it was never pushed, or was removed",
    recommendation: 'Run aura push --all on that host; if the session is gone there too, find who removed it.',
  },
  HOST_SILENT: {
    severity: 'warn',
    meaning: 'a host that pushed to the fleet store has not pushed for longer than expected',
    recommendation: 'Check the host and its aura push schedule: its sessions are not reaching the store.',
  },
  CHECK_CRASHED: {
    severity: 'warn',
    meaning: 'a probe of the detector threw; its findings were replaced by this one (SuperAuditor v1.1 §5.4)',
    recommendation: 'A check could not run: report it, and do not read its absence as a clean result.',
  },
} as const satisfies Readonly<Record<string, KindEntry>>;

/** A finding kind aura knows. */
export type FindingKind = keyof typeof FINDING_KINDS;

/** The severity of a kind; `info` for a kind the map does not know. */
export function severityOf(kind: string): Severity {
  return Object.hasOwn(FINDING_KINDS, kind) ? FINDING_KINDS[kind as FindingKind].severity : 'info';
}

/** The recommendation for a kind. */
export function recommendationOf(kind: string): string {
  return Object.hasOwn(FINDING_KINDS, kind) ? FINDING_KINDS[kind as FindingKind].recommendation : `Review the ${kind} findings.`;
}
