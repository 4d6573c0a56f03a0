/**
 * What a scenario hands back to `runbench.ts`: one `RESULT {json}` line on stdout, last. A line
 * rather than a file so a scenario stays a plain script that also runs on its own.
 */

/** One reported number. */
export interface Figure {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The lowest acceptable value, when the figure has a target. */
  readonly target?: number;
  /** The highest acceptable value, for a figure that is a cost. */
  readonly ceiling?: number;
  /** Quoted from elsewhere (not measured in this run), or derived from such a quote. */
  readonly reference?: boolean;
}

/** A goal row (bench/utils/goals.ts) a scenario could not measure here, and why. */
export interface SkippedGoal {
  readonly row: string;
  readonly why: string;
}

/** All the figures of one scenario. */
export interface ScenarioResult {
  readonly scenario: string;
  readonly figures: readonly Figure[];
  readonly skipped?: readonly SkippedGoal[];
}

export const RESULT_PREFIX = 'RESULT ';

/** Prints the machine-readable last line of a scenario. */
export function printResult(result: ScenarioResult): void {
  console.log(`${RESULT_PREFIX}${JSON.stringify(result)}`);
}

/** Reads a `RESULT` line back; null when the line is not one or its JSON has the wrong shape. */
export function parseResult(line: string): ScenarioResult | null {
  if (!line.startsWith(RESULT_PREFIX)) return null;
  let value: unknown;
  try {
    value = JSON.parse(line.slice(RESULT_PREFIX.length));
  } catch {
    return null;
  }
  if (!isRecord(value) || typeof value['scenario'] !== 'string' || !Array.isArray(value['figures'])) return null;
  const figures: Figure[] = [];
  for (const item of value['figures'] as unknown[]) {
    const figure = toFigure(item);
    if (figure === null) return null;
    figures.push(figure);
  }
  const skipped: SkippedGoal[] = [];
  for (const item of (value['skipped'] ?? []) as unknown[]) {
    if (!isRecord(item) || typeof item['row'] !== 'string' || typeof item['why'] !== 'string') return null;
    skipped.push({ row: item['row'], why: item['why'] });
  }
  return { scenario: value['scenario'], figures, skipped };
}

function toFigure(item: unknown): Figure | null {
  if (!isRecord(item)) return null;
  const { name, value, unit, target, ceiling, reference } = item;
  if (typeof name !== 'string' || typeof value !== 'number' || typeof unit !== 'string') return null;
  if (target !== undefined && typeof target !== 'number') return null;
  if (ceiling !== undefined && typeof ceiling !== 'number') return null;
  if (reference !== undefined && typeof reference !== 'boolean') return null;
  return {
    name,
    value,
    unit,
    ...(target === undefined ? {} : { target }),
    ...(ceiling === undefined ? {} : { ceiling }),
    ...(reference === undefined ? {} : { reference }),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
