/** The SuperAuditor fixtures and response schema (shared conformance data), and an ajv check of a response. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { SHARED } from './fixtures.js';

const ROOT = path.join(SHARED, 'conformance', 'superauditor');

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
  return (JSON.parse(fs.readFileSync(path.join(ROOT, 'v1', 'trimming.json'), 'utf8')) as { cases: TrimmingCase[] }).cases;
}

const validate = new Ajv2020({ strict: false }).compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'schema', 'get_session_findings.response.schema.json'), 'utf8')) as object);

/** The schema's errors for a response (none when it validates). */
export function schemaErrors(response: unknown): string[] {
  return validate(response) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
