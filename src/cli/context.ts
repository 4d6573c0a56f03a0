/** What every command is given: the configuration chosen by the global options. */

import { resolveConfig, type AuraConfig } from '../config/config.js';

/** The global options of `aura`. */
export interface GlobalOptions {
  readonly home?: string;
  readonly project?: string;
}

/** Resolves the configuration the global options name. */
export function configFor(options: GlobalOptions): AuraConfig {
  return resolveConfig({
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.project === undefined ? {} : { projectDir: options.project }),
  });
}
