/**
 * yaml in the hook's bundle (build-bundles.mjs), in place of src/config/yaml-module.ts, which
 * requires it from node_modules: bundled, and still run only at the first call. A hook whose
 * profile's parsed value is kept (session/profile-file.ts) parses no YAML, and skips yaml's start.
 */

let loaded;

/** The yaml package. */
export function yamlModule() {
  // Bundled by esbuild, which runs the module when this require does.
  // eslint-disable-next-line no-undef, @typescript-eslint/no-require-imports
  loaded ??= require('yaml');
  return loaded;
}
