/**
 * JSON Schema 2020-12 checks of tool arguments and results (reference §12), compiled with ajv once
 * at profile load, so a schema that does not compile is an error before any session opens.
 */

import { createRequire } from 'node:module';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';

let ajv: Ajv2020 | null = null;

/**
 * ajv and its formats, loaded at the first schema (synchronously: profiles load synchronously).
 * Most profiles have none, and loading ajv is a good part of a short process's start (the Claude
 * Code hook runs before every tool call).
 */
function compiler(): Ajv2020 {
  if (ajv === null) {
    const require = createRequire(import.meta.url);
    const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: new (options: object) => Ajv2020 };
    const addFormats = require('ajv-formats') as (instance: Ajv2020) => Ajv2020;
    ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  }
  return ajv;
}

/** A compiled schema: the problems of a value, or none. */
export type SchemaCheck = (value: unknown) => string[];

/**
 * Compiles a schema.
 * @throws Error with ajv's message when it does not compile.
 */
export function compileSchema(schema: object): SchemaCheck {
  const validate: ValidateFunction = compiler().compile(schema);
  return (value) => (validate(value) ? [] : describeErrors(validate.errors ?? []));
}

/** `<path or (root)>: <message>`, sorted by path, as Aura reports them. */
function describeErrors(errors: readonly ErrorObject[]): string[] {
  return errors
    .map((error) => {
      const path = error.instancePath === '' ? '(root)' : error.instancePath.slice(1).replaceAll('/', '.');
      const detail = error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})` : '';
      return `${path}: ${error.message ?? error.keyword}${detail}`;
    })
    .sort();
}

/** The first three problems joined, with the count of the rest. */
export function summarizeProblems(problems: readonly string[]): string {
  const head = problems.slice(0, 3).join('; ');
  return problems.length > 3 ? `${head} (+${problems.length - 3} more)` : head;
}
