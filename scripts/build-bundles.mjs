/**
 * Bundles the `aura` command into one-file CommonJS bundles in dist/: claude-code-hook.cjs (`aura
 * hook claude-code`, which runs before every tool call a person waits on), verify-chain.cjs (`aura
 * verify chain`, a quarter of the size of the whole command line) and cli.cjs (every other
 * command). Node 20 loads a hundred small ES modules (aura's, commander's, yaml's) far slower than
 * one file; CommonJS, because src/cli/bundle-loader.ts compiles a bundle with `vm.Script` and a V8
 * code cache. Run after tsc (npm run build; test/global-setup.ts).
 *
 * The entry itself, src/cli/bin.ts with the loader, is bundled to CommonJS too: dist/cli/bin.cjs,
 * the package's bin. An ES module entry starts through Node's module loader (its resolver, its
 * promise-based file reads), and each Node built-in it imports gets a module facade that reads
 * every export (node:crypto's lazy ones, webcrypto and its streams, load then too).
 */

import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(root, 'dist');

// `import * as fs from 'node:fs'` in a module of dist/.
const BUILTIN_NAMESPACE = /^import \* as (\w+) from '(node:[\w/]+)';$/gm;

// The package's name and version, which dist/version.js reads from package.json when it loads:
// written into the bundles, that is a file read and a parse less at every command's start.
const VERSION_MODULE = path.join(dist, 'version.js');
const { name: packageName, version: packageVersion } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
const versionModule = `export const PACKAGE_NAME = ${JSON.stringify(packageName)};\nexport const VERSION = ${JSON.stringify(packageVersion)};\n`;

/**
 * aura's modules as the bundles take them:
 * - each keeps the URL it has in dist/ (but the version, written in): what it finds beside itself (../package.json, the report's
 *   assets, the live export's worker, packages it requires at first use) is where it is for the ES
 *   modules;
 * - a Node built-in imported as a namespace is required as it is. esbuild would copy each such
 *   import into an object of its own, every export a getter (`__toESM`): for the forty of them,
 *   milliseconds of every command's start.
 */
const distModules = {
  name: 'dist-modules',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(`${dist}${path.sep}`)) return undefined;
      if (args.path === VERSION_MODULE) return { contents: versionModule, loader: 'js' };
      const text = await readFile(args.path, 'utf8');
      const url = `new URL(${JSON.stringify(path.relative(dist, args.path).split(path.sep).join('/'))}, __auraDistUrl).href`;
      const contents = text.replaceAll('import.meta.url', url).replace(BUILTIN_NAMESPACE, "const $1 = require('$2');");
      return contents === text ? undefined : { contents, loader: 'js' };
    });
  },
};

const commonJs = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Without comments and white space a file is a third smaller and pure ASCII, which Node reads
  // into a one-byte string (a comment's arrow made all of the hook's 600 kB two-byte, and slow to
  // decode). Names are kept: stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  logLevel: 'warning',
};

/**
 * Builds `entry` (a module of dist/) into `outfile` (a path in dist/), and checks that it is ASCII:
 * src/cli/bundle-loader.ts reads a bundle as latin1, which is UTF-8 only for ASCII.
 */
async function bundle(entry, outfile, options) {
  const toDist = path.relative(path.dirname(path.join(dist, outfile)), dist).split(path.sep).join('/');
  await build({
    ...commonJs,
    entryPoints: [path.join(dist, entry)],
    outfile: path.join(dist, outfile),
    // The folder distModules resolves from, found from where the bundle is.
    banner: { js: `const __auraDistUrl = require('node:url').pathToFileURL(require('node:path').join(__dirname, ${JSON.stringify(toDist)}, '/')).href;` },
    ...options,
    plugins: [distModules, ...(options.plugins ?? [])],
  });
  const bytes = await readFile(path.join(dist, outfile));
  const at = bytes.findIndex((byte) => byte > 0x7f);
  if (at >= 0) throw new Error(`dist/${outfile} is not ASCII at byte ${at}`);
}

await bundle('cli/hook-claude-code.js', 'claude-code-hook.cjs', {
  // Loaded with require() when a profile has a schema: left to Node's resolution from dist/.
  external: ['ajv', 'ajv-formats', '@opentelemetry/api'],
  plugins: [
    // The hook reads a profile on every call: its bundle carries yaml, imported statically in place
    // of the module that loads it at first use (src/config/yaml-module.ts).
    {
      name: 'static-yaml',
      setup(build) {
        build.onResolve({ filter: /^\.\/yaml-module\.js$/ }, () => ({ path: fileURLToPath(new URL('hook-yaml-module.mjs', import.meta.url)) }));
      },
    },
  ],
});

// The command line's bundles: every command, and `verify chain` alone.
const commandLine = {
  // Aura's modules, commander and picocolors are bundled; each command's own modules start when it
  // runs (esbuild keeps a dynamic import lazy). The larger packages that only some commands use stay
  // outside, required from node_modules when a command first needs them (their CommonJS builds).
  external: ['@modelcontextprotocol/sdk', 'postgres', 'zod', 'ajv', 'ajv-formats', 'yaml', '@opentelemetry/api'],
  plugins: [
    // commander requires node:child_process at its start for executable subcommands, which aura
    // has none of; loading it pulls in net, dgram and more. Here it is required at first use.
    {
      name: 'lazy-child-process',
      setup(build) {
        build.onResolve({ filter: /^node:child_process$/ }, (args) =>
          args.importer.includes(`${path.sep}node_modules${path.sep}commander${path.sep}`) ? { path: 'node:child_process', namespace: 'lazy-child-process' } : undefined,
        );
        build.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
          contents: "module.exports = new Proxy({}, { get: (_, name) => require('node:child_process')[name] });",
          loader: 'js',
        }));
      },
    },
  ],
};
await bundle('cli/main.js', 'cli.cjs', commandLine);
await bundle('cli/verify-chain-main.js', 'verify-chain.cjs', commandLine);

// The package's bin, with the loader in it: a CommonJS entry starts without Node's ES module loader.
await bundle('cli/bin.js', 'cli/bin.cjs', {});
