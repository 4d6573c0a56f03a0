/**
 * The evidence of a closed session: its trail verified from disk, the seal (signed when a key is
 * configured) logged before anything is committed, then the summary and spans (DESIGN §2.3, §3).
 */

import { ExportError, TrailWriteError } from '../errors.js';
import type { CloseAhead } from '../export/close-ahead.js';
import type { LiveExport } from '../export/live-export.js';
import { sealText, type Signer } from '../spine/signing.js';
import { appendSeal } from '../store/seal-log.js';
import type { SessionFiles } from '../store/session-files.js';
import type { SessionAgent, SessionResult } from './types.js';

/** The closed session whose evidence is built. */
export interface ClosedSession {
  readonly agent: SessionAgent;
  readonly files: SessionFiles;
  readonly traceId: string;
  readonly snapshotHash: string;
  readonly exportOnClose: boolean;
  readonly signer: Signer | null;
  readonly live: LiveExport | null;
  /** The evidence pass made ahead of close, when the session grew long enough to start one. */
  readonly ahead: CloseAhead | null;
}

/** @throws ExportError (the trail is kept whole), ReadError */
export async function exportClosed(closed: ClosedSession): Promise<SessionResult> {
  const { agent, files, signer } = closed;
  const sessionId = files.sessionId;
  const [otel, ahead] = await Promise.all([closed.live?.close(), closed.ahead?.finish()]);
  const { paths } = agent.config;
  // Loaded at close only: the audit and the exporters are most of what a session's modules weigh,
  // and a short process that only appends (a Claude Code hook) never needs them.
  const { exportSession } = await import('../export/session-export.js');
  const exported = exportSession(files, closed.exportOnClose, {
    exportPii: agent.config.values['identity_export_pii'] === true,
    spans: { captureToolContent: agent.config.settings.otel.capture_tool_content },
    ...(otel === undefined ? {} : { live: otel }),
    ...(ahead === undefined || ahead === null ? {} : { ahead }),
    seal: (extent) => {
      const unsigned = { session_id: sessionId, ...extent };
      return { ...unsigned, key_id: signer?.keyId ?? null, signature: signer === null ? null : signer.sign(sealText(unsigned)) };
    },
    // The seal is logged before the summary is committed: a failed export still leaves the seal.
    // The anchor copy first: when it cannot be written (it is often off this machine), the log
    // does not seal what the copy lacks, which every reader would take for an entry added after
    // the fact.
    beforeCommit: (summary) => {
      if (summary.seal === null) return;
      for (const log of [paths.anchorLog, paths.sealLog]) {
        if (log === null) continue;
        try {
          appendSeal(log, summary.seal, signer);
        } catch (error) {
          throw new ExportError(sessionId, log, error instanceof TrailWriteError ? error.cause : error);
        }
      }
    },
  });
  return {
    session_id: sessionId,
    trace_id: closed.traceId,
    snapshot_hash: closed.snapshotHash,
    open_snapshot_hash: closed.snapshotHash,
    log_path: files.trail,
    summary: exported.summary,
    audit_report: exported.summary.audit_report,
    conformance: exported.summary.conformance,
    chain: exported.trail.chain,
    exports: exported.written === null ? { jsonl: files.trail } : { jsonl: files.trail, ...exported.written },
  };
}
