/**
 * The goal rows `npm run bench` ends with: one per measure of the performance goals, in their
 * order. Each names the scenario and the figure (by the start of its name) it is read from, the
 * goal itself, and the figures shown beside it: what aura measured and its baseline of the same
 * run. A scenario that cannot measure a row here (Python Aura absent) reports it as skipped.
 */

/** One goal row. For a ratio the figure's value is the ratio; `measured` and `baseline` show its parts. */
export interface GoalRow {
  readonly row: string;
  readonly scenario: string;
  /** The figure the goal applies to (the start of its name). */
  readonly figure: string;
  /** The figure's unit, in which the target or ceiling is given. */
  readonly unit: string;
  readonly target?: number;
  readonly ceiling?: number;
  /** The figure shown as what aura measured, when `figure` is a ratio. */
  readonly measured?: string;
  /** The figure shown as the baseline. */
  readonly baseline?: string;
}

export const GOAL = {
  emitPython: 'emit 20k events, fresh process, vs Python Aura',
  emitRaw: 'emit vs raw Node (stringify + sha256 + writeSync)',
  verifyPython: 'verify chain 100k events, CPU time, vs Python Aura',
  closeRss: 'close() after 1M events: peak RSS / RSS before',
  closeTime: 'close() after 1M events: time / one verify pass',
  findingsWarm: 'findings warm call, 10k sessions / 1M events',
  findingsWrites: 'findings call while a writer writes',
  cliVerify: 'CLI verify chain, 23 events, wall, vs Python CLI',
  sessionsList: 'aura sessions list, 10k sessions',
  proxyP99: 'proxy added p99, 2,000 calls',
  proxyThroughput: 'proxy throughput, 8 callers, vs direct',
} as const;

export const GOAL_ROWS: readonly GoalRow[] = [
  { row: GOAL.emitPython, scenario: 'emit-python', figure: 'emit speed aura / Python Aura', unit: 'x', target: 5, measured: 'aura emit', baseline: 'Python Aura emit' },
  { row: GOAL.emitRaw, scenario: 'emit', figure: "emit ratio 'close' / baseline", unit: 'x', target: 0.8, measured: "emit fsync 'close'", baseline: 'emit baseline' },
  { row: GOAL.verifyPython, scenario: 'verify-python', figure: 'verify speed aura / Python Aura', unit: 'x', target: 5, measured: 'aura verify', baseline: 'Python Aura verify' },
  { row: GOAL.closeRss, scenario: 'close', figure: 'close peak RSS / RSS before', unit: 'x', ceiling: 1.5 },
  { row: GOAL.closeTime, scenario: 'close', figure: 'close / verify pass', unit: 'x', ceiling: 1, measured: 'close() after', baseline: 'streaming verify pass' },
  { row: GOAL.findingsWarm, scenario: 'findings-channel', figure: 'warm call', unit: 'ms', ceiling: 100 },
  { row: GOAL.findingsWrites, scenario: 'findings-channel', figure: 'call within ms of a store write', unit: 'ms', ceiling: 100 },
  { row: GOAL.cliVerify, scenario: 'cli', figure: 'aura / Python Aura, CLI verify chain', unit: 'x', ceiling: 0.5, measured: 'aura verify chain, wall', baseline: 'Python Aura verify chain, wall' },
  { row: GOAL.sessionsList, scenario: 'findings-channel', figure: 'sessions list, 10,000 sessions', unit: 'ms', ceiling: 1000 },
  { row: GOAL.proxyP99, scenario: 'proxy', figure: 'added at p99', unit: 'µs', ceiling: 3000, baseline: 'direct p99' },
  { row: GOAL.proxyThroughput, scenario: 'proxy', figure: 'proxied / direct throughput', unit: 'x', target: 0.8, measured: 'proxied calls/s', baseline: 'direct calls/s' },
];
