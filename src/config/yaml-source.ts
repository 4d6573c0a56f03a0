/**
 * YAML (or JSON) read with the line of every node, so that an error in a config file or a profile
 * names the file, the line and the key.
 */

import type * as Yaml from 'yaml';
import { yamlModule as yaml } from './yaml-module.js';

/** A key path inside a document: `['rules', 2, 'tools']`. */
export type KeyPath = readonly (string | number)[];

/** A document's value, and where its parts are. */
export interface YamlSource {
  readonly value: unknown;
  /** The 1-based line of the value at `keys`, or null when unknown. */
  lineOf(keys: KeyPath): number | null;
}

/**
 * Parses a YAML text (duplicate keys are an error).
 * @param problem makes the error thrown for the first syntax error, from its message and line
 */
export function parseYamlSource(text: string, problem: (message: string, line: number | null) => Error): YamlSource {
  const { LineCounter, parseDocument } = yaml();
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, uniqueKeys: true });
  const [first] = document.errors;
  if (first !== undefined) throw problem((first.message.split('\n')[0] ?? 'invalid YAML').replace(/:$/, ''), first.linePos?.[0].line ?? null);
  return { value: document.toJS() as unknown, lineOf: (keys) => lineIn(document, lineCounter, keys) };
}

function lineIn(document: Yaml.Document, lineCounter: Yaml.LineCounter, keys: KeyPath): number | null {
  const { isMap, isNode, isScalar } = yaml();
  // The deepest node that exists on the path (a missing key is reported where its parent is);
  // for a mapping entry, the line of its key, which is where a reader looks.
  for (let depth = keys.length; depth >= 0; depth--) {
    const parent = depth === 0 ? null : depth === 1 ? document.contents : document.getIn(keys.slice(0, depth - 1), true);
    const last = keys[depth - 1];
    if (isMap(parent)) {
      const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
      const range = isNode(pair?.key) ? pair.key.range : undefined;
      if (range !== undefined && range !== null) return lineCounter.linePos(range[0]).line;
    }
    const node = depth === 0 ? document.contents : document.getIn(keys.slice(0, depth), true);
    if (isNode(node) && node.range !== undefined && node.range !== null) return lineCounter.linePos(node.range[0]).line;
  }
  return null;
}
