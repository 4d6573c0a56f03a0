import { describe, expect, it } from 'vitest';
import { checkPerKindLimit, deliver, DeliveryError } from '../../src/superauditor/deliver.js';
import { schemaErrors, trimmingCases } from '../helpers/superauditor.js';

describe('deliver', () => {
  describe('over every case of conformance/superauditor/v1/trimming.json (C1-C5)', () => {
    for (const c of trimmingCases()) {
      it(`${c.name}: ${c.why.slice(0, 80)}`, () => {
        const severityOf = (kind: string): 'critical' | 'warn' | 'info' => c.severity_map[kind] ?? 'info';
        const response = deliver(c.detector_output, { perKindLimit: c.per_kind_limit, severityOf });
        expect({
          findings: response.findings,
          total: response.total,
          counts_by_kind: response.counts_by_kind,
          counts_by_severity: response.counts_by_severity,
          capped_kinds: response.capped_kinds,
        }).toEqual(c.expect);
        expect(response.per_kind_limit).toBe(c.per_kind_limit);
        expect(schemaErrors(response)).toEqual([]);
      });
    }
  });

  it('carries _meta.server_version and _meta.superauditor "1.1" (C12), and the summary only when asked', () => {
    const response = deliver([{ kind: 'a' }], { severityOf: () => 'warn' });
    expect(response._meta).toEqual({ server_version: expect.stringMatching(/^\d+\.\d+\.\d+$/) as unknown, superauditor: '1.1' });
    expect(response.summary).toBe('1 finding(s). warn: a ×1.');
    expect(deliver([{ kind: 'a' }], { severityOf: () => 'warn', includeSummary: false })).not.toHaveProperty('summary');
    expect(response.per_kind_limit).toBe(5);
  });

  it('renders the summary from the trimmed set and names capped kinds', () => {
    const output = Array.from({ length: 4 }, (_, i) => ({ kind: 'stale', n: i }));
    const response = deliver(output, { perKindLimit: 2, severityOf: () => 'info' });
    expect(response.summary).toBe('2 finding(s). info: stale ×2. Capped at 2 per kind: stale (pull again with a higher per_kind_limit to see more).');
  });

  it('says identity_shared only when told to (C8)', () => {
    expect(deliver([], { severityOf: () => 'info', identityShared: true }).identity_shared).toBe(true);
    expect(deliver([], { severityOf: () => 'info' })).not.toHaveProperty('identity_shared');
  });

  it("moves a detector's own severity to detector_severity, and refuses a move that would overwrite (C11)", () => {
    const moved = deliver([{ kind: 'POLICY_VIOLATION', severity: 'high', tool: 'x' }], { severityOf: () => 'warn' });
    expect(moved.findings[0]).toEqual({ kind: 'POLICY_VIOLATION', severity: 'warn', tool: 'x', detector_severity: 'high' });
    expect(() => deliver([{ kind: 'K', severity: 'high', detector_severity: 'low' }], { severityOf: () => 'warn' })).toThrow(DeliveryError);
    const same = deliver([{ kind: 'K', severity: 'warn' }], { severityOf: () => 'warn' });
    expect(same.findings[0]).toEqual({ kind: 'K', severity: 'warn' });
  });

  it('refuses a per_kind_limit that is not an integer >= 1 (C14)', () => {
    for (const bad of [0, -1, 1.5, '5', true, Number.NaN, {}]) expect(() => checkPerKindLimit(bad), String(bad)).toThrow(DeliveryError);
    expect(checkPerKindLimit(1)).toBe(1);
    expect(checkPerKindLimit(undefined)).toBe(5);
  });
});
