/**
 * Bundles `aura hook claude-code` into one CommonJS file, dist/claude-code-hook.cjs. The hook runs
 * before every tool call a person waits on, and Node 20 loads a hundred small ES modules (aura's
 * and yaml's) far slower than one file; CommonJS, because src/cli/hook-loader.ts compiles it with
 * `vm.Script` and a V8 code cache. It sits in dist/ itself so that what it reads beside its
 * modules (../package.json) is where it is for them. Run after tsc (npm run build;
 * test/global-setup.ts).
 */

import { build } from 'esbuild';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
  entryPoints: [`${root}dist/cli/hook-claude-code.js`],
  outfile: `${root}dist/claude-code-hook.cjs`,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Loaded with require() when a profile has a schema: left to Node's resolution from dist/.
  external: ['ajv', 'ajv-formats', '@opentelemetry/api'],
  // The hook reads a profile on every call: its bundle carries yaml, imported statically in place
  // of the module that loads it at first use (src/config/yaml-module.ts).
  plugins: [
    {
      name: 'static-yaml',
      setup(build) {
        build.onResolve({ filter: /^\.\/yaml-module\.js$/ }, () => ({ path: fileURLToPath(new URL('hook-yaml-module.mjs', import.meta.url)) }));
      },
    },
  ],
  // The modules find files beside them from import.meta.url; in the bundle, that is the bundle's own URL.
  define: { 'import.meta.url': '__auraBundleUrl' },
  banner: { js: "const __auraBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});
