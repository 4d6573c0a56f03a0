/** `aura ui [--port P]`: the sessions folder and each session's report in a browser, on loopback. */

import type { AuraConfig } from '../config/config.js';
import { portOption, readerKeys, sourceFor, type StoreOptions } from './context.js';
import { serveUi } from '../report/server.js';
import type { KeyRing } from '../spine/signing.js';
import { VERSION } from '../version.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `ui`. */
export interface UiCommandOptions extends StoreOptions {
  readonly port?: string;
  readonly keys: KeyRing | null;
  readonly json: boolean;
}

/**
 * Serves until SIGINT or SIGTERM, then exits 0. The URL (with its path prefix and access token)
 * is printed as soon as the server listens: on stdout, as one JSON line with `--json`.
 * @throws InvalidOptionError for a port that is not 0–65535 in decimal digits
 */
export async function uiCommand(options: UiCommandOptions, config: AuraConfig): Promise<CommandResult> {
  const port = portOption('--port', options.port ?? '0');
  const source = await sourceFor(options, config);
  const ui = await serveUi(port, { source, keys: readerKeys(source, options.keys, config), exportPii: config.values['identity_export_pii'] === true, generator: `aura-harness ${VERSION}` });
  process.stdout.write(options.json ? `${JSON.stringify({ url: ui.url, port: ui.port, ...(source.kind === 'folder' ? { sessions_dir: source.label } : { store: source.label }) })}\n` : `aura ui: ${ui.url}\n  serving ${source.label} read-only on 127.0.0.1 (Ctrl-C to stop)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void ui
        .close()
        .then(() => source.close())
        .then(resolve);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return { exitCode: EXIT.ok, json: null, human: '', quiet: true };
}
