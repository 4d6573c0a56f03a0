/**
 * The findings channel's tools, apart from any transport (as the SDK's examples keep `todos.ts`
 * apart from `server.ts`): `get_session_findings` (SuperAuditor v1.1), `list_sessions`,
 * `get_session_report` and `verify_session`, over the sessions folders a caller may read. Every
 * answer is computed from the files at the call; nothing is ever written.
 *
 * Findings are never filtered by the caller's read filters (agent, project): the channel exists to
 * surface forgotten state, and slicing it by what the caller is looking at would hide exactly that
 * (SuperAuditor §7, C7). Authorization is another matter: a caller sees only its folders (C13).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { storeCrash, type Finding } from '../audit/detector.js';
import { checkedSessionReport, summaryDisagreement, type SessionReport } from '../audit/session-report.js';
import { severityOf } from '../audit/kinds.js';
import { AuraError, describeNaming } from '../errors.js';
import { valueExcerpt } from '../spine/json-shape.js';
import type { KeyRing } from '../spine/signing.js';
import { channelMaterial } from '../store/material.js';
import { listingOf } from '../store/session-list.js';
import { refusalOf, SESSION_ID_PATTERN, sessionFiles } from '../store/session-files.js';
import { folderSessionStatus, type SessionStatusRead } from '../store/session-status.js';
import { StoreFindings } from '../store/store-findings.js';
import { deliver, DeliveryError, type FindingsResponse } from '../superauditor/deliver.js';

// One index a folder and set of keys for the life of the process, so its work serves every
// connection (HTTP builds a service a request).
const storesByFolder = new Map<string, StoreFindings>();

function storeFor(folder: FindingsFolder, keys: KeyRing | null): StoreFindings {
  const { sessionsDir, sealLog } = folder;
  const anchorLog = folder.anchorLog ?? null;
  const name = [sessionsDir, sealLog, anchorLog ?? '', ...(keys?.list().map((key) => key.keyId).sort() ?? [])].join('\0');
  let store = storesByFolder.get(name);
  if (store === undefined) {
    store = new StoreFindings(sessionsDir, sealLog, { keys, watch: true, anchorLog });
    storesByFolder.set(name, store);
  }
  return store;
}

/** A sessions folder the findings channel reads: its seal log, that log's anchor copy (config `anchor_dir`) when it has one, and the keys to check signatures against. */
export interface FindingsFolder {
  readonly sessionsDir: string;
  readonly sealLog: string;
  readonly anchorLog?: string | null;
  readonly keys?: KeyRing | null;
  /**
   * The folder's name for a caller who may not learn where the server keeps it (a tenant of `aura
   * mcp --http`). When every folder has one, answers name the folder by it and its files, seal log
   * and anchor copy by what they are; without, by their paths (the local user's own).
   */
  readonly label?: string;
  /**
   * Why the folder is left out of this call (its files no longer reached where they were granted),
   * as the caller may be told it: said as a finding rather than answered as an empty folder.
   */
  readonly leftOut?: string;
}

type Labelled = FindingsFolder & { readonly label: string };

/** A refusal the MCP layer returns as a tool error (`isError: true`), never a protocol error. */
export class ToolRefusal extends Error {}

/** Arguments of `get_session_findings`, as received (untrusted). */
export interface FindingsArgs {
  readonly session_key?: unknown;
  readonly per_kind_limit?: unknown;
  readonly include_summary?: unknown;
}

/** The tools of the findings channel, over any source: the sessions folders, or the fleet store. */
export interface FindingsTools {
  /** `get_session_findings`. @throws ToolRefusal */
  getSessionFindings(args: FindingsArgs): ScopedFindings | Promise<ScopedFindings>;
  /** `list_sessions`. */
  listSessions(): { sessions: Record<string, unknown>[] } | Promise<{ sessions: Record<string, unknown>[] }>;
  /** `get_session_report`. @throws ToolRefusal */
  getSessionReport(sessionKey: unknown): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** `verify_session`. @throws ToolRefusal */
  verifySession(sessionKey: unknown): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/** A session key from outside: absent (when not required), or `aura_sess_` + 12 hex (nothing else can name a file). @throws ToolRefusal */
export function sessionKeyArg(value: unknown, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (required) throw new ToolRefusal('session_key is required: aura_sess_ followed by 12 lowercase hex digits');
    return null;
  }
  if (typeof value !== 'string' || !SESSION_ID_PATTERN.test(value)) throw new ToolRefusal(`session_key must be aura_sess_ followed by 12 lowercase hex digits, got ${valueExcerpt(value)}`);
  return value;
}

/** The answer of `get_session_report`, as `aura report show --json` gives it. */
export function reportAnswer(id: string, report: SessionReport): Record<string, unknown> {
  return { session_id: id, source: report.source, stored_by: report.stored_by, summary_agrees: report.disagreements.length === 0, disagreements: report.disagreements, audit_report: report.summary.audit_report };
}

/** A `session_key` from outside for `get_session_findings`: absent, or a label (a session id, or a key a session declared). @throws ToolRefusal */
export function sessionLabelArg(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ToolRefusal(`session_key must be a string (a session id or the key a session declared), got ${valueExcerpt(value)}`);
  return value;
}

