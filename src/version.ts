/** The package's name and version, read once from its package.json. */

import { readFileSync } from 'node:fs';
import { parseJson } from './spine/native-json.js';

const manifest = parseJson(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** `aura-harness`. */
export const PACKAGE_NAME: string = manifest.name;
/** The package version, recorded on every session. */
export const VERSION: string = manifest.version;
