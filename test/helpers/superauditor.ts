/** The SuperAuditor fixtures and response schema (conformance data committed under `conformance/superauditor/`). */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { SUPERAUDITOR } from './fixtures.js';

export { schemaErrors } from '../../scripts/superauditor-schema.js';

/** One case of `v1/trimming.json`. */
export interface TrimmingCase {
  readonly name: string;
  readonly why: string;
  readonly severity_map: Readonly<Record<string, 'critical' | 'warn' | 'info'>>;
  readonly per_kind_limit: number;
  readonly detector_output: readonly { kind: string; [key: string]: unknown }[];
  readonly expect: Readonly<Record<string, unknown>>;
}

/** The trimming cases. */
export function trimmingCases(): TrimmingCase[] {
  return (JSON.parse(fs.readFileSync(path.join(SUPERAUDITOR, 'v1', 'trimming.json'), 'utf8')) as { cases: TrimmingCase[] }).cases;
}
