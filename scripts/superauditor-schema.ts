/**
 * The SuperAuditor Standard's response schema for `get_session_findings`, kept in this repository
 * under `conformance/superauditor/` (see its NOTICE.md), and an ajv check of a response against it.
 */

import * as fs from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** The standard's conformance folder: fixtures under `v1/`, the response schema under `schema/`. */
export const SUPERAUDITOR_DIR = new URL('../conformance/superauditor/', import.meta.url);

const validate = new Ajv2020({ strict: false }).compile(
  JSON.parse(fs.readFileSync(new URL('schema/get_session_findings.response.schema.json', SUPERAUDITOR_DIR), 'utf8')) as object,
);

/** The schema's errors for a response (none when it validates). */
export function schemaErrors(response: unknown): string[] {
  return validate(response) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
