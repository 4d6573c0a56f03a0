/**
 * `aura verify chain` alone, the entry of its own bundle (dist/verify-chain.cjs): a quarter of
 * the whole command line's, so the check an auditor runs on trail after trail starts in about 10 ms
 * less. ./bin.ts runs it when the arguments name `verify chain`; any other arguments go to ./main.ts.
 */

import { runProgram } from './program.js';
import { addVerifyChain, verifyCommand } from './verify-chain-command.js';

/** Runs `aura verify chain` on `argv` (without the node and script names) and sets the process's exit code. */
export function runCli(argv: readonly string[]): Promise<void> {
  return runProgram(argv, (kit) => addVerifyChain(verifyCommand(kit.program), kit));
}
