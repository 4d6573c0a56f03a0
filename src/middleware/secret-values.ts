/**
 * Values a secret's name marks though their own key does not: the value beside a secret's name
 * (`{name: 'DB_PASSWORD', value: …}`, `['DB_PASSWORD', …]`, `['--password', …]`), and the values
 * a secret-like key keeps all the same (a JSON Schema that describes the field, a flag).
 */

import { isSecretLikeKey } from './secret-names.js';

/**
 * The key of `record` holding a value named by its sibling rather than by its key, when that name
 * is a secret's, else null: an env list (`[{name: 'API_TOKEN', value: …}]`), a header list, AWS's
 * `{Name, Value}` and tags' `{Key, Value}`; and the text a browser tool types into a field its
 * sibling describes (Playwright's `{element: 'Password textbox', text: …}`, Puppeteer's
 * `{selector: '#password', value: …}`); a cookie's value (`{name, value, httpOnly, sameSite}`, as
 * a browser's cookie list gives it); a value Terraform marks `sensitive: true`; and a Kubernetes
 * Secret's `data` (or `stringData`), known by its `kind` or its `type` (`Opaque`, `kubernetes.io/tls`). This runs on every recorded object: its keys are compared,
 * not looked up in a set, which cost twice as much (measured).
 */
export function namedSecretKey(record: Readonly<Record<string, unknown>>, keys: readonly string[]): string | null {
  let named = false;
  let valueKey: string | null = null;
  let secretKind = false;
  let cookie = false;
  // A field's description (`element`, `selector`), and a name that is a field's label rather than
  // a key (`Password (required)`, as a form lists its fields): read word by word only when there
  // is a value beside them.
  const descriptions: string[] = [];
  let label: string | null = null;
  let dataKey: string | null = null;
  for (const key of keys) {
    switch (key) {
      case 'httpOnly':
      case 'sameSite':
        cookie = true;
        break;
      case 'sensitive':
        named ||= record[key] === true;
        break;
      case 'kind':
        secretKind ||= record[key] === 'Secret';
        break;
      case 'type': {
        // A list's items as the API server gives them carry no `kind`; a Secret's type names it.
        const type = record[key];
        secretKind ||= type === 'Opaque' || (typeof type === 'string' && type.includes('kubernetes.io/'));
        break;
      }
      case 'data':
      case 'stringData':
        dataKey ??= key;
        break;
      case 'value':
      case 'Value':
      case 'VALUE':
      case 'text':
        valueKey = key;
        break;
      case 'element':
      case 'selector': {
        const description = record[key];
        if (typeof description === 'string') descriptions.push(description);
        break;
      }
      case 'name':
      case 'Name':
      case 'NAME':
      case 'key':
      case 'Key':
      case 'KEY': {
        const name = record[key];
        if (typeof name === 'string') {
          named ||= isSecretLikeKey(name);
          label ??= name;
        }
        break;
      }
    }
  }
  if (secretKind && dataKey !== null) return dataKey;
  if (valueKey === null) return null;
  return named || (cookie && record['name'] !== undefined) || descriptions.some(describesSecret) || (label !== null && describesSecret(label)) ? valueKey : null;
}

// Longer descriptions are prose, not a field's name.
const MAX_DESCRIPTION = 200;

/**
 * True for a field's description or selector that names a secret by one of its words, or two
 * side by side: `Password textbox`, `Confirm password`, `API key input`, `#password`,
 * `input[name="api_token"]`.
 */
export function describesSecret(text: string): boolean {
  if (text.length > MAX_DESCRIPTION) return false;
  const words = text.split(/[^A-Za-z0-9_]+/).filter((word) => word !== '');
  return words.some((word, i) => isSecretLikeKey(word) || (i > 0 && isSecretLikeKey(`${words[i - 1] as string}${word}`)));
}

/** {@link Redactor.secretItems}. */
export function secretItems(array: readonly unknown[]): ReadonlySet<number> | null {
  if (array.length === 2) {
    const name = array[0];
    if (typeof name === 'string' && isSecretLikeKey(name)) return PAIR_VALUE;
  }
  let found: Set<number> | null = null;
  const p = passwordFlag(array);
  for (let i = 0; i < array.length; i++) {
    const item = array[i];
    if (typeof item !== 'string' || item.charCodeAt(0) !== DASH) continue;
    if (p === 'attached' && item.length > 2 && item.startsWith('-p') && !item.startsWith('-p-')) {
      (found ??= new Set()).add(i);
      continue;
    }
    const next = array[i + 1];
    if (typeof next !== 'string' || next.charCodeAt(0) === DASH) continue;
    if ((p === 'next' && item === '-p') || (SECRET_OPTION.test(item) && isSecretLikeKey(item.replace(/^-+/, '')))) (found ??= new Set()).add(i + 1);
  }
  return found;
}

/** {@link Redactor.keepsValue}. */
export function keepsValue(value: unknown): boolean {
  return value === null || typeof value === 'boolean' || fieldSchema(value);
}

const PAIR_VALUE: ReadonlySet<number> = new Set([1]);

/**
 * How an argument list's command takes a password after `-p`: MySQL's attached (`-pSECRET`; a
 * `-p` alone asks for it), the registry logins' and sshpass's as the next argument (`-p SECRET`);
 * null for any other command, whose `-p` is a port, a path or a flag.
 */
function passwordFlag(array: readonly unknown[]): 'attached' | 'next' | null {
  const first = array[0];
  if (typeof first !== 'string') return null;
  const command = first.slice(first.lastIndexOf('/') + 1);
  if (/^(?:mysql|mariadb)[\w-]*$/.test(command)) return 'attached';
  if (command === 'sshpass' || (/^(?:docker|podman|nerdctl|buildah|skopeo|oras|helm)$/.test(command) && array.includes('login'))) return 'next';
  return null;
}
const DASH = 0x2d;
// An option of an argument list (`--password`, `--db-token`, `-password`), its value the next argument.
const SECRET_OPTION = /^--?[A-Za-z][\w-]*$/;
// The words of a JSON Schema that describes a field, none of which holds the field's value.
const SCHEMA_WORDS: ReadonlySet<string> = new Set(['type', 'description', 'title', 'format', 'minLength', 'maxLength', 'pattern', 'nullable', 'deprecated', 'readOnly', 'writeOnly', '$ref', '$comment']);

/** A JSON Schema's description of a field (`"password": {"type": "string", "minLength": 8}`), as MCP's tool lists and model requests carry them. */
function fieldSchema(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.includes('type') && keys.every((key) => SCHEMA_WORDS.has(key));
}
