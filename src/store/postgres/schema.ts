/**
 * The fleet store's schema, as versioned migrations applied in order by `aura store init`. Each
 * migration runs once, in one transaction, and is recorded in `aura.schema_version`; readers and
 * pushers refuse a store whose schema is older (run `aura store init`) or newer (a newer aura
 * wrote it) than the one they know.
 *
 * The store is append-only: every table refuses UPDATE, DELETE and TRUNCATE with a trigger, so
 * even a role granted more than it should be cannot rewrite evidence by mistake. A superuser can
 * still disable a trigger; `aura verify store --store` catches what such a hand does, from the
 * stored bytes, seals and signatures (store/postgres/verify.ts).
 *
 * Lines are kept verbatim (`bytea`, with their newline when they had one: a trail rebuilt from
 * the rows is the pushed file byte for byte) with the fields queries need beside them.
 */

import { StoreError } from '../../errors.js';
import { storeCall, transaction, type Sql, type Tx } from './connection.js';

/** One step of the schema. */
interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}

const APPEND_ONLY_TABLES = ['sessions', 'lines', 'closes', 'checks', 'findings', 'refusals', 'pushes', 'host_keys', 'schema_version'];

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'fleet store: sessions, verbatim lines, closes, checks, findings, refusals, pushes, host keys',
    statements: [
      `CREATE TABLE aura.sessions (
        session_id text PRIMARY KEY CHECK (session_id ~ '^aura_sess_[0-9a-f]{12}$'),
        host text NOT NULL,
        agent_ref text,
        opened_at text,
        session_key text,
        first_pushed_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX sessions_by_key ON aura.sessions (session_key) WHERE session_key IS NOT NULL`,
      `CREATE TABLE aura.lines (
        session_id text NOT NULL REFERENCES aura.sessions,
        line_no integer NOT NULL CHECK (line_no >= 1),
        line bytea NOT NULL,
        event_id text,
        kind text,
        ts text,
        prev_hash text,
        content_hash text,
        PRIMARY KEY (session_id, line_no)
      )`,
      `CREATE TABLE aura.closes (
        session_id text PRIMARY KEY REFERENCES aura.sessions,
        lines integer NOT NULL,
        trail_sha256 text NOT NULL,
        summary bytea,
        summary_sha256 text,
        seal_entry bytea,
        seal_hash text,
        seal_prev_hash text,
        host text NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX closes_seal_hash ON aura.closes (seal_hash)`,
      // The gap probe (a seal linking to one the store lacks) reads the links off two narrow indexes.
      `CREATE INDEX closes_seal_prev ON aura.closes (seal_prev_hash) INCLUDE (session_id, host) WHERE seal_prev_hash IS NOT NULL`,
      `CREATE TABLE aura.checks (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL REFERENCES aura.sessions,
        lines integer NOT NULL,
        closed boolean NOT NULL,
        trail_sha256 text NOT NULL,
        status text NOT NULL,
        verdict text,
        events integer NOT NULL,
        hash_chain_valid boolean NOT NULL,
        complete boolean NOT NULL,
        reason text,
        signatures text NOT NULL,
        detail jsonb NOT NULL,
        checked_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (session_id, lines, closed)
      )`,
      `CREATE INDEX checks_latest ON aura.checks (session_id, id DESC)`,
      `CREATE TABLE aura.findings (
        check_id bigint NOT NULL REFERENCES aura.checks,
        ord integer NOT NULL,
        session_id text NOT NULL,
        kind text NOT NULL,
        severity text NOT NULL,
        store_level boolean NOT NULL,
        finding jsonb NOT NULL,
        PRIMARY KEY (check_id, ord)
      )`,
      `CREATE INDEX findings_by_kind ON aura.findings (kind, session_id COLLATE "C", ord)`,
      `CREATE TABLE aura.refusals (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text NOT NULL,
        host text NOT NULL,
        reason text NOT NULL,
        message text NOT NULL,
        trail_sha256 text,
        refused_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE TABLE aura.pushes (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        host text NOT NULL,
        sessions integer NOT NULL,
        lines integer NOT NULL,
        pushed_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE INDEX pushes_host ON aura.pushes (host, pushed_at)`,
      `CREATE TABLE aura.host_keys (
        key_id text PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{16}$'),
        public_key text NOT NULL,
        host text NOT NULL,
        first_pushed_at timestamptz NOT NULL DEFAULT now()
      )`,
      `CREATE FUNCTION aura.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'the aura store is append-only: % on %.% is refused', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
            USING ERRCODE = 'insufficient_privilege';
        END
      $$`,
      ...APPEND_ONLY_TABLES.flatMap((table) => [
        `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON aura.${table} FOR EACH ROW EXECUTE FUNCTION aura.refuse_change()`,
        `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON aura.${table} FOR EACH STATEMENT EXECUTE FUNCTION aura.refuse_change()`,
      ]),
    ],
  },
  {
    version: 2,
    name: "lines need their session once a statement, not once a row: a COPY's server cost was twice a plain COPY's",
    statements: [
      // The foreign key looked up and share-locked the session's row for every line. Sessions are
      // never deleted (the append-only trigger), so all a line needs is that its session is there
      // when it goes in: checked once a statement, over the statement's new lines.
      `ALTER TABLE aura.lines DROP CONSTRAINT lines_session_id_fkey`,
      `CREATE FUNCTION aura.lines_need_session() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
          orphan text;
        BEGIN
          SELECT n.session_id INTO orphan FROM (SELECT DISTINCT session_id FROM new_lines) n
            WHERE NOT EXISTS (SELECT 1 FROM aura.sessions s WHERE s.session_id = n.session_id) LIMIT 1;
          IF orphan IS NOT NULL THEN
            RAISE EXCEPTION 'lines of session % have no row in aura.sessions', orphan USING ERRCODE = 'foreign_key_violation';
          END IF;
          RETURN NULL;
        END
      $$`,
      `CREATE TRIGGER lines_need_session AFTER INSERT ON aura.lines REFERENCING NEW TABLE AS new_lines FOR EACH STATEMENT EXECUTE FUNCTION aura.lines_need_session()`,
    ],
  },
  {
    version: 3,
    name: 'lines: no per-statement session check, no copies of the chain links; the server does half the work a line',
    statements: [
      // The check kept every new line in a transition table (its bytes too) to look for its
      // session: 3.4 us of the server's CPU a line, more than half of what the line itself cost.
      // Pushing writes the session's row first, in the line's own transaction; a line without
      // one can only come from a hand on the database, and `verify store --store` reports it.
      `DROP TRIGGER lines_need_session ON aura.lines`,
      `DROP FUNCTION aura.lines_need_session()`,
      // The links are in the line's bytes, which every check reads; copies beside them served no
      // query and cost a tenth of the row.
      `ALTER TABLE aura.lines DROP COLUMN prev_hash, DROP COLUMN content_hash`,
    ],
  },
  {
    version: 4,
    name: "lines: each session's first line indexed, so the findings channel sees lines deleted or naming another session without reading the fleet",
    statements: [
      // A superuser's hand is caught by `verify store --store`, which reads every byte. The findings
      // channel answers from two small indexes instead, one entry a session, kept by the database
      // whoever writes (triggers off or not): a session without its first line (its lines deleted),
      // and, normally empty, one whose first line names another session (rows copied or renamed).
      // The function is run for first lines only (the predicate's first term), once a session at
      // push. It is declared immutable though convert_from is only stable: it is, for one database
      // encoding. A line that is not JSON names no session here; its chain is broken all the same.
      `CREATE FUNCTION aura.line_session_id(line bytea) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
        BEGIN
          RETURN convert_from(line, 'UTF8')::jsonb ->> 'session_id';
        EXCEPTION WHEN OTHERS THEN
          RETURN NULL;
        END
      $$`,
      `CREATE INDEX lines_first ON aura.lines (session_id) WHERE line_no = 1`,
      `CREATE INDEX lines_naming_another ON aura.lines (session_id) WHERE line_no = 1 AND aura.line_session_id(line) <> session_id`,
    ],
  },
  {
    version: 5,
    name: 'checks: each is of the lines the store holds, and of its close record when closed: a pusher cannot check another host\'s session anew; a refusal recorded once',
    statements: [
      // Readers show a session as its latest check says. A push writes a session's lines, its close
      // record and then its check, in one transaction; anyone else with the ingest role could add a
      // check of their own after it (a verdict of pass for a failing session), since a check names
      // an extent (lines, closed) the unique key had not seen. The extent must be the store's own:
      // its lines as stored, closed only with a close record of as many lines, open only without
      // one. So the extent the latest check names is always the one pushed, and has its check.
      // Run with the definer's rights and a fixed search path: what it reads does not hang on the
      // caller's grants, and no caller can swap what its names resolve to.
      `CREATE FUNCTION aura.check_of_stored_extent() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
          stored integer;
          closed_lines integer;
        BEGIN
          SELECT max(line_no) INTO stored FROM aura.lines WHERE session_id = NEW.session_id;
          SELECT lines INTO closed_lines FROM aura.closes WHERE session_id = NEW.session_id;
          IF coalesce(stored, 0) <> NEW.lines OR (NEW.closed AND closed_lines IS DISTINCT FROM NEW.lines) OR (NOT NEW.closed AND closed_lines IS NOT NULL) THEN
            RAISE EXCEPTION 'a check of session % for % lines (closed: %) where the store holds % lines (closed: %)', NEW.session_id, NEW.lines, NEW.closed, coalesce(stored, 0), closed_lines IS NOT NULL
              USING ERRCODE = 'check_violation';
          END IF;
          RETURN NEW;
        END
      $$`,
      `CREATE TRIGGER checks_of_stored_extent BEFORE INSERT ON aura.checks FOR EACH ROW EXECUTE FUNCTION aura.check_of_stored_extent()`,
      // And a close record of a session stored before this transaction (pushed open) is of the bytes
      // stored: its digest theirs. The ingest role reads no line bytes, so no pusher can close
      // another host's open session (then check it as it likes). A session this transaction stores
      // whole, the common push, is its pusher's own: its bytes are not read again.
      `CREATE FUNCTION aura.close_of_stored_lines() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        DECLARE
          stored integer;
          digest text;
        BEGIN
          IF EXISTS (SELECT 1 FROM aura.sessions WHERE session_id = NEW.session_id AND xmin = pg_current_xact_id()::xid) THEN
            RETURN NEW;
          END IF;
          SELECT count(*), encode(sha256(coalesce(string_agg(line, ''::bytea ORDER BY line_no), ''::bytea)), 'hex') INTO stored, digest FROM aura.lines WHERE session_id = NEW.session_id;
          IF stored <> NEW.lines OR digest <> NEW.trail_sha256 THEN
            RAISE EXCEPTION 'a close record of session % for % lines that are not the % stored', NEW.session_id, NEW.lines, stored
              USING ERRCODE = 'check_violation';
          END IF;
          RETURN NEW;
        END
      $$`,
      `CREATE TRIGGER closes_of_stored_lines BEFORE INSERT ON aura.closes FOR EACH ROW EXECUTE FUNCTION aura.close_of_stored_lines()`,
      // A refused session is refused again at every push of its host: recorded once, so the
      // findings channel's cap is not spent on one refusal while a new one waits behind it.
      `CREATE FUNCTION aura.refusal_once() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
        BEGIN
          IF EXISTS (SELECT 1 FROM aura.refusals WHERE session_id = NEW.session_id AND host = NEW.host AND reason = NEW.reason AND trail_sha256 IS NOT DISTINCT FROM NEW.trail_sha256) THEN
            RETURN NULL;
          END IF;
          RETURN NEW;
        END
      $$`,
      `CREATE INDEX refusals_by_session ON aura.refusals (session_id)`,
      `CREATE TRIGGER refusals_once BEFORE INSERT ON aura.refusals FOR EACH ROW EXECUTE FUNCTION aura.refusal_once()`,
    ],
  },
  {
    version: 6,
    name: "closes: whether the host read its seal log, and what the log's anchor copy said of the session, when it was pushed",
    statements: [
      // aura logs every seal before it writes the summary, so a host's folder calls a session whose
      // summary is sealed and whose log has no entry for it unsealed (the entry was removed). A close
      // record without an entry could not say so: push --follow stored the sessions that closed
      // while it ran without reading the log. `log_read` is the pushing host's word that its log was
      // read and held no entry; a session pushed before this keeps the verdict of its summary's seal.
      // In a folder whose seal log is anchored, a seal the copy disagrees with, or one only the
      // summary holds, does not count, and the store cannot read a host's copy (it is kept where
      // the host cannot rewrite it, often off the network). The pushing host compares its log with the copy as its own readers do, and
      // the close record keeps that word beside the seal-log entry, for every reader of the store.
      // A session pushed before this was checked against no copy: it stays as it was judged.
      `ALTER TABLE aura.closes ADD COLUMN log_read boolean NOT NULL DEFAULT false,
        ADD COLUMN anchored boolean NOT NULL DEFAULT false, ADD COLUMN anchor_disagreement text,
        ADD CONSTRAINT closes_anchor_disagreement CHECK (anchored OR anchor_disagreement IS NULL)`,
    ],
  },
];

