/**
 * Secrets a command prints bare, with no name beside them for any other rule to see: the answer
 * of `printenv DB_PASSWORD`, `echo $API_TOKEN`, `gcloud secrets versions access`, `vault kv get
 * -field=password`, `op read`, `security find-generic-password -w`, `kubectl get secret -o
 * jsonpath=…`, `cat /run/secrets/db_password`. A call is known by the command its arguments give
 * (a shell tool's `command`, an argument list); its answer is then recorded without its text, and
 * a short answer's values become secrets of the session, scrubbed from every later record this
 * process makes (the model repeating one in its next turn). The caller still gets the answer: the
 * agent asked for the value; only the evidence goes without it.
 */

import { MAX_DEPTH } from '../spine/canonical.js';
import { REDACTED } from '../spine/redactor.js';
import { pgpassPassword } from './credential-text.js';
import { isSecretLikeKey } from './secret-names.js';

// The options between a command and the one that makes it print a secret: bounded, so a long line
// of repeated commands is not read again from each.
const OPTIONS = String.raw`[^\n|;&]{0,300}?`;
const PIPED = String.raw`[^\n;&]{0,300}?`;

// Commands whose whole output is a secret, whatever it is called.
const SECRET_COMMANDS = new RegExp(
  [
    String.raw`\bgcloud\s+(?:beta\s+)?secrets\s+versions\s+access\b`,
    String.raw`\bgcloud\s+auth\s+(?:application-default\s+)?print-(?:access|identity)-token\b`,
    String.raw`\baws\s+(?:secretsmanager\s+get-secret-value|ecr(?:-public)?\s+get-login-password|codeartifact\s+get-authorization-token|ssm\s+get-parameters?\b${OPTIONS}--with-decryption)\b`,
    String.raw`\baz\s+(?:keyvault\s+secret\s+show|account\s+get-access-token)\b`,
    String.raw`\bvault\s+(?:kv\s+get|read)\b${OPTIONS}-field[= ]`,
    String.raw`\bvault\s+print\s+token\b`,
    String.raw`\bop\s+(?:read\b|item\s+get\b${OPTIONS}--(?:fields|reveal)\b)`,
    String.raw`\b(?:go)?pass\s+show\b`,
    String.raw`\bsecret-tool\s+lookup\b`,
    String.raw`\bsecurity\s+find-(?:generic|internet)-password\b${OPTIONS}\s-[a-z]*w`,
    String.raw`\bdoppler\s+secrets\s+get\b`,
    String.raw`\bgh\s+auth\s+token\b`,
    String.raw`\bkubectl\s+(?:get\s+secrets?\b${OPTIONS}(?:-o\s*=?\s*|--output[= ]|--template[= ])['"]?(?:jsonpath|go-template|\{)|get\s+secrets?\b${PIPED}\|${PIPED}\bbase64\s+(?:-d|-D|--decode)\b|create\s+token\b)`,
    String.raw`\bbw\s+get\s+(?:password|totp)\b`,
    String.raw`\bheroku\s+auth:token\b`,
    String.raw`\bpulumi\s+stack\s+output\b${OPTIONS}--show-secrets\b`,
    // Files that hold secrets and nothing else (Docker's and Kubernetes' secrets, PostgreSQL's
    // password file, by name or by PGPASSFILE), read by any command that prints what it reads.
    String.raw`\b(?:cat|head|tail|less|more|bat|type|Get-Content|grep|egrep|fgrep|rg|sed|awk|tac|nl|cut|sort|uniq|strings|xxd|od|hexdump|base64|tee)\b[^\n|;&]{0,300}?(?:/(?:var/+)?run/+(?:\./+)*secrets/|(?:^|[\s'"/=<])(?:\.pgpass|pgpass\.conf)(?![\w.-])|\$\{?PGPASSFILE\b)`,
  ].join('|'),
  'i',
);

