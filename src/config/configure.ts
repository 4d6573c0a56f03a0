/**
 * Process-wide configuration defaults, as Aura's `configure()`: set once by the host, used by
 * every `agent()` call that does not name its own.
 */

import { resolveConfig, type AuraConfig, type ConfigOptions } from './config.js';

let defaults: ConfigOptions = {};

/** Sets the defaults (`home`, `projectDir`, `overrides`) and returns the configuration they resolve to. */
export function configure(options: ConfigOptions = {}): AuraConfig {
  const config = resolveConfig(options);
  defaults = { ...options };
  return config;
}

/** The configuration in force, with `options` over the configured defaults. */
export function currentConfig(options: ConfigOptions = {}): AuraConfig {
  const merged: ConfigOptions = {
    ...defaults,
    ...definedOnly(options),
    overrides: { ...defaults.overrides, ...options.overrides },
  };
  return resolveConfig(merged);
}

function definedOnly(options: ConfigOptions): ConfigOptions {
  const picked: { -readonly [K in keyof ConfigOptions]: ConfigOptions[K] } = {};
  if (options.home !== undefined) picked.home = options.home;
  if (options.projectDir !== undefined) picked.projectDir = options.projectDir;
  if (options.env !== undefined) picked.env = options.env;
  return picked;
}