/** @throws ToolRefusal for an `include_summary` that is not a boolean */
export function checkIncludeSummary(args: FindingsArgs): void {
  if (args.include_summary !== undefined && typeof args.include_summary !== 'boolean') throw new ToolRefusal(`include_summary must be true or false, got ${valueExcerpt(args.include_summary)}`);
}

/** A findings response, with the sessions a `session_key` named when one was given. */
export type ScopedFindings = FindingsResponse & { readonly scope?: { readonly session_key: string; readonly sessions: readonly string[] } };

/** The response with its scope: the key asked for and the sessions it named (none is an answer too). */
export function scoped(response: FindingsResponse, asked: string | null, named: readonly string[]): ScopedFindings {
  return asked === null ? response : { ...response, scope: { session_key: asked, sessions: named } };
}

/** The delivered response, a refusal of the seam turned into a tool error. @throws ToolRefusal */
export function delivered(output: readonly Finding[], args: FindingsArgs, identityShared: boolean): FindingsResponse {
  checkIncludeSummary(args);
  try {
    return deliver(output, { perKindLimit: args.per_kind_limit, includeSummary: args.include_summary !== false, identityShared, severityOf });
  } catch (error) {
    if (error instanceof DeliveryError) throw new ToolRefusal(error.message);
    throw error;
  }
}

/** The tools over a set of sessions folders. */
export class FindingsService implements FindingsTools {
  // Findings, the listing and verify_session are all judged with the folder's keys: one status a session.
  private readonly stores: readonly StoreFindings[];
  private readonly keys: KeyRing | null;
  /** How answers name each folder beside its sessions when the caller reads several. */
  private readonly dirNames: readonly string[];
  /** The folders by their labels, when the caller may not learn the server's paths; else null. */
  private readonly labelled: readonly Labelled[] | null;
  /** A finding for each folder left out of this call. */
  private readonly leftOut: readonly Finding[];
  /** Whether the caller reads several folders (those left out too): answers then name each. */
  private readonly several: boolean;

  /**
   * @param folders the sessions folders this caller may read, each with its seal log, and the keys
   *   statuses are checked against (the first folder's; none leaves signatures unchecked)
   * @param shared a transport shared by callers who cannot be told apart (HTTP): no key means `identity_shared`
   * @param confinedTo the one session this caller may read (a proxy connection reads its own session:
   *   its findings, and store findings about it or about no session in particular), else null (SuperAuditor §7, C13)
   */
  constructor(
    folders: readonly FindingsFolder[],
    private readonly shared: boolean,
    private readonly confinedTo: string | null = null,
  ) {
    this.keys = folders[0]?.keys ?? null;
    const read = folders.filter((f) => f.leftOut === undefined);
    this.stores = read.map((f) => storeFor(f, this.keys));
    this.dirNames = read.map((f) => f.label ?? f.sessionsDir);
    const labelled = read.flatMap((f) => (f.label === undefined ? [] : [{ ...f, label: f.label }]));
    this.labelled = labelled.length > 0 && labelled.length === read.length ? labelled : null;
    this.several = folders.length > 1;
    this.leftOut = folders.flatMap((f) => (f.leftOut === undefined ? [] : [storeCrash(f.leftOut, this.several ? { sessions_dir: f.label ?? f.sessionsDir } : {})]));
  }

  /**
   * `get_session_findings`. A `session_key` is an opaque label (SuperAuditor §7): it names the
   * session with that id and every session that declared it, and is only ever compared. A key
   * that names no readable session scopes to nothing: the answer holds the store findings alone
   * and says so in `scope.sessions`, an empty list.
   * @throws ToolRefusal
   */
  async getSessionFindings(args: FindingsArgs): Promise<ScopedFindings> {
    return this.answered(async () => {
      const asked = sessionLabelArg(args.session_key);
      // Another session's id names a session this connection may not read: refused, not answered empty (C13).
      if (this.confinedTo !== null && asked !== null && SESSION_ID_PATTERN.test(asked) && asked !== this.confinedTo) throw new ToolRefusal(`this connection may read only its own session ${this.confinedTo}, not ${asked}`);
      const key = asked ?? this.confinedTo;
      checkIncludeSummary(args);
      const readable = (f: Finding): boolean => this.confinedTo === null || f['session_id'] === undefined || f['session_id'] === this.confinedTo;
      // A folder that cannot be read is said as a finding, beside what the others hold (SuperAuditor §5.4).
      const answers = await Promise.all(
        this.stores.map((store, i) =>
          store.findings(key).catch((error: unknown) => {
            if (error instanceof ToolRefusal) throw error;
            return { findings: [storeCrash(this.told(error), this.folderOf(i))], named: [] };
          }),
        ),
      );
      const output = [...this.leftOut, ...answers.flatMap((answer, i) => answer.findings.filter(readable).map((f) => ({ ...f, ...this.folderOf(i) })))];
      const named = asked === null ? [] : answers.flatMap((answer) => answer.named).filter((id) => this.confinedTo === null || id === this.confinedTo);
      return scoped(delivered(output, args, this.shared && key === null), asked, named);
    });
  }

