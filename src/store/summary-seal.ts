/** The seal a summary file records: what `verify chain --summary` and `verify_session` check a trail against. */

import { AuraError } from '../errors.js';
import { objectOf } from '../spine/json-shape.js';
import type { ChainSeal } from '../spine/verify.js';
import { readJsonFile } from './json-file.js';

/**
 * The seal in a summary file: aura's `chain` (with its signed `seal`, when there is one), else
 * Python Aura's `event_count` alone.
 * @throws NotFoundError, ReadError; AuraError `READ_FAILED` for a summary that is not JSON or has no seal
 */
export function summarySeal(summaryPath: string): ChainSeal {
  return sealOfSummary(readJsonFile(summaryPath, 'summary').value, summaryPath);
}

/**
 * The seal in a summary already parsed (named `summaryPath` in messages).
 * @throws AuraError `READ_FAILED` for a summary that has no seal
 */
export function sealOfSummary(summary: unknown, summaryPath: string): ChainSeal {
  // Any shape may be on disk: what is not an object holds no seal.
  const record = objectOf(summary);
  const chain = objectOf(record['chain']);
  if (typeof chain['events'] === 'number') {
    const seal = record['seal'];
    const signed = seal === null || seal === undefined ? null : objectOf(seal);
    return {
      events: chain['events'],
      first_hash: stringOrNull(chain['first_hash']),
      head_hash: stringOrNull(chain['head_hash']),
      ...(signed === null || typeof signed['signature'] !== 'string'
        ? {}
        : {
            session_id: String(signed['session_id']),
            closed_at: stringOrNull(signed['closed_at']),
            key_id: stringOrNull(signed['key_id']),
            signature: signed['signature'],
            // The signed extent is the seal's own, so an edited `chain` block cannot pass.
            events: typeof signed['events'] === 'number' ? signed['events'] : -1,
            first_hash: stringOrNull(signed['first_hash']),
            head_hash: stringOrNull(signed['head_hash']),
          }),
    };
  }
  if (typeof record['event_count'] === 'number') return { events: record['event_count'] };
  throw new AuraError('READ_FAILED', `${summaryPath} has no seal: expected a "chain" object or an "event_count"`, { data: { path: summaryPath } });
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
