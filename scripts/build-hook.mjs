/**
 * Bundles `aura hook claude-code` into one CommonJS file, dist/claude-code-hook.cjs. The hook runs
 * before every tool call a person waits on, and Node 20 loads a hundred small ES modules (aura's
 * and yaml's) far slower than one file; CommonJS, because src/cli/hook-loader.ts compiles it with
 * `vm.Script` and a V8 code cache. It sits in dist/ itself so that what it reads beside its
 * modules (../package.json) is where it is for them. Run after tsc (npm run build;
 * test/global-setup.ts).
 *
 * The loader itself is bundled to CommonJS too, dist/cli/hook-loader.cjs beside its ES module, for
 * bin.js to require(): imported as an ES module, each Node built-in it uses gets a module facade
 * that reads every export, and node:crypto's lazy ones (webcrypto, its streams) then load too.
 */

import { build } from 'esbuild';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const commonJs = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Without comments and white space the file is a third smaller and pure ASCII, which Node reads
  // into a one-byte string (a comment's arrow made all 600 kB two-byte, and slow to decode). Names
  // are kept: stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  // The modules find files beside them from import.meta.url; in a bundle, that is the bundle's own URL.
  define: { 'import.meta.url': '__auraBundleUrl' },
  banner: { js: "const __auraBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
};
await build({
  ...commonJs,
  entryPoints: [`${root}dist/cli/hook-claude-code.js`],
  outfile: `${root}dist/claude-code-hook.cjs`,
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
});
await build({ ...commonJs, entryPoints: [`${root}dist/cli/hook-loader.js`], outfile: `${root}dist/cli/hook-loader.cjs` });
