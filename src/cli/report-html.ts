/** `aura report html <id> [-o FILE]`: the session's report as one self-contained HTML page. */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AuraConfig } from '../config/config.js';
import { commitFiles } from '../export/commit.js';
import { InvalidOptionError } from '../errors.js';
import { reportHtml } from '../report/html.js';
import { reportPageModel } from '../report/page-model.js';
import type { KeyRing } from '../spine/signing.js';
import { VERSION } from '../version.js';
import { sessionMaterialFor, type StoreOptions } from './context.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `report html`. */
export interface ReportHtmlOptions extends StoreOptions {
  /** The page's file, or a folder to write `{id}.report.html` into; default the current folder. */
  readonly output?: string;
  /** The keys the reader named; the sessions folder falls back on the home's, the store on the session's host's. */
  readonly keys: KeyRing | null;
}

/**
 * Writes the page and prints its path. The page goes to the current folder by default, not the
 * sessions folder: that folder holds the record, and a page made from it is a copy for people.
 * @throws NotFoundError (no such session), InvalidSessionIdError, ExportError (the file could not be written)
 */
export async function reportHtmlCommand(sessionKey: string, options: ReportHtmlOptions, config: AuraConfig): Promise<CommandResult> {
  const { files, keys } = await sessionMaterialFor(sessionKey, options, options.keys, config);
  const model = reportPageModel(files, { exportPii: config.values['identity_export_pii'] === true, keys, generator: `aura-harness ${VERSION}` });
  const target = path.resolve(options.output ?? '.');
  const output = fs.statSync(target, { throwIfNoEntry: false })?.isDirectory() === true ? path.join(target, `${files.sessionId}.report.html`) : target;
  refuseRecordOrSpecial(output, options.output ?? '.', config);
  const { html } = reportHtml(model);
  commitFiles(files.sessionId, [{ path: output, content: html }]);
  const bytes = Buffer.byteLength(html, 'utf8');
  return {
    exitCode: EXIT.ok,
    json: { session_id: files.sessionId, path: output, bytes, events: model.events.length, verdict: model.verdict },
    human: `${output}\n  ${model.events.length} events · verdict ${model.verdict.toUpperCase()} · ${(bytes / 1e6).toFixed(2)} MB · opens offline in any browser`,
  };
}

/**
 * The page is written whole and renamed into place: never over the record it was made from (a
 * file of the sessions folder, a seal log), nor over what is not a plain file (a device, a pipe, a link,
 * which the rename would replace rather than write through).
 * @throws InvalidOptionError
 */
function refuseRecordOrSpecial(output: string, given: string, config: AuraConfig): void {
  const { sessions, sealLog, anchorLog } = config.paths;
  const existing = fs.lstatSync(output, { throwIfNoEntry: false });
  const inSessions = !path.relative(path.resolve(sessions), output).startsWith('..');
  if ((existing !== undefined && inSessions) || output === path.resolve(sealLog) || (anchorLog !== null && output === path.resolve(anchorLog))) {
    throw new InvalidOptionError('--output', given, 'a path that holds none of the record (a file of the sessions folder, a seal log): the page is a copy of it, never written over it');
  }
  if (existing !== undefined && !existing.isFile()) throw new InvalidOptionError('--output', given, 'a new file, a plain file or a folder: this one is a device, a pipe or a link');
}
