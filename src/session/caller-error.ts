/**
 * What a tool threw, as its caller (the model's side) gets it once the session has something to
 * keep from the caller: a secret it injected, or personal data the call's results are masked of.
 * Every text the caller can reach is cleaned as the tool's answer is: the message, the name, the
 * stack, the cause, and the error's own fields, keys included, at any depth.
 *
 * A value with nothing to clean is handed on as thrown. Otherwise the caller gets a copy of the
 * same class (its prototype: `instanceof` still holds, an AuraError keeps its `code` and `data`)
 * holding only what can be walked whole: strings, numbers, booleans, arrays, plain objects and
 * errors. Anything else (a class instance such as an HTTP client's headers or request, a Map, a
 * Buffer, a function, a getter, a symbol) is left out: the secret can be in it, out of reach. A
 * throw that is not an Error, once cleaned, becomes one.
 */

import { freeKey } from '../spine/redactor.js';

// Errors' fields are shallow: what lies deeper is left out rather than walked.
const MAX_DEPTH = 16;
const LEFT_OUT: unique symbol = Symbol('left out');
// Node 22 and later give an error its stack through an accessor of V8's own (Node 20 a plain
// value): that one is read, as no other getter is.
const STACK_GETTER = Object.getOwnPropertyDescriptor(new Error(), 'stack')?.get;

/** `thrown` with every text cleaned by `clean`: itself when nothing in it changed, else a copy (an Error, whatever was thrown). */
export function callerCopy(thrown: unknown, clean: (text: string) => string): unknown {
  let copy: unknown;
  try {
    copy = new CallerCopy(clean).value(thrown, 0);
  } catch {
    // A proxy, or a field that throws when read: nothing of it is handed on.
    return new Error('the tool failed with an error that cannot be read');
  }
  if (copy === thrown || copy instanceof Error) return copy;
  const message = typeof copy === 'string' ? copy : 'the tool threw a value that is not an Error';
  return new Error(message, copy !== null && typeof copy === 'object' ? { cause: copy } : undefined);
}

class CallerCopy {
  /** The objects being walked: one met again is a cycle. */
  private readonly ancestors = new Set<object>();

  constructor(private readonly clean: (text: string) => string) {}

  /** The value cleaned (itself when nothing in it changed), or {@link LEFT_OUT}. */
  value(value: unknown, depth: number): unknown {
    if (typeof value === 'string') return this.clean(value);
    if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value;
    if (typeof value !== 'object' || depth > MAX_DEPTH || this.ancestors.has(value)) return LEFT_OUT;
    this.ancestors.add(value);
    try {
      if (value instanceof Error) return this.error(value, depth);
      if (Array.isArray(value)) return this.array(value, depth);
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return LEFT_OUT;
      const { fields, changed } = this.ownFields(value, depth);
      return changed ? withFields(Object.create(proto) as object, fields) : value;
    } finally {
      this.ancestors.delete(value);
    }
  }

  private error(error: Error, depth: number): Error {
    const { fields, changed } = this.ownFields(error, depth);
    // A name set on the instance is one of its fields; one its class gives it is cleaned too.
    const name = String(error.name);
    const renamed = !fields.has('name') && this.clean(name) !== name;
    if (!changed && !renamed) return error;
    if (renamed) fields.set('name', { value: this.clean(name), writable: true, enumerable: false, configurable: true });
    // A native error (as `util.types.isNativeError` and loggers know one) of the thrown one's class.
    const copy = new Error();
    delete copy.stack;
    Object.setPrototypeOf(copy, Object.getPrototypeOf(error));
    return withFields(copy, fields);
  }

  private array(items: readonly unknown[], depth: number): readonly unknown[] {
    const kept = items.map((item) => {
      const copy = this.value(item, depth + 1);
      return copy === LEFT_OUT ? undefined : copy;
    });
    return kept.some((item, i) => item !== items[i]) ? kept : items;
  }

  /** The own fields of `value` that hold data, cleaned, keys too; `changed` when one changed or was left out. */
  private ownFields(value: object, depth: number): { fields: Map<string, PropertyDescriptor>; changed: boolean } {
    const fields = new Map<string, PropertyDescriptor>();
    let changed = false;
    for (const key of Reflect.ownKeys(value)) {
      const own = Object.getOwnPropertyDescriptor(value, key);
      const field: PropertyDescriptor | undefined = own?.get !== undefined && own.get === STACK_GETTER ? { value: Reflect.get(value, key) as unknown, writable: true, enumerable: false, configurable: true } : own;
      // A getter is not run, and a symbol's description is not walked.
      const copy = typeof key === 'string' && field !== undefined && 'value' in field ? this.value(field.value, depth + 1) : LEFT_OUT;
      if (typeof key === 'symbol' || field === undefined || copy === LEFT_OUT) {
        changed = true;
        continue;
      }
      const cleaned = this.clean(key);
      // As in the record: keys that come out alike are kept apart.
      const name = cleaned === key ? key : freeKey(cleaned, (candidate) => fields.has(candidate) || Object.hasOwn(value, candidate));
      changed ||= name !== key || copy !== field.value;
      fields.set(name, { ...field, value: copy });
    }
    return { fields, changed };
  }
}

function withFields<T extends object>(target: T, fields: ReadonlyMap<string, PropertyDescriptor>): T {
  for (const [key, field] of fields) Object.defineProperty(target, key, field);
  return target;
}