  /** `list_sessions`: every readable session, with its status, verdict and state. */
  async listSessions(): Promise<{ sessions: Record<string, unknown>[] }> {
    return this.answered(async () => {
      const listings = await Promise.all(this.stores.map(async (store) => listingOf(await store.index.sessions(), store.index.sealLogView)));
      return { sessions: listings.flatMap((rows, i) => rows.map((s) => ({ ...s, ...this.folderOf(i) }))) };
    });
  }

  /** `get_session_report`: the report `aura report show --json` gives, judged with the keys and seal log verify_session uses. @throws ToolRefusal */
  async getSessionReport(sessionKey: unknown): Promise<Record<string, unknown>> {
    return this.answered(async () => {
      const { store, id } = await this.located(sessionKey);
      return reportAnswer(id, checkedSessionReport(channelMaterial(sessionFiles(store.sessionsDir, id), store.index.sealLogView), this.keys).report);
    });
  }

  /** `verify_session`: the session's status, with its chain report, and how its summary disagrees with its trail, as `verify chain <id>` gives them. @throws ToolRefusal */
  async verifySession(sessionKey: unknown): Promise<Record<string, unknown>> {
    return this.answered(async () => {
      const { store, id } = await this.located(sessionKey);
      const files = sessionFiles(store.sessionsDir, id);
      const refusal = refusalOf(files.trail);
      if (refusal !== null) throw new ToolRefusal(`session ${id}: ${path.basename(files.trail)} is not read: ${refusal}`);
      let status: ReturnType<typeof folderSessionStatus>;
      try {
        // The events are kept for the report only when there is a summary to compare it with.
        status = folderSessionStatus(store.sessionsDir, id, { keys: this.keys, log: store.index.sealLogView, collectEvents: fs.existsSync(files.summary) });
      } catch (error) {
        if (error instanceof AuraError) throw new ToolRefusal(`session ${id}: ${this.told(error)}`);
        throw error;
      }
      if (status.chain === null) throw new ToolRefusal(`session ${id} has no readable trail (${status.status}): ${status.error === undefined ? (status.message ?? status.status) : this.told(status.error)}`);
      const mismatch = this.summaryMismatch(store, files, status);
      return {
        ...status.chain,
        session_id: id,
        path: path.basename(files.trail),
        status: status.status,
        signatures_status: status.signatures,
        ...(status.reason === null ? {} : { status_reason: status.reason, problem: status.message }),
        ...(mismatch === null ? {} : { summary_mismatch: mismatch }),
      };
    });
  }

  /** How the session's summary disagrees with its trail (summaryDisagreement), a summary it cannot read named as the caller may be told it; else null. */
  private summaryMismatch(store: StoreFindings, files: ReturnType<typeof sessionFiles>, status: SessionStatusRead): string | null {
    const material = channelMaterial(files, store.index.sealLogView);
    const read = material.summaryText;
    if (read === null) return null;
    const summaryText = (): string => {
      try {
        return read();
      } catch (error) {
        throw new Error(this.told(error));
      }
    };
    return summaryDisagreement({ ...material, summaryText }, status);
  }

  private async located(sessionKey: unknown): Promise<{ store: StoreFindings; id: string }> {
    const id = sessionKeyArg(sessionKey, true) as string;
    for (const store of this.stores) if (await store.hasSession(id)) return { store, id };
    throw new ToolRefusal(`no session ${id} in the sessions this caller may read`);
  }

  /** The folder of the `i`th store, named beside what it holds when the caller reads several. */
  private folderOf(i: number): { sessions_dir?: string } {
    return this.several ? { sessions_dir: this.dirNames[i] as string } : {};
  }

  /** The answer of a tool, a read that failed refused with what went wrong as the caller may be told it. @throws ToolRefusal */
  private async answered<T>(compute: () => Promise<T>): Promise<T> {
    try {
      return await compute();
    } catch (error) {
      if (error instanceof ToolRefusal) throw error;
      throw new ToolRefusal(this.told(error));
    }
  }

  /**
   * What went wrong reading, as the caller is told it: one who knows its folders by their labels
   * learns which file, never where it is; the server's log (stderr) keeps the path for its operator.
   */
  private told(error: unknown): string {
    const said = error instanceof Error ? error.message : String(error);
    const folders = this.labelled;
    if (folders === null) return said;
    process.stderr.write(`aura mcp: ${said}\n`);
    return describeNaming(error, (file) => nameOf(file, folders));
  }
}

/** A file of the server as a caller who knows its folders by their labels is told of it. */
function nameOf(file: string, folders: readonly Labelled[]): string {
  for (const { sessionsDir, sealLog, anchorLog, label } of folders) {
    if (file === sessionsDir) return `the sessions folder ${label}`;
    if (file === sealLog) return `the seal log of ${label}`;
    if (file === anchorLog) return `the anchor copy of the seal log of ${label}`;
    if (file.startsWith(sessionsDir + path.sep)) return path.relative(sessionsDir, file);
  }
  // None of its folders' files: its name alone says which without saying where.
  return path.basename(file);
}

