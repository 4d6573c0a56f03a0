/**
 * JSON Schema 2020-12 checks of tool arguments and results (reference §12), compiled with ajv once
 * at profile load, so a schema that does not compile is an error before any session opens.
 */

import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));

/** A compiled schema: the problems of a value, or none. */
export type SchemaCheck = (value: unknown) => string[];

/**
 * Compiles a schema.
 * @throws Error with ajv's message when it does not compile.
 */
export function compileSchema(schema: object): SchemaCheck {
  const validate: ValidateFunction = ajv.compile(schema);
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
