/**
 * The findings channel's tools over the fleet store (`aura mcp --store URL`): the same four tools
 * as over a sessions folder, answered from what the store holds. Findings cover every host's
 * sessions plus the fleet's own probes (refused pushes, gaps in a host's seals, silent hosts);
 * never filtered by a read filter, as over a folder (SuperAuditor §7, C7).
 */

import { checkedSessionReport, summaryDisagreement } from '../audit/session-report.js';
import { AuraError } from '../errors.js';
import { fleetFindings, sessionsNamed } from '../store/postgres/fleet-findings.js';
import { storeCall } from '../store/postgres/connection.js';
import type { PostgresSource } from '../store/postgres/pg-source.js';
import { storedSessionMaterial, storedSessionStatus } from '../store/postgres/stored-status.js';
import { checkPerKindLimit, DeliveryError } from '../superauditor/deliver.js';
import { checkIncludeSummary, delivered, reportAnswer, scoped, sessionKeyArg, sessionLabelArg, ToolRefusal, type FindingsArgs, type FindingsTools, type ScopedFindings } from './findings-service.js';

/** The tools over one fleet store. */
export class StoreFindingsService implements FindingsTools {
  /**
   * @param shared a transport shared by callers who cannot be told apart (HTTP): no key means `identity_shared`
   * @param silentAfterMs a host whose last push is older than this is reported (`HOST_SILENT`)
   */
  constructor(
    private readonly source: PostgresSource,
    private readonly shared: boolean,
    private readonly silentAfterMs: number,
  ) {}

  /** As over a folder: a `session_key` is a label, and one that names no session scopes to nothing (`scope.sessions` empty). */
  async getSessionFindings(args: FindingsArgs): Promise<ScopedFindings> {
    const key = sessionLabelArg(args.session_key);
    checkIncludeSummary(args);
    let limit: number;
    try {
      limit = checkPerKindLimit(args.per_kind_limit);
    } catch (error) {
      if (error instanceof DeliveryError) throw new ToolRefusal(error.message);
      throw error;
    }
    const sql = this.source.sql;
    const [output, named] = await storeCall(this.source.label, () =>
      Promise.all([fleetFindings(sql, this.source.label, { sessionKey: key, perKindLimit: limit, silentAfterMs: this.silentAfterMs }), key === null ? Promise.resolve([]) : sessionsNamed(sql, key)]),
    );
    return scoped(delivered(output, args, this.shared && key === null), key, named);
  }

  async listSessions(): Promise<{ sessions: Record<string, unknown>[] }> {
    return { sessions: (await this.source.list()).map((s) => ({ ...s })) };
  }

  async getSessionReport(sessionKey: unknown): Promise<Record<string, unknown>> {
    const id = sessionKeyArg(sessionKey, true) as string;
    const material = await this.located(id);
    // Judged as verify_session judges it: against its seal and the keys its host pushed.
    const keys = await this.source.keysOf(id, null);
    try {
      return reportAnswer(id, checkedSessionReport(material, keys).report);
    } catch (error) {
      if (error instanceof AuraError && error.code === 'READ_FAILED') throw new ToolRefusal(`session ${id}: ${error.message}`);
      throw error;
    }
  }

  /** The chain verdict from the stored bytes, against the seal and the keys the hosts pushed, and how the stored summary disagrees with them. */
  async verifySession(sessionKey: unknown): Promise<Record<string, unknown>> {
    const id = sessionKeyArg(sessionKey, true) as string;
    if (!(await this.source.has(id))) throw new ToolRefusal(`no session ${id} in the store`);
    const stored = await this.source.session(id);
    const keys = await this.source.keysOf(id, null);
    const check = await storeCall(this.source.label, () => storedSessionStatus(this.source.sql, stored, keys));
    const mismatch = summaryDisagreement(storedSessionMaterial(id, stored.lines, stored.summary), check);
    return { ...check.chain, session_id: id, host: stored.host, status: check.status, signatures_status: check.signatures, ...(check.message === null ? {} : { problem: check.message }), ...(mismatch === null ? {} : { summary_mismatch: mismatch }) };
  }

  private async located(id: string): ReturnType<PostgresSource['material']> {
    try {
      return await this.source.material(id);
    } catch (error) {
      if (error instanceof AuraError && error.code === 'NOT_FOUND') throw new ToolRefusal(`no session ${id} in the store`);
      throw error;
    }
  }
}
