/**
 * The options `aura` takes before its command, in one list: the command line declares them
 * (./main.ts), and the entry (./bin.ts) steps over their values to find the command's name.
 */

/** Each global option: its commander flags and its help line. */
export const GLOBAL_OPTIONS = [
  { flags: '--home <dir>', description: 'use this folder as AURA_HOME (default: $AURA_HOME, else ~/.aura)' },
  { flags: '--project <dir>', description: 'project folder (its aura.project.yaml; storage: project keeps sessions in its .aura/)' },
  { flags: '--anchor-dir <dir>', description: 'also append every seal to DIR/seals.jsonl, ideally off this machine (config anchor_dir)' },
] as const;

/** The names of the global options that take a value (`--home`), as written before it. */
export const GLOBAL_OPTIONS_WITH_VALUES: ReadonlySet<string> = new Set(
  GLOBAL_OPTIONS.filter(({ flags }) => flags.includes('<')).map(({ flags }) => flags.split(' ')[0] as string),
);
