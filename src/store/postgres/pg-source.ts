/**
 * The fleet store as a {@link SessionSource}: what `sessions list`, `report show`, `report html`,
 * `aura ui`, `aura mcp` and `aura pull` read with `--store`. A session's material is its stored
 * lines (verbatim) and summary; the listing comes from what ingest recorded (the check of each
 * session's status, the detector's findings), so a list of ten thousand sessions is one query.
 */

import { NotFoundError } from '../../errors.js';
import type { KeyRing } from '../../spine/signing.js';
import { linesOfBytes } from '../../spine/trail-lines.js';
import { statusLabel, type SessionStatusName, type SignatureFacet, type StatusReason } from '../session-status.js';
import { checkedSessionId } from '../session-files.js';
import type { SessionListing } from '../session-list.js';
import type { SessionMaterial } from '../material.js';
import type { SessionOverview, SessionSource } from '../source.js';
import { openStore, storeCall, type Sql, type StoreConnection } from './connection.js';
import { requireSchema } from './schema.js';
import { hostKeys, readStoredSession, storedLines, storedPlace, type StoredSession } from './stored-status.js';

interface ListRow {
  session_id: string;
  agent_ref: string | null;
  opened_at: string | null;
  events: number | null;
  verdict: string | null;
  hash_chain_valid: boolean | null;
  complete: boolean | null;
  reason: string | null;
  status: string | null;
  signatures: string | null;
  closed: boolean;
  critical: number;
  warn: number;
  info: number;
}

/** The fleet store, read. */
export class PostgresSource implements SessionSource {
  readonly kind = 'store';

  private constructor(private readonly store: StoreConnection) {}

  /**
   * Opens the store at `url` for reading, checking its schema first.
   * @throws StoreError
   */
  static async open(url: string): Promise<PostgresSource> {
    const store = openStore(url, { applicationName: 'aura reader' });
    try {
      await requireSchema(store.sql, store.label);
    } catch (error) {
      await store.sql.end({ timeout: 1 });
      throw error;
    }
    return new PostgresSource(store);
  }

  get label(): string {
    return this.store.label;
  }

  /** The client, for the store's own readers (findings, verification). */
  get sql(): Sql {
    return this.store.sql;
  }

  async list(): Promise<SessionListing[]> {
    const rows = await this.rows();
    return rows.map(listingOf);
  }

  /** Chain status and findings as recorded at ingest; `aura verify store --store` re-checks them with the keys it is given. */
  async overview(): Promise<SessionOverview[]> {
    const rows = await this.rows();
    return rows.reverse().map((row) => {
      const listing = listingOf(row);
      return { ...listing, chain: statusLabel(listing) };
    });
  }

  /** Placed in its host's log as the store holds it, with its anchor copy's word at push and whether it was pushed closed: as `verify_session` and `verify store --store` judge it. */
  async material(sessionKey: string): Promise<SessionMaterial> {
    const stored = await this.session(sessionKey);
    const sql = this.store.sql;
    const sealPlace = await storeCall(this.label, () => storedPlace(sql, stored));
    const lines = storedLines(stored.lines, stored.pushedLines);
    return {
      sessionId: stored.sessionId,
      trailName: `${this.label}#${stored.sessionId}`,
      summaryName: `${this.label}#${stored.sessionId}.summary`,
      lines: lines === null ? null : () => linesOfBytes(lines),
      summaryText: stored.summary === null ? null : () => (stored.summary as Buffer).toString('utf8'),
      sealPlace,
      // A session followed while open is held by its host's writer, as the store's other readers take it.
      writer: stored.closed === null ? 'alive' : 'none',
      ...stored.anchor,
    };
  }

  /**
   * One session's stored bytes.
   * @throws InvalidSessionIdError; NotFoundError when the store has no such session; StoreError
   */
  async session(sessionKey: string): Promise<StoredSession> {
    checkedSessionId(sessionKey);
    const sql = this.store.sql;
    const stored = await storeCall(this.label, () => readStoredSession(sql, sessionKey));
    if (stored === null) throw new NotFoundError('session', `${this.label}#${sessionKey}`);
    return stored;
  }

  async keysOf(sessionId: string, reader: KeyRing | null): Promise<KeyRing | null> {
    if (reader !== null) return reader;
    const sql = this.store.sql;
    return storeCall(this.label, async () => {
      const [row] = await sql<{ host: string }[]>`SELECT host FROM aura.sessions WHERE session_id = ${sessionId}`;
      return row === undefined ? null : (await hostKeys(sql, this.label, row.host))(row.host);
    });
  }

  /** True when the store holds session `id` (a valid id). @throws StoreError */
  async has(id: string): Promise<boolean> {
    const sql = this.store.sql;
    return storeCall(this.label, async () => (await sql`SELECT 1 FROM aura.sessions WHERE session_id = ${id}`).length > 0);
  }

  async close(): Promise<void> {
    await this.store.sql.end({ timeout: 5 });
  }

  /** Every session with its latest check and its findings counted, oldest first. */
  private rows(): Promise<ListRow[]> {
    const sql = this.store.sql;
    return storeCall(this.label, async () => [
      ...(await sql<ListRow[]>`
        SELECT s.session_id, s.agent_ref, s.opened_at, k.events, k.verdict, k.hash_chain_valid, k.complete, k.reason, k.status, k.signatures, coalesce(k.closed, false) AS closed,
          coalesce(f.critical, 0)::int AS critical, coalesce(f.warn, 0)::int AS warn, coalesce(f.info, 0)::int AS info
        FROM aura.sessions s
        LEFT JOIN LATERAL (SELECT * FROM aura.checks WHERE session_id = s.session_id ORDER BY id DESC LIMIT 1) k ON true
        LEFT JOIN LATERAL (
          SELECT count(*) FILTER (WHERE severity = 'critical') AS critical, count(*) FILTER (WHERE severity = 'warn') AS warn, count(*) FILTER (WHERE severity = 'info') AS info
          FROM aura.findings WHERE check_id = k.id) f ON true
        ORDER BY s.opened_at NULLS FIRST, s.session_id`),
    ]);
  }
}

/** A row as the listing gives it: the status recorded by the check at ingest. */
function listingOf(row: ListRow): SessionListing {
  return {
    session_id: row.session_id,
    agent_ref: row.agent_ref,
    opened_at: row.opened_at,
    events: row.events ?? 0,
    verdict: row.verdict,
    hash_chain_valid: row.hash_chain_valid,
    state: row.closed ? 'closed' : 'open',
    status: (row.status ?? 'unreadable') as SessionStatusName,
    signatures: (row.signatures ?? 'unsigned') as SignatureFacet,
    reason: row.reason as StatusReason | null,
    findings: { critical: row.critical, warn: row.warn, info: row.info },
  };
}
