/** yaml, imported statically: what src/config/yaml-module.ts gives, in the hook's bundle (build-bundles.mjs). */

import * as yaml from 'yaml';

/** The yaml package. */
export function yamlModule() {
  return yaml;
}
