/** `aura export <id>` and `aura export-otel <id>`: a session's evidence files. */

import * as fs from 'node:fs';
import { summaryDeclaredSteps } from '../audit/session-report.js';
import type { AuraConfig } from '../config/config.js';
import { spanSourceOf } from '../export/otel.js';
import { resolveOtlpTarget, sendSpans, type OtlpFlags } from '../export/otlp-http.js';
import { exportSession, exportSpans } from '../export/session-export.js';
import { summaryText } from '../export/summary.js';
import { AuraError } from '../errors.js';
import { objectOf } from '../spine/json-shape.js';
import { readJsonFile } from '../store/json-file.js';
import type { SealLogView } from '../store/seal-log.js';
import { folderSessionStatus, sealLogView, statusLabel, type SessionStatus } from '../store/session-status.js';
import { assertReadable, resolveSessionKey } from '../store/session-files.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `export`. */
export interface ExportOptions {
  /** Build the summary and spans again from the trail even when a summary exists. */
  readonly rebuild?: boolean;
}

/**
 * Prints the session's summary. When it has none (its export failed, or its writer was killed)
 * or with `--rebuild`, builds summary and spans from the trail and commits them first.
 */
export function exportCommand(sessionKey: string, options: ExportOptions, config: AuraConfig): CommandResult {
  const files = resolveSessionKey(config.paths.sessions, sessionKey);
  if (options.rebuild !== true && fs.existsSync(files.summary)) {
    const { text, value } = readJsonFile(files.summary, 'summary');
    return { exitCode: EXIT.ok, json: value, human: text.trimEnd() };
  }
  // Built from a trail that is the session's own: never through a link out of the folder.
  assertReadable(files.trail);
  const log = sealLogView(config.paths.sealLog, null, config.paths.anchorLog);
  const kept = options.rebuild === true && fs.existsSync(files.summary) ? damagedStatus(config, files.sessionId, log) : null;
  if (kept !== null) {
    return {
      exitCode: EXIT.checkFailed,
      json: { session_id: files.sessionId, rebuilt: false, status: kept.status, reason: kept.reason, message: kept.message },
      human: `not rebuilt: ${files.sessionId} is ${statusLabel(kept)} (${kept.message ?? kept.status}); its summary is kept, as evidence of what the trail was when it was sealed`,
    };
  }
  // The seal was logged at close; a rebuilt summary carries the same one.
  const logged = log.read.entries.findLast((entry) => entry.seal.session_id === files.sessionId)?.seal ?? null;
  const exported = exportSession(files, true, { seal: () => logged, exportPii: config.values['identity_export_pii'] === true, declaredSteps: storedDeclaredSteps(files.summary) });
  return { exitCode: EXIT.ok, json: exported.summary, human: summaryText(exported.summary).trimEnd() };
}

/**
 * The session's status when its trail was edited or cut since it was sealed: a summary rebuilt from
 * it would replace the one that shows what it was. Null when it may be rebuilt.
 */
function damagedStatus(config: AuraConfig, id: string, log: SealLogView): SessionStatus | null {
  const status = folderSessionStatus(config.paths.sessions, id, { keys: null, log });
  return status.status === 'damaged' ? status : null;
}

/**
 * The declared steps a summary being replaced holds (a Python Aura summary holds those its trail
 * lacks: the rebuilt one keeps them); none when it is missing or unreadable, as a rebuild repairs it.
 */
function storedDeclaredSteps(path: string): string[] | null {
  try {
    return summaryDeclaredSteps(objectOf(readJsonFile(path, 'summary').value));
  } catch (error) {
    if (error instanceof AuraError) return null;
    throw error;
  }
}

/**
 * Writes the session's `otel.jsonl` from its trail and, when an endpoint is set (flag, the
 * `OTEL_EXPORTER_OTLP_*` variables or config), pushes the same spans to it. Exit 1 when the
 * collector did not take them all.
 */
export async function exportOtelCommand(sessionKey: string, flags: OtlpFlags, config: AuraConfig, env: Readonly<Record<string, string | undefined>> = process.env): Promise<CommandResult> {
  const files = resolveSessionKey(config.paths.sessions, sessionKey);
  // Settle the target first: a bad flag is a usage error before anything is written.
  const target = resolveOtlpTarget(config.settings.otel, env, flags);
  const options = { captureToolContent: config.settings.otel.capture_tool_content };
  assertReadable(files.trail);
  const { trail, spans } = exportSpans(files, options);
  const written = { session_id: files.sessionId, spans: spans.length, path: files.otel };
  const first = trail.events[0];
  if (target === null || first === undefined) return { exitCode: EXIT.ok, json: written, human: `wrote ${spans.length} spans to ${files.otel}` };
  const outcome = await sendSpans(target, spanSourceOf(first.session_id, first.aura_id), spans);
  const pushed = { endpoint: target.endpoint, protocol: target.protocol, exported: outcome.delivered ? spans.length : 0, dropped: outcome.delivered ? 0 : spans.length, attempts: outcome.attempts, error: outcome.reason };
  return {
    exitCode: outcome.delivered ? EXIT.ok : EXIT.checkFailed,
    json: { ...written, pushed },
    human: [
      `wrote ${spans.length} spans to ${files.otel}`,
      outcome.delivered ? `pushed ${spans.length} spans to ${target.endpoint} (${target.protocol})` : `could not push to ${target.endpoint}: ${outcome.reason ?? 'unknown'} after ${outcome.attempts} attempts`,
    ].join('\n'),
  };
}
