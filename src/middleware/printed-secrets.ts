/**
 * Secrets a command prints bare, with no name beside them for any other rule to see: the answer
 * of `printenv DB_PASSWORD`, `echo $API_TOKEN`, `gcloud secrets versions access`, `vault kv get
 * -field=password`, `op read`, `security find-generic-password -w`, `kubectl get secret -o
 * jsonpath=…`. A call is known by its arguments (a shell tool's command, an argument list); its
 * answer is then recorded without its text, and what it printed becomes a secret of the session,
 * scrubbed from every later record (the model repeating it in its next turn). The caller still
 * gets the answer: the agent asked for the value; only the evidence goes without it.
 */

import { REDACTED } from '../spine/redactor.js';
import { isSecretLikeKey } from './secret-names.js';

// The options between a command and the one that makes it print a secret: bounded, so a long line
// of repeated commands is not read again from each.
const OPTIONS = String.raw`[^\n|;&]{0,300}?`;

// Commands whose whole output is a secret, whatever it is called.
const SECRET_COMMANDS = new RegExp(
  [
    String.raw`\bgcloud\s+(?:beta\s+)?secrets\s+versions\s+access\b`,
    String.raw`\bgcloud\s+auth\s+(?:application-default\s+)?print-(?:access|identity)-token\b`,
    String.raw`\baws\s+(?:secretsmanager\s+get-secret-value|ecr(?:-public)?\s+get-login-password|ssm\s+get-parameters?\b${OPTIONS}--with-decryption)\b`,
    String.raw`\baz\s+(?:keyvault\s+secret\s+show|account\s+get-access-token)\b`,
    String.raw`\bvault\s+(?:kv\s+get|read)\b${OPTIONS}-field[= ]`,
    String.raw`\bvault\s+print\s+token\b`,
    String.raw`\bop\s+(?:read\b|item\s+get\b${OPTIONS}--(?:fields|reveal)\b)`,
    String.raw`\b(?:go)?pass\s+show\b`,
    String.raw`\bsecurity\s+find-(?:generic|internet)-password\b${OPTIONS}\s-w\b`,
    String.raw`\bdoppler\s+secrets\s+get\b`,
    String.raw`\bgh\s+auth\s+token\b`,
    String.raw`\bkubectl\s+(?:get\s+secrets?\b${OPTIONS}-o\s*=?\s*['"]?(?:jsonpath|go-template)|create\s+token\b)`,
    String.raw`\bbw\s+get\s+(?:password|totp)\b`,
    String.raw`\bheroku\s+auth:token\b`,
  ].join('|'),
  'i',
);

// Commands that print the value of each variable or setting they name, to the end of their part of
// the command line: a secret's name among them makes their output a secret.
const VARIABLE = /\$\{?([A-Za-z_]\w*)/g;
const SETTING = /([A-Za-z_][\w:.-]*)/g;
const NAMED_PRINTS: readonly { readonly part: RegExp; readonly names: RegExp }[] = [
  { part: /\b(?:echo|printf)\b([^|;&\n]*)/g, names: VARIABLE },
  { part: /\bprintenv\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bheroku\s+config:get\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bterraform\s+output\b([^|;&\n]*)/g, names: SETTING },
  { part: /\bpulumi\s+config\s+get\b([^|;&\n]*)/g, names: SETTING },
];

// Looked for before the patterns above: one of these words is in every such command.
const GATE = /printenv|echo|printf|secret|token|vault|\bop\s|pass\s|security|doppler|heroku|terraform|pulumi|password|decryption/i;

// The fields of a tool's answer that say what it is, not what it printed (MCP's content items).
const KEPT_FIELDS: ReadonlySet<string> = new Set(['type', 'mimeType', 'uri', 'name']);

// How deep an answer is read.
const MAX_DEPTH = 32;

/** True when the call's arguments run a command whose output is a secret: a string of them, or an argument list joined as a shell would run it. */
export function printsSecret(args: unknown): boolean {
  return printsIn(args, 0);
}

function printsIn(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return printsSecretText(value);
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) return printsSecretText(value.join(' '));
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (printsIn(item, depth + 1)) return true;
  return false;
}

function printsSecretText(command: string): boolean {
  if (!GATE.test(command)) return false;
  if (SECRET_COMMANDS.test(command)) return true;
  return NAMED_PRINTS.some(({ part, names }) => [...command.matchAll(part)].some((match) => [...(match[1] as string).matchAll(names)].some((name) => isSecretLikeKey(name[1] as string))));
}

/**
 * A tool's answer as recorded when its command printed a secret: each text it holds replaced; and
 * the words of those texts that stand alone on a line (a value as printed, not a message about
 * it), for the session to scrub from then on.
 */
function printedOut(result: unknown): { readonly recorded: unknown; readonly printed: readonly string[] } {
  const printed: string[] = [];
  const recorded = withoutTexts(result, printed, 0);
  return { recorded, printed };
}

function withoutTexts(value: unknown, printed: string[], depth: number): unknown {
  if (typeof value === 'string') {
    if (value.trim() === '') return value;
    for (const line of value.split('\n')) {
      const word = line.trim();
      if (word !== '' && !/\s/.test(word)) printed.push(word);
    }
    return REDACTED;
  }
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => withoutTexts(item, printed, depth + 1));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(out, key, { value: KEPT_FIELDS.has(key) ? item : withoutTexts(item, printed, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
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