/** The schema version this aura reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** Roles `store init` grants to. */
export interface StoreRoles {
  /** May insert and read what pushing needs; never update, delete or truncate. */
  readonly ingest: string;
  /** May only read. */
  readonly reader: string;
}

/** The default role names. */
export const DEFAULT_ROLES: StoreRoles = { ingest: 'aura_ingest', reader: 'aura_reader' };

/** What `store init` did. */
export interface InitReport {
  readonly from_version: number;
  readonly to_version: number;
  readonly applied: readonly { readonly version: number; readonly name: string }[];
  readonly roles: StoreRoles;
}

// Serialises concurrent `store init` runs against one database.
const MIGRATION_LOCK = 0x61757261;

/**
 * Creates or migrates the schema, then creates the two roles (when missing) and grants them what
 * they may do. Needs a role that may create schemas and roles (the database owner, an admin).
 * @throws StoreError
 */
export async function initStore(sql: Sql, label: string, roles: StoreRoles = DEFAULT_ROLES): Promise<InitReport> {
  for (const role of [roles.ingest, roles.reader]) {
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) throw new StoreError(label, 'failed', `role name ${JSON.stringify(role)} is not a plain lowercase SQL identifier`);
  }
  // The reader's grants take away the ingest role's inserts: one role cannot be both.
  if (roles.ingest === roles.reader) throw new StoreError(label, 'failed', `the ingest and reader roles are both ${roles.ingest}: a reader may not insert, so they must be two roles`);
  // Answered first, under the deadline every command's first query has: a migration may take long, its connection may not.
  await storeCall(label, () => withinDeadline(sql`SELECT 1`, label));
  return storeCall(label, () =>
    transaction(sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      await tx`CREATE SCHEMA IF NOT EXISTS aura`;
      const from = await appliedVersion(tx);
      if (from > SCHEMA_VERSION) throw new StoreError(label, 'schema_newer', `its schema is version ${from}, newer than this aura knows (${SCHEMA_VERSION}): upgrade aura`);
      if (from === 0) {
        await tx`CREATE TABLE aura.schema_version (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`;
      }
      const applied: { version: number; name: string }[] = [];
      for (const migration of MIGRATIONS.filter((m) => m.version > from)) {
        for (const statement of migration.statements) await tx.unsafe(statement);
        await tx`INSERT INTO aura.schema_version (version, name) VALUES (${migration.version}, ${migration.name})`;
        applied.push({ version: migration.version, name: migration.name });
      }
      await grantRoles(tx, roles);
      await keepVisible(tx);
      return { from_version: from, to_version: SCHEMA_VERSION, applied, roles };
    }),
  );
}

