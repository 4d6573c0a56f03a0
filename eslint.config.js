import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importX, createNodeResolver } from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.compat/'] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    // No import circle in src/, type imports included: data flows one way (DESIGN §1).
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // V8 12.8 and later (Node 24, 26) can misread an escaped object key: src/spine/native-json.ts.
      'no-restricted-properties': ['error', { object: 'JSON', property: 'parse', message: 'use parseJson (src/spine/native-json.ts): JSON.parse can misread an escaped key on Node 24 and later' }],
    },
  },
  {
    // Where JSON.parse is proven safe: string tokens, and texts checked for escaped keys first.
    files: ['src/spine/native-json.ts', 'src/spine/json-reader.ts', 'src/spine/fast-record.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    // The report pages' code runs in the browser as plain scripts: common.js defines the helpers
    // the page scripts after it use (src/report/html.ts inlines them in that order).
    files: ['src/report/assets/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        document: 'readonly', Node: 'readonly', requestAnimationFrame: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
      },
    },
    rules: { 'no-unused-vars': ['error', { vars: 'local' }], '@typescript-eslint/no-unused-vars': ['error', { vars: 'local' }] },
  },
  {
    files: ['src/report/assets/**/*.js'],
    ignores: ['src/report/assets/common.js'],
    languageOptions: {
      globals: { pageData: 'readonly', el: 'readonly', put: 'readonly', verdictBadge: 'readonly', shortHash: 'readonly', sortableTable: 'readonly' },
    },
  },
  {
    files: ['bench/**', 'scripts/**', 'test/fixtures/**', 'examples/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // CommonJS preloaded with `node -r`: a preload that is an ES module would start Node's module loader itself.
    files: ['test/fixtures/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The examples are plain ES modules for Node, as a user would write them; so are the fixtures
    // another Node runs as they are.
    files: ['examples/**/*.mjs', 'test/fixtures/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
