/** `aura export <id>` and `aura export-otel <id>`: a session's evidence files. */

import * as fs from 'node:fs';
import type { AuraConfig } from '../config/config.js';
import { exportSession, exportSpans } from '../export/session-export.js';
import { summaryText } from '../export/summary.js';
import { readJsonFile } from '../store/json-file.js';
import { readSealLog } from '../store/seal-log.js';
import { resolveSessionKey } from '../store/session-files.js';
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
  // The seal was logged at close; a rebuilt summary carries the same one.
  const logged = readSealLog(config.paths.sealLog).entries.findLast((entry) => entry.seal.session_id === files.sessionId)?.seal ?? null;
  const exported = exportSession(files, true, { seal: () => logged, exportPii: config.values['identity_export_pii'] === true });
  return { exitCode: EXIT.ok, json: exported.summary, human: summaryText(exported.summary).trimEnd() };
}

/** Writes the session's `otel.jsonl` from its trail. */
export function exportOtelCommand(sessionKey: string, config: AuraConfig): CommandResult {
  const files = resolveSessionKey(config.paths.sessions, sessionKey);
  const spans = exportSpans(files);
  return {
    exitCode: EXIT.ok,
    json: { session_id: files.sessionId, spans, path: files.otel },
    human: `wrote ${spans} spans to ${files.otel}`,
  };
}