// Commands that print the value of each variable or setting they name, to the end of their part of
// the command line: a secret's name among them makes their output a secret. A variable as the
// POSIX shells, PowerShell (`$env:X`) and cmd (`%X%`) write it; a program's read of its environment
// in code run from the command line (`python -c`, `node -e`).
const VARIABLE = /\$(?:env:)?\{?([A-Za-z_]\w*)|%([A-Za-z_]\w*)%/g;
const SETTING = /([A-Za-z_][\w:.-]*)/g;
const ENVIRONMENT_READ = /\b(?:os\.environ(?:\.get\(|\[)|os\.getenv\(|process\.env\[|ENV\[|getenv\()\s*['"]([A-Za-z_]\w*)['"]|\bprocess\.env\.([A-Za-z_]\w*)/g;
const NAMED_PRINTS: readonly { readonly part: RegExp; readonly names: RegExp }[] = [
  { part: /\b(?:echo|printf|Write-(?:Output|Host)|print)\b([^|;&\n]*)/gi, names: VARIABLE },
  { part: /\bprintenv\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bheroku\s+config:get\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bterraform\s+output\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bpulumi\s+config\s+get\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bredis-cli\b[^|;&\n]*\bconfig\s+get\b([^|;&\n]*)/gi, names: SETTING },
  { part: /\b(?:python[23]?|node|deno|bun|ruby|perl|php)\b[^|;&\n]{0,300}?\s-[ceE]\b([^\n]*)/g, names: ENVIRONMENT_READ },
];

// Looked for before the patterns above: one of these words is in every such command.
const GATE = /printenv|echo|printf|write-|print|secret|token|vault|\bop\s|pass\s|pgpass|security|doppler|heroku|terraform|pulumi|password|decryption|environ|getenv|process\.env|ENV\[|redis-cli/i;

// The arguments that hold a command: a shell tool's, an exec's argument list. Other arguments (a
// file's content, a search's query, a commit's message) may quote a command without running it.
const COMMAND_KEYS = /^(?:command|commands|cmd|script|shell|command_?line|argv|args|arguments|code|input)$/i;

// The arguments that name a file a tool reads (an MCP file server's `path`, an agent's `file_path`),
// and the files whose whole content is a secret: what {@link SECRET_COMMANDS} reads with `cat`.
const PATH_KEYS = /^(?:path|paths|file|files|file_?path|file_?name|target_?file|uri)$/i;
const SECRET_FILE = /(?:^|[\\/])(?:\.pgpass|pgpass\.conf)$|^(?:file:\/\/)?\/+(?:var\/+)?run\/+(?:\.\/+)*secrets\/+./;

// The fields of a tool's answer that say what it is, not what it printed (MCP's content items).
const KEPT_FIELDS: ReadonlySet<string> = new Set(['type', 'mimeType']);

// A secret is printed on a line or a few: a longer answer (a listing beside it) teaches no value.
const MAX_PRINTED_LINES = 4;
const MAX_PRINTED_VALUE = 1024;
// A value that is a path names where a secret is (`$GOOGLE_APPLICATION_CREDENTIALS`), not one.
const PATH_VALUE = /^(?:~?\/|\.{1,2}\/|[A-Za-z]:\\)/;

/** True when the call's arguments run a command whose output is a secret (the arguments a command, its list, or the fields that hold one), or name a file that is one. */
export function printsSecret(args: unknown): boolean {
  return printsIn(args, 0, new Set());
}

function printsIn(value: unknown, depth: number, seen: Set<object>): boolean {
  if (typeof value === 'string') return printsSecretText(value);
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object' || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) {
    const words = argumentList(value);
    if (words !== null) return printsSecretText(words.join(' '));
    for (let i = 0; i < value.length && i in value; i++) if (printsIn(value[i], depth + 1, seen)) return true;
    return false;
  }
  for (const [key, item] of Object.entries(value)) {
    if (COMMAND_KEYS.test(key) && printsIn(item, depth + 1, seen)) return true;
    if (PATH_KEYS.test(key) && namesSecretFile(item)) return true;
  }
  return false;
}

function namesSecretFile(value: unknown): boolean {
  if (typeof value === 'string') return SECRET_FILE.test(value.trim());
  return Array.isArray(value) && value.some((item) => typeof item === 'string' && SECRET_FILE.test(item.trim()));
}

/** An argument list's words (numbers as the shell would read them), or null for another array. */
function argumentList(array: readonly unknown[]): string[] | null {
  const words: string[] = [];
  for (let i = 0; i < array.length; i++) {
    if (!(i in array)) return null;
    const item = array[i];
    if (typeof item === 'string') words.push(item);
    else if (typeof item === 'number') words.push(String(item));
    else return null;
  }
  return words.length > 0 && words.some((word) => /[A-Za-z]/.test(word)) ? words : null;
}

function printsSecretText(command: string): boolean {
  if (!GATE.test(command)) return false;
  if (SECRET_COMMANDS.test(command)) return true;
  return NAMED_PRINTS.some(({ part, names }) => [...command.matchAll(part)].some((match) => [...(match[1] as string).matchAll(names)].some((name) => isSecretLikeKey((name[1] ?? name[2]) as string))));
}

/**
 * A tool's answer as recorded when its command printed a secret: each text it holds replaced; and,
 * when the answer is a few lines, the values they print (each line, without quotes around it, what
 * follows an `=` or a `:` on it, and a `.pgpass` entry's password, spaces and all, as the file
 * writes it and as it is read), for the session to scrub from then on.
 */
function printedOut(result: unknown): { readonly recorded: unknown; readonly printed: readonly string[] } {
  const texts: string[] = [];
  const recorded = withoutTexts(result, texts, 0, new Map());
  const lines = texts.flatMap((text) => text.split('\n').map((line) => line.trim()).filter((line) => line !== ''));
  if (lines.length > MAX_PRINTED_LINES) return { recorded, printed: [] };
  const printed = lines.flatMap((line) => {
    const unquoted = line.replace(/^(["'])(.*)\1$/, '$2');
    const after = /[=:]([^=:\s]+)$/.exec(unquoted)?.[1];
    const password = pgpassPassword(unquoted);
    return [line, unquoted, ...(after === undefined ? [] : [after]), ...(password === null ? [] : [password, password.replace(/\\(.)/g, '$1')])];
  });
  return { recorded, printed: [...new Set(printed)].filter((value) => value.length <= MAX_PRINTED_VALUE && !PATH_VALUE.test(value)) };
}

/** `value` with each non-blank string replaced (gathered in `texts`); an object met again is its copy again, and a cycle is left for the canonical walk to refuse. */
function withoutTexts(value: unknown, texts: string[], depth: number, copies: Map<object, unknown>): unknown {
  if (typeof value === 'string') {
    if (value.trim() === '') return value;
    texts.push(value);
    return REDACTED;
  }
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  const known = copies.get(value);
  if (known !== undefined) return known;
  // Until its copy is made, an object met again (a cycle) is itself: the walk refuses it.
  copies.set(value, value);
  let copy: unknown = value;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      // A hole: the canonical walk refuses the array; it is not walked to its length.
      if (!(i in value)) return value;
      items.push(withoutTexts(value[i], texts, depth + 1, copies));
    }
    copy = items;
  } else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: KEPT_FIELDS.has(key) ? item : withoutTexts(item, texts, depth + 1, copies), enumerable: true, writable: true, configurable: true });
    }
    copy = out;
  }
  copies.set(value, copy);
  return copy;
}

/**
 * A `tool.result` payload as it is to be recorded: when its arguments ran a command that printed
 * a secret, its answer's texts are replaced, and `learn` hears what they printed.
 */
export function withoutPrinted(payload: Readonly<Record<string, unknown>>, learn: (printed: readonly string[]) => void): Readonly<Record<string, unknown>> {
  if (!('result' in payload) || !printsSecret(payload['args'])) return payload;
  const { recorded, printed } = printedOut(payload['result']);
  learn(printed);
  return { ...payload, result: recorded };
}
