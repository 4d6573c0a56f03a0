/**
 * The goal rows `npm run bench` ends with: one per measure of the performance goals, in their
 * order. A scenario answers a row with a figure whose `goal.row` is the row's name; the figure's
 * target or ceiling is the goal.
 */
export const GOAL = {
  emitPython: 'emit 20k events, fresh process, vs Python Aura',
  emitRaw: 'emit vs raw Node (stringify + sha256 + writeSync)',
  verifyPython: 'verify chain 100k events, CPU time, vs Python Aura',
  closeRss: 'close() after 1M events: peak RSS vs RSS before',
  closeTime: 'close() after 1M events: time vs one verify pass',
  findingsWarm: 'findings warm call, 10k sessions / 1M events',
  findingsWrites: 'findings call while a writer appends',
  cliVerify: 'CLI verify chain, 23 events, wall, vs Python CLI',
  sessionsList: 'aura sessions list, 10k sessions',
  proxyP99: 'proxy added p99, 2,000 calls',
  proxyThroughput: 'proxy throughput, 8 callers, vs direct',
} as const;

/** The rows in the order they are printed. */
export const GOAL_ROWS: readonly string[] = Object.values(GOAL);
