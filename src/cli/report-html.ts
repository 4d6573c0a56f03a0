/** `aura report html <id> [-o FILE]`: the session's report as one self-contained HTML page. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { commitFiles } from '../export/commit.js';
import { reportHtml } from '../report/html.js';
import { reportPageModel } from '../report/page-model.js';
import type { KeyRing } from '../spine/signing.js';
import { VERSION } from '../version.js';
import { sourceFor, type StoreOptions } from './context.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `report html`. */
export interface ReportHtmlOptions extends StoreOptions {
  /** The page's file, or a folder to write `{id}.report.html` into; default the current folder. */
  readonly output?: string;
  /** Trusted public keys, or null to show signatures as not checked. */
  readonly keys: KeyRing | null;
}

/**
 * Writes the page and prints its path. The page goes to the current folder by default, not the
 * sessions folder: that folder holds the record, and a page made from it is a copy for people.
 * @throws NotFoundError (no such session), InvalidSessionIdError, ExportError (the file could not be written)
 */
export async function reportHtmlCommand(sessionKey: string, options: ReportHtmlOptions, config: AuraConfig): Promise<CommandResult> {
  const source = await sourceFor(options, config);
  const files = await source.material(sessionKey).finally(() => source.close());
  const model = reportPageModel(files, { exportPii: config.values['identity_export_pii'] === true, keys: options.keys, generator: `aura-harness ${VERSION}` });
  const target = path.resolve(options.output ?? '.');
  const output = fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() === true ? path.join(target, `${files.sessionId}.report.html`) : target;
  const { html } = reportHtml(model);
  commitFiles(files.sessionId, [{ path: output, content: html }]);
  const bytes = Buffer.byteLength(html, 'utf8');
  return {
    exitCode: EXIT.ok,
    json: { session_id: files.sessionId, path: output, bytes, events: model.events.length, verdict: model.verdict },
    human: `${output}\n  ${model.events.length} events · verdict ${model.verdict.toUpperCase()} · ${(bytes / 1e6).toFixed(2)} MB · opens offline in any browser`,
  };
}
