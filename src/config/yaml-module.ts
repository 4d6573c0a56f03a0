/**
 * The yaml package, loaded at first use: it is a large package, and most processes read no YAML
 * (a command line with no config file pays for none). Its Node build is CommonJS, so require()
 * loads the very module an import would. The Claude Code hook's one-file bundle, which reads a
 * profile on every call, puts a static import of yaml in this module's place
 * (scripts/build-bundles.mjs).
 */

import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let loaded: typeof Yaml | undefined;

/** The yaml package. */
export function yamlModule(): typeof Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return loaded;
}
