/**
 * Paths to the fixtures the tests read, all committed in this repository: the trails under
 * `test/fixtures/aura-py/` were written by Python Aura 0.3.3 (see its PROVENANCE.md and
 * index.json); they are the interop vectors of the spine.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Python Aura's trails and tampered copies. */
export const AURA_PY = path.join(REPO, 'test', 'fixtures', 'aura-py');

/** The SuperAuditor Standard's conformance fixtures and response schema (see its NOTICE.md). */
export const SUPERAUDITOR = path.join(REPO, 'conformance', 'superauditor');

/** The interop index: what each trail is, and what aura must answer for each tampered one. */
export interface InteropIndex {
  readonly sessions: Readonly<Record<string, { readonly session_id: string; readonly description: string }>>;
  readonly tampered: Readonly<
    Record<
      string,
      {
        readonly file: string;
        readonly description: string;
        readonly python_aura_stdout: string;
        readonly aura_must_answer: { readonly exit?: number; readonly reason?: string; readonly hash_chain_valid?: boolean; readonly complete?: boolean };
      }
    >
  >;
}

/** Reads `test/fixtures/aura-py/index.json`. */
export function interopIndex(): InteropIndex {
  return JSON.parse(fs.readFileSync(path.join(AURA_PY, 'index.json'), 'utf8')) as InteropIndex;
}

/** The trail of a Python Aura session. */
export function pythonTrail(sessionId: string): string {
  return path.join(AURA_PY, 'sessions', `${sessionId}.jsonl`);
}
