/**
 * `aura verify chain` as commander takes it: registered by the whole command line (./main.ts) and
 * by the entry of its own bundle (./verify-chain-main.ts), the one command an auditor runs on a
 * trail again and again.
 */

import type { Command } from 'commander';
import { configFor, keysFor, type KeyOptions } from './context.js';
import type { JsonFlag, ProgramKit } from './program.js';

/** The `verify` command group. */
export function verifyCommand(program: Command): Command {
  return program.command('verify').description('check trails');
}

/** Adds `chain` to the `verify` group. */
export function addVerifyChain(verify: Command, { json, global, run }: ProgramKit): void {
  verify
    .command('chain')
    .description('verify the hash chain of a trail: integrity, and completeness against its seal')
    .argument('<path>', 'a trail (.jsonl) path, or a session id in the sessions folder')
    .option('--summary <file>', "a summary whose seal the trail must match (aura's chain and seal, or Aura's event_count)")
    .option('--keys <dir>', 'trust the public keys in DIR (default: AURA_HOME/keys when it has any)')
    .option('--public-key <file>', 'trust this one public key')
    .addOption(json)
    .action((path: string, flags: JsonFlag & KeyOptions & { summary?: string }) =>
      run(flags, async () => {
        const config = configFor(global());
        const { verifyChainCommand } = await import('./verify-chain.js');
        return verifyChainCommand(path, { ...(flags.summary === undefined ? {} : { summary: flags.summary }), keys: keysFor(flags, config) }, config);
      }),
    );
}