async function appliedVersion(sql: Sql | Tx): Promise<number> {
  const [table] = await sql<{ present: boolean }[]>`SELECT to_regclass('aura.schema_version') IS NOT NULL AS present`;
  if (table?.present !== true) return 0;
  const [row] = await sql<{ version: number | null }[]>`SELECT max(version) AS version FROM aura.schema_version`;
  return row?.version ?? 0;
}

/**
 * The ingest role reads only what pushing needs: which sessions are stored and their digests,
 * line counts and heads, never another host's line bytes or summaries.
 */
async function grantRoles(tx: Tx, roles: StoreRoles): Promise<void> {
  for (const role of [roles.ingest, roles.reader]) {
    await tx.unsafe(`DO $$ BEGIN CREATE ROLE ${role} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await tx.unsafe(`GRANT USAGE ON SCHEMA aura TO ${role}`);
  }
  const ingest = roles.ingest;
  await tx.unsafe(`GRANT SELECT ON aura.schema_version, aura.sessions, aura.checks, aura.host_keys TO ${ingest}`);
  await tx.unsafe(`GRANT SELECT (session_id, line_no) ON aura.lines TO ${ingest}`);
  await tx.unsafe(`GRANT SELECT (session_id, lines, trail_sha256, summary_sha256, seal_hash) ON aura.closes TO ${ingest}`);
  await tx.unsafe(`GRANT INSERT ON aura.sessions, aura.lines, aura.closes, aura.checks, aura.findings, aura.refusals, aura.pushes, aura.host_keys TO ${ingest}`);
  await tx.unsafe(`REVOKE UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA aura FROM ${ingest}`);
  await tx.unsafe(`GRANT SELECT ON ALL TABLES IN SCHEMA aura TO ${roles.reader}`);
  // Pushing keeps the index that calls it; reading asks it of the index.
  await tx.unsafe(`GRANT EXECUTE ON FUNCTION aura.line_session_id(bytea) TO ${ingest}, ${roles.reader}`);
  await tx.unsafe(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA aura FROM ${roles.reader}`);
}

/**
 * The findings channel and `sessions list` read the store through index-only scans, which visit
 * the table for every row whose page the visibility map does not yet show all-visible. Only a
 * vacuum sets those bits, and autovacuum comes to a table that is only inserted into after it
 * grew by a fifth: 20,000 sessions pushed after the first 100,000, each a row the next call
 * fetches from the table (at 10,000 sessions, 3 ms a call vacuumed, 35-60 ms not). These tables
 * are vacuumed after a hundredth instead; a vacuum of an append-only table reads only its new
 * pages. Storage settings, not the schema's shape: set again at every `store init`.
 */
async function keepVisible(tx: Tx): Promise<void> {
  for (const table of ['sessions', 'lines', 'closes', 'checks', 'findings']) {
    await tx.unsafe(`ALTER TABLE aura.${table} SET (autovacuum_vacuum_insert_scale_factor = 0.01)`);
  }
}

// The connection's own timeout covers a server that does not answer; not one that takes the
// connection and drops it (a tunnel whose far end is down, a port that is not PostgreSQL's), which
// the client retries without end.
const FIRST_ANSWER_MS = 15_000;

function withinDeadline<T>(query: Promise<T>, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreError(label, 'unreachable', `cannot connect (no answer within ${FIRST_ANSWER_MS / 1000} s: is it a PostgreSQL server, and is it up?)`)), FIRST_ANSWER_MS);
  });
  return Promise.race([query, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Checks that the store's schema is the one this aura knows, before reading or pushing.
 * @throws StoreError `schema_missing` (run `aura store init`) or `schema_newer`
 */
export async function requireSchema(sql: Sql, label: string): Promise<void> {
  const version = await storeCall(label, () => withinDeadline(appliedVersion(sql), label));
  if (version === 0) throw new StoreError(label, 'schema_missing', 'it has no aura schema yet: run aura store init --store URL (with a role that may create it)');
  if (version < SCHEMA_VERSION) throw new StoreError(label, 'schema_missing', `its schema is version ${version}, older than this aura's (${SCHEMA_VERSION}): run aura store init --store URL to migrate it`);
  if (version > SCHEMA_VERSION) throw new StoreError(label, 'schema_newer', `its schema is version ${version}, newer than this aura knows (${SCHEMA_VERSION}): upgrade aura`);
}
