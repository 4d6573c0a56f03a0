/**
 * The event both scenarios record: a `tool.call`-like payload whose canonical JSON is about 200
 * bytes, the size of a typical tool call in an agent trail. A fresh object per event, with a
 * changing `n` and path, so neither aura nor the baseline can reuse work from the event before.
 */

/** The kind every benchmark event has. */
export const KIND = 'tool.call';

/** The payload of event `n` (canonical text 190–204 bytes, depending on the digits of `n`). */
export function toolCallPayload(n: number): Record<string, unknown> {
  return {
    tool: 'fs.read_file',
    args: {
      path: `/workspace/src/components/module_${n % 1000}.ts`,
      encoding: 'utf8',
      offset: 0,
      limit: 4096,
      follow_symlinks: false,
      reason: 'inspect the module',
    },
    n,
  };
}
