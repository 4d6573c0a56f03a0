/** `aura store init`: create or migrate the fleet store's schema and roles. */

import type { AuraConfig } from '../config/config.js';
import { InvalidOptionError } from '../errors.js';
import { storeUrlFor, type StoreOptions } from './context.js';
import { EXIT, type CommandResult } from './output.js';

/** Options of `store init`. */
export interface StoreInitOptions extends StoreOptions {
  readonly ingestRole?: string;
  readonly readerRole?: string;
}

/**
 * Applies the migrations the store lacks (none when it is current) and grants the two roles.
 * @throws InvalidOptionError (no store), StoreError
 */
export async function storeInitCommand(options: StoreInitOptions, config: AuraConfig): Promise<CommandResult> {
  const url = await storeUrlFor(options, config);
  if (url === null) throw new InvalidOptionError('--store', null, 'a postgres:// URL (or the config key store)');
  const { openStore } = await import('../store/postgres/connection.js');
  const { initStore, DEFAULT_ROLES } = await import('../store/postgres/schema.js');
  const store = openStore(url, { applicationName: 'aura store init', max: 1 });
  try {
    const report = await initStore(store.sql, store.label, { ingest: options.ingestRole ?? DEFAULT_ROLES.ingest, reader: options.readerRole ?? DEFAULT_ROLES.reader });
    const what = report.applied.length === 0 ? `already at schema version ${report.to_version}` : `migrated from version ${report.from_version} to ${report.to_version} (${report.applied.map((m) => m.name).join('; ')})`;
    return {
      exitCode: EXIT.ok,
      json: { store: store.label, ...report },
      human: `${store.label}: ${what}\n  roles: ${report.roles.ingest} may insert (never update or delete), ${report.roles.reader} may read; grant them to login roles (docs/fleet.md)`,
    };
  } finally {
    await store.sql.end({ timeout: 5 });
  }
}
