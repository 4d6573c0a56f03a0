/**
 * Credentials written as text, replaced in every recorded string and key ({@link redactCredentials}):
 * a command, a file a tool read or an answer it gave is free text that no key names. Assignments,
 * options, headers, connection strings, SQL, markup, tables (layout-secrets.ts), JSON text and
 * base64 of text, and the published shapes of API keys.
 */

import { findPii, replacePii, type PiiEntity } from './pii-detectors.js';
import { redactLayouts } from './layout-secrets.js';
import { isSecretLikeKey, SECRET_WORDS } from './secret-names.js';
import { describesSecret, keepsValue, namedSecretKey, secretItems } from './secret-values.js';
import { REDACTED } from '../spine/redactor.js';
import { parseJson } from '../spine/native-json.js';

const API_KEYS: ReadonlySet<PiiEntity> = new Set(['api_key']);

/**
 * Shapes whose every match is a credential, beyond the published API-key shapes of the PII
 * detectors (`sk-…`, `ghp_…`, `AKIA…`, …), and what a recorded text keeps of a match.
 */
const CREDENTIAL_SHAPES: readonly { readonly name: string; readonly pattern: RegExp; readonly kept: string }[] = [
  // Not after a `-` (as `\b` allowed): from each `eyJ` of a dashed run, the run was read to its end.
  { name: 'a JSON web token', pattern: /(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, kept: REDACTED },
  // To its end line, or to the end of the text when it was cut before it.
  { name: 'a private key', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)/g, kept: REDACTED },
  { name: 'an HTTP credential', pattern: /\b(Bearer|BEARER|bearer|Basic|BASIC)(\s+)[A-Za-z0-9._~+/=-]{16,}/g, kept: `$1$2${REDACTED}` },
  // The user may be empty (`redis://:pw@cache`), and the password may hold an `@` left unencoded:
  // it runs to the authority's last one. A password already masked (`***`, as a store's label shows
  // one) is left as it is.
  // A scheme is short (32 characters here): read to any length, a run of scheme characters (`a-a-a…`) was read again from each word in it.
  { name: 'a password in a URL', pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s/:@]*:)(?!\*+@)[^\s/?#]+@/gi, kept: `$1${REDACTED}@` },
  // `curl -u user:password`.
  { name: 'a user and password', pattern: /(?<![\w-])(-u|--user)([ \t]+)([^\s:"'`]+:)(?!\*+(?:\s|$))[^\s"'`]+/g, kept: `$1$2$3${REDACTED}` },
  // `https://<token>@github.com/…`: a user name that long is a token.
  { name: 'a token in a URL', pattern: /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[A-Za-z0-9_-]{20,}@/gi, kept: `$1${REDACTED}@` },
  // Go's MySQL DSN, `user:password@tcp(host)/db`.
  { name: 'a password in a DSN', pattern: /(?<![\w./-])([\w.-]+:)[^\s@:"'/]+@(?=(?:tcp|unix)\()/g, kept: `$1${REDACTED}@` },
  // A webhook's URL is its credential: Slack's path after the workspace, Discord's token.
  { name: 'a webhook URL', pattern: /(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+|(discord(?:app)?\.com\/api\/webhooks\/\d+\/)[A-Za-z0-9_-]+/gi, kept: `$1$2${REDACTED}` },
  // A signed URL's signature (S3, GCS, an Azure SAS): whoever holds the URL holds the access.
  { name: 'a signed URL', pattern: /([?&](?:X-Amz-Signature|X-Goog-Signature|sig)=)[^&\s"'#]+/gi, kept: `$1${REDACTED}` },
  // A password's hash as /etc/shadow, .htpasswd, a users table or a directory keep it, cracked
  // offline as easily as it is copied: crypt's md5, sha256 and sha512 (`$6$salt$hash`), bcrypt,
  // yescrypt, scrypt, Argon2, passlib's, Django's and Werkzeug's PBKDF2 and scrypt, LDAP's
  // `{SSHA}`; inside a wrapper too (Django's `bcrypt_sha256$$2b$…`). Each by its whole layout, so a
  // shell's `"$1$2$3"` is not one.
  {
    name: 'a password hash',
    pattern:
      /(?<![\w$])\$(?:1|5|6|apr1|y|gy|7)\$(?:rounds=\d+\$)?(?:[./A-Za-z0-9]+\$){1,2}[./A-Za-z0-9]{22,}|\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]{16,}|\$pbkdf2(?:-sha\d+)?\$\d+\$[./A-Za-z0-9]+\$[./A-Za-z0-9]{16,}|(?<![\w$])(?:pbkdf2_sha(?:1|256)\$\d+|pbkdf2:sha\d+(?::\d+)?|scrypt:\d+:\d+:\d+)\$[A-Za-z0-9./+=]+\$[A-Za-z0-9+/=]{16,}|\{(?:SSHA|SHA|SMD5|MD5)(?:256|384|512)?\}[A-Za-z0-9+/=]{12,}/g,
    kept: REDACTED,
  },
];

/**
 * An `Authorization` or `Cookie` header's whole value, to its line's end or its closing quote:
 * any scheme (`Bot …`, `SSWS …`), and every cookie of the header, not the first alone.
 */
const HEADER_VALUE = /(?<![\w-])(?<name>(?:proxy-)?authorization|cookie)[ \t]*:[ \t]*(?<bare>[^\s"'](?:[^"'\r\n]*[^\s"'])?)/gi;

/**
 * A name with a secret's word among its first 64 characters, in group `name`, taken whole: read
 * by a look ahead, it is not given back a character at a time, and one place of a long run of name
 * characters (`a-a-a-…`) is not read again from every other. At most 256 characters.
 */
const SECRET_NAME = String.raw`(?=[\w.-]{0,64}?(?:${SECRET_WORDS}))(?=(?<name>[A-Za-z_][\w.-]{0,255}))\k<name>`;

// A value in double quotes, escapes and all (group `dq`); in single quotes (`sq`), as most text
// writes them, or with a quote doubled inside, as YAML does.
const DQ_VALUE = String.raw`"(?<dq>(?:[^"\\\r\n]|\\.)*)"`;
const SQ_VALUE = String.raw`'(?<sq>[^'\r\n]*)'`;
const YAML_SQ_VALUE = String.raw`'(?<sq>(?:[^'\r\n]|'')*)'`;

/**
 * A short field of an object written as text, its key quoted or not: `"Type": "SecureString"`,
 * `slotSetting: false`, `description: 'db'`, an object or a list of its own with none inside
 * (`"tags": {"env": "prod"}`, over lines too). What may stand between a name and its value.
 */
const OBJECT_FIELD = String.raw`(?:"[\w.-]{1,64}"|'[\w.-]{1,64}'|[A-Za-z_][\w.-]{0,63})[ \t]*:[ \t]*(?:"(?:[^"\\\r\n]|\\.){0,128}"|'[^'\r\n]{0,128}'|\{[^{}\[\]]{0,512}\}|\[[^{}\[\]]{0,512}\]|[^\s,{}\[\]"'](?:[^,{}\[\]"'\r\n]{0,62}[^\s,{}\[\]"'])?)`;

// A variable's or a setting's name, quoted: what an environment reader is given.
const NAME_LITERAL = String.raw`(?:"[\w.-]+"|'[\w.-]+')`;

/**
 * What a bare value is when it is code that reads a secret from elsewhere, not the secret, and
 * ends there (a `;`, `,`, a bracket, a comment or the line's end after it): a call given nothing
 * or a prompt (`getToken()`, `prompt("Password: ")`, `await getpass()`), an environment or settings
 * reader given a variable's name (`os.getenv("API_KEY")`, `env('DB_PASSWORD')`), an environment
 * lookup (`process.env.DB_PASSWORD`, `os.environ["TOKEN"]`), a type (`apiKey: string;`). A call
 * given anything else (`SecretStr("…")`, `Summer(2024)`, a reader's default), or followed by more
 * (`process.env.API_KEY ?? "…"`), may hold the secret, and is not this.
 */
const CODE_VALUE = String.raw`(?:(?:(?:await|new)[ \t]+)?[A-Za-z_$]+(?:\.[A-Za-z_$]+)*\([ \t]*(?:"[A-Za-z][A-Za-z ']{0,64}:[ \t]?"|'[A-Za-z][A-Za-z ]{0,64}:[ \t]?')?[ \t]*\)|(?:os\.getenv|os\.environ\.get|getenv|System\.getenv|ENV\.fetch|Deno\.env\.get|env|config)\([ \t]*${NAME_LITERAL}[ \t]*\)|(?:process\.env|import\.meta\.env|Bun\.env)(?:\.[\w$]+|\[${NAME_LITERAL}\])|(?:os\.environ|ENV)\[${NAME_LITERAL}\]|(?:string|str|bytes|SecretStr)(?:[ \t]*\|[ \t]*(?:undefined|null|None))?)(?=[ \t]*(?:[;,)}\]\r\n#]|\/\/|$))`;

// A call's arguments in their parentheses (one call deep inside them), taken with the value they follow (`SecretStr("a b")`): text in them may be the secret.
const CALL_ARGUMENTS = String.raw`\((?:[^()\r\n]|\([^()\r\n]{0,256}\)){0,256}\)`;

// A call with its arguments, a static one or a method's too: `env('…', '…')`, `Hash::make('…')`, `$crypt->decrypt('…')`.
const CALLED = String.raw`[A-Za-z_$][\w.$]*(?:(?:::|->)[A-Za-z_]\w*)*${CALL_ARGUMENTS}`;

// A call made with `new` or `await`, taken whole: `new SecretStr("…")`.
// The values a reader falls back on, taken with it: `process.env.API_TOKEN ?? "…"`, `|| '…'`, `?: '…'`, `or "…"`.
const FALLBACKS = String.raw`(?:[ \t]*(?:\?\?|\|\||\?:|or(?=[ \t]))[ \t]*(?:"(?:[^"\\\r\n]|\\.)*"|'[^'\r\n]*'|(?:${CALL_ARGUMENTS}|[^\s"'${'`'},;&)}\](]|\()+))*`;
const CALL_KEYWORD = String.raw`(?:new|await)[ \t]+(?=[\w$.]+\()`;

/**
 * A value given to a name, read as {@link ASSIGNMENT} says; {@link PAIR_IN_LINE} reads its values
 * the same way. A bare value starts with neither `{` nor `[`: what follows is a structure's text.
 */
const ASSIGNED_VALUE = String.raw`(?:${DQ_VALUE}|${SQ_VALUE}|${'`'}(?<bq>[^${'`'}\r\n]*)${'`'}|(?<esc>\\+)"(?<eq>[^\r\n]*?)(?:(?<!\\)(?<eqEnd>(?:\k<esc>\k<esc>\\\\)*)\k<esc>"|(?=[\r\n]|$))|(?!${CODE_VALUE})(?<bare>(?:(?:Bearer|Basic|Token|Digest)[ \t]+|${CALL_KEYWORD})?(?:\[redacted\]|\[\]|${CALL_ARGUMENTS}|[^\s"'${'`'},;&)}\]{[(=]|\()(?:\[redacted\]|${CALL_ARGUMENTS}|[^\s"'${'`'},;&)}\](]|\()*${FALLBACKS}))`;

// A declared type (`str`, `Optional[str]`, `string | undefined`, `Secret<string>`) between a name and the ` =` giving it its value (`sid=…` after a colon is a header's value).
const TYPE_NAME = String.raw`(?:&(?:'[A-Za-z_]\w*[ \t]+)?)?[A-Za-z_$][\w$.]*(?:<[^<>=\r\n]{0,64}>|\[[^\[\]=\r\n]{0,64}\])?`;
const TYPE = String.raw`${TYPE_NAME}(?:[ \t]*\|[ \t]*${TYPE_NAME}){0,4}`;

/** An LDIF attribute given as base64 (`userPassword:: e1NTSEF9…`, its options after a `;`): the second colon is no value. */
const LDIF_BASE64_VALUE = /^(?<name>[A-Za-z][\w-]{0,63})(?:;[\w-]+)*::[ \t]*(?<bare>[A-Za-z0-9+/]+=*)[ \t]*\r?$/gm;

/**
 * A `.pgpass` entry (`host:port:database:user:password`, `*` for any, `\:` a colon in a field),
 * looked for only in a text that names the file: its lines name nothing else. Its host starts a
 * line, or follows a space, a quote (a backtick too, as Markdown writes one) or an `=`, and holds
 * neither `=` nor `&` (so a query string is not read again from each of its `=`); its password
 * holds no bare colon (a MAC address is no entry), and may hold spaces: on a line of its own (the
 * file, a here-document) it runs to the line's end; after a quote, to the closing one; bare on a
 * command line, to a word that starts with a shell's operator (`>> ~/.pgpass`). A password's words
 * and the spaces between them share no character, so each is read once. The fields before the
 * password are kept: group 1, 3 or 4.
 */
const PGPASS_FIELDS = String.raw`(?:[^\s:'"${'`'}\\=&]|\\[:\\])+:(?:\d{1,5}|\*):(?:[^\s:'"${'`'}\\]|\\[:\\])+:(?:[^\s:'"${'`'}\\]|\\[:\\])+:`;
const PGPASS_LINE_PASSWORD = String.raw`(?:[^\s:\\]|\\.)+(?:[ \t]+(?:[^\s:\\]|\\.)+)*`;
const PGPASS_ENTRY = new RegExp(
  [
    String.raw`^([ \t]*${PGPASS_FIELDS})${PGPASS_LINE_PASSWORD}(?=[ \t]*\r?$)`,
    String.raw`(?<=(['"${'`'}]))(${PGPASS_FIELDS})(?:(?!\2)[^\r\n:\\]|\\.)+(?=\2)`,
    String.raw`(?<![^\s'"${'`'}=])(${PGPASS_FIELDS})(?:[^\s:'"${'`'}\\]|\\.)+(?:[ \t]+(?![|;&<>])(?:[^\s:'"${'`'}\\]|\\.)+)*(?![^\s'"${'`'}])`,
  ].join('|'),
  'gm',
);
const PGPASS_LINE = new RegExp(String.raw`^[ \t]*${PGPASS_FIELDS}(${PGPASS_LINE_PASSWORD})[ \t]*\r?$`);
const PGPASS = /pgpass/i;

/** The password of a line that is a `.pgpass` entry ({@link PGPASS_ENTRY}'s, on a line of its own), as the file writes it; null for another line. */
export function pgpassPassword(line: string): string | null {
  return PGPASS_LINE.exec(line)?.[1] ?? null;
}

/** A shell assignment whose value is on the next line, after a backslash that continues the line. */
const CONTINUED_VALUE = new RegExp(String.raw`(?<![\w.-])${SECRET_NAME}[ \t]*=[ \t]*\\\r?\n[ \t]*(?:${DQ_VALUE}|${SQ_VALUE}|(?<bare>[^\s"'\\]+))`, 'gi');

/**
 * A value given to a name: `DB_PASSWORD=…` (an env file, a shell), `"api_key": "…"` (JSON as
 * text, and JSON text inside a JSON string: `\"api_key\":\"…\"`), `token: …` (YAML, a header),
 * `--password=…`, `?token=…&`. Only a name with a secret's word in it is taken (so `https://…` is
 * not read as a name whose value hides a `?token=` after it); whether it is a secret's name is then
 * {@link isSecretLikeKey}'s answer, as for a key of a payload. The value is taken quoted, or up to
 * a space or a separator; a scheme word (`Authorization: Bearer …`) goes with what follows it.
 * A value in quotes escaped k times (`\"…\"`: k = 1, `\\\"…\\\"`: k = 3) ends at the first quote
 * with k + (2k + 2)·n backslashes before it: the closing quote's escape, after n backslashes of the
 * value's own (2k + 2 each once escaped; a quote inside the value has 2k + 1). A value cut before
 * its closing quote runs to the line's end; a quote after a name that one opened, and that ends
 * there, closes them both (`prompt("Password: ")`), and is no value's (but `sh -c 'A_TOKEN='…' x'`
 * reopens it: that one is). A declared type goes with the name (`password: str = "…"`, Go's `:=`). A value given as an object's `value` field
 * (`"DB_PASSWORD": {"value": "…"}`, `token: {description: db, value: …}`) is taken as given to
 * the name.
 */
const ASSIGNMENT = new RegExp(
  String.raw`(?<![\w.])${SECRET_NAME}(?:\\*["']\]?|\])?[ \t]*(?::[ \t]*${TYPE}(?:[ \t]+=|=(?=[ \t]*["']))(?![=~>])|:=|:(?!=)|[?+]?=(?![=~>]))(?!(?<=(?<nameOpen>["'])[\w.-]{1,256}[ \t]*(?::=?|=))[ \t]*\k<nameOpen>(?=[\s),;\]}+]|$))[ \t]*(?:\{(?:\s*${OBJECT_FIELD}[ \t]*,){0,8}?\s*(?<valueField>\\*["']?)value\k<valueField>[ \t]*:[ \t]*)?${ASSIGNED_VALUE}`,
  'gi',
);

/**
 * A value given to a secret-like name by an arrow, as PHP's arrays and Perl's and Ruby's hashes
 * write them (`'api_key' => '…',`, `:token => "…"`, Laravel's `'password' => env('DB_PASSWORD',
 * '…')`, `Hash::make('…')`), quoted or, after a quoted name or a symbol, a call, and ending there
 * (or at a comment): a JavaScript function's arrow (`token => "Bearer " + token`, `token =>
 * revoke(token)`) goes on.
 */
const ARROW_ASSIGNMENT = new RegExp(
  String.raw`(?<![\w.])${SECRET_NAME}["']?[ \t]*=>[ \t]*(?:${DQ_VALUE}|${SQ_VALUE}|(?<=["':][\w.-]{1,256}["']?[ \t]*=>[ \t]*)(?!${CODE_VALUE})(?<bare>${CALLED}))(?=[ \t]*(?:[,;)}\]\r\n#]|\/\/|$))`,
  'gi',
);

/** PHP's `define('DB_PASSWORD', '…')`, as WordPress's configuration writes it (a call's value too: `getenv_docker('…', '…')`). */
const DEFINED_CONSTANT = new RegExp(String.raw`(?<![\w$])define\([ \t]*(?<defineQuote>["'])${SECRET_NAME}\k<defineQuote>[ \t]*,[ \t]*(?:${DQ_VALUE}|${SQ_VALUE}|(?!${CODE_VALUE})(?<bare>${CALLED}))`, 'gi');

/**
 * A YAML block scalar's header (`|`, `>-`, `|2+`, a comment after it) and its lines: those more
 * indented than the line of its name, whose indent is the group `indent` (`lead`), and the blank
 * ones among them. Every line is the value's.
 */
function blockScalar(indent = 'lead'): string {
  return String.raw`(?<block>[|>][1-9+-]{0,2}[ \t]*(?:#[^\r\n]*)?(?:\r?\n(?:\k<${indent}>[ \t]+[^\r\n]*|[ \t]*$))+)`;
}
const BLOCK_SCALAR = blockScalar();

/**
 * A secret-like name that starts a line, as YAML or a header block writes it (`password: correct
 * horse battery staple`), or an env file (`A_TOKEN=two words here`, `export DB_PASSWORD=…`): its
 * value, unquoted, runs to the line's end, spaces and all (but see {@link lineValue} for a text of
 * one line), or to a `,`, `;` or
 * `&` that starts another name's value (`password: null, auth: true`), unless it starts a flow
 * mapping (`token: {value: …}`: {@link ASSIGNMENT}'s); after a block scalar's
 * header (`password: |`), it is the lines below. The line's start is matched, not looked behind
 * for: a look behind from every place in a run of spaces took time growing with the square of its
 * length.
 */
const LINE_VALUE = new RegExp(
  String.raw`^(?<lead>[ \t]*)(?:-[ \t]+|export[ \t]+)?${SECRET_NAME}(?:[ \t]*:[ \t]*${TYPE}[ \t]+=(?![=~>])[ \t]*|[ \t]*:(?![ \t]*${TYPE}[ \t]+=[ \t]*["'])[ \t]+|(?<env>=)(?![=~>])(?![ \t])|[ \t]*=(?![=~>])[ \t]*)(?:${BLOCK_SCALAR}|(?!${CODE_VALUE})(?<bare>[^\s"'{](?:(?![,;&][ \t]*[A-Za-z_][\w.-]*[ \t]*[:=])[^\r\n])*))`,
  'gim',
);

/**
 * A secret named in words at a line's start, as tools print what they made: `API Key: …`,
 * `Unseal Key 1: …`, `Initial Root Token: …`, `Secret access key: …`; and a table's row, its name
 * and value apart by two spaces or more, as Vault prints one (`password    …`). The value runs to
 * the line's end. A declaration (`const password: string = …`) is code's, and {@link ASSIGNMENT}'s.
 */
const LABEL_VALUE = new RegExp(
  String.raw`^(?<lead>[ \t]*)(?!(?:const|let|var|val|def|pub|public|private|protected|static|readonly|export|final|fn|func|type|interface|declare)[ \t])(?<name>(?:[A-Za-z][\w-]{0,23}[ \t]){0,3}[A-Za-z][\w-]{0,23}(?:[ \t]\d{1,2})?)(?:[ \t]*:[ \t]+|(?<gap>[ \t]{2,}))(?<bare>[^\s"'{\[|>][^\r\n]*)`,
  'gm',
);

/**
 * A name given as text beside its value, on the line above it, as a Kubernetes or CI file lists
 * env (`- name: DB_PASSWORD` then `value: …`; `key:` as tags write it, and JSON text over lines):
 * the value in quotes, to the line's end, or a block scalar's lines.
 */
const NAMED_VALUE = new RegExp(
  String.raw`^[ \t]*(?:-[ \t]+)?(?<keyQuote>["']?)(?:name|key)\k<keyQuote>[ \t]*:[ \t]*(?<nameQuote>["']?)${SECRET_NAME}\k<nameQuote>[ \t]*(?:,[ \t]*)?\r?\n(?:[ \t]*(?:#[^\r\n]*)?\r?\n){0,3}(?<lead>[ \t]*)(?<valueQuote>["']?)value\k<valueQuote>[ \t]*:[ \t]*(?:${DQ_VALUE}|${YAML_SQ_VALUE}|${BLOCK_SCALAR}|(?<bare>[^\s"'][^\r\n]*))`,
  'gim',
);

/**
 * A name and its value as `redis-cli` numbers a reply's items (`CONFIG GET requirepass`,
 * `HGETALL user:1`): `1) "requirepass"`, then `2) "…"` on the next line.
 */
const REPLY_PAIR = new RegExp(String.raw`^[ \t]*\d+\)[ \t]+"${SECRET_NAME}"\r?\n[ \t]*\d+\)[ \t]+${DQ_VALUE}`, 'gm');

/**
 * {@link NAMED_VALUE} the other way round: `- value: …` then `name: DB_PASSWORD` on the next line.
 * An unquoted value runs to the line's end, taken once (a look ahead read as a whole): given back
 * a character at a time, each trailing space was read again to the line's end.
 */
const VALUE_NAMED = new RegExp(
  String.raw`^[ \t]*(?:-[ \t]+)?(?<valueQuote>["']?)value\k<valueQuote>[ \t]*:[ \t]*(?:${DQ_VALUE}|${YAML_SQ_VALUE}|(?=(?<bare>[^\s"'][^\r\n]*))\k<bare>)(?<tail>[ \t]*(?:,[ \t]*)?\r?\n[ \t]*(?<keyQuote>["']?)(?:name|key)\k<keyQuote>[ \t]*:[ \t]*(?<nameQuote>["']?)${SECRET_NAME}\k<nameQuote>)(?![\w.-])`,
  'gim',
);

// A field that names the value beside it (`name`, `Key`, `ParameterKey`, `OptionName`), and the field holding that value (`value`, `ParameterValue`).
const NAME_FIELD = String.raw`[A-Za-z]*(?:key|name)`;
const VALUE_FIELD = String.raw`[A-Za-z]*value`;

// A secret's name as a name field gives it, as {@link SECRET_NAME} reads one: a parameter's path too (`/prod/db/password`).
const SECRET_PATH_NAME = String.raw`(?=[\w./-]{0,128}?(?:${SECRET_WORDS}))(?=(?<name>[A-Za-z_/][\w./-]{0,255}))\k<name>`;

// The fields that may stand between a name field and its value field, on one line or over lines (pretty-printed JSON): up to eight, each short (`"Type": "SecureString"`, `Type=String`).
const OTHER_FIELDS = String.raw`(?:[ \t]*,\s*(?:${OBJECT_FIELD}|[A-Za-z][\w.-]{0,63}=[^\s,"'=]{0,128})){0,8}`;

/**
 * A name and its value as fields of one object written on one line: the AWS command line's
 * `Name=DB_PASSWORD,Value=…` and `ParameterKey=DbPassword,ParameterValue=…`, JSON text's
 * `{"key": "DB_PASSWORD", "value": "…"}` (escaped too, as {@link ASSIGNMENT} reads it), other
 * fields between them or not (`{"Name": "/prod/db/password", "Type": "SecureString", "Value": "…"}`).
 */
const PAIR_IN_LINE = new RegExp(
  String.raw`(?<![\w.])${NAME_FIELD}(?<nameFieldQuote>\\*["']?)[ \t]*[:=][ \t]*(?<nameQuote>\\*["']?)${SECRET_PATH_NAME}\k<nameQuote>${OTHER_FIELDS}[ \t]*(?:[,;&]\s*)?(?<valueFieldQuote>\\*["']?)${VALUE_FIELD}\k<valueFieldQuote>[ \t]*[:=][ \t]*${ASSIGNED_VALUE}`,
  'gi',
);

/**
 * What a browser tool types, as JSON text (a model's tool call, its arguments a string): a field's
 * description and the text typed into it, `{"element": "Password textbox", "ref": "e3", "text":
 * "…"}`, `{"selector": "#password", "value": "…"}`, escaped too (the fields between are short
 * strings and scalars, in the same quotes).
 */
const DESCRIBED_FIELD = new RegExp(
  String.raw`(?<fieldQuote>\\*")(?:element|selector)\k<fieldQuote>[ \t]*:[ \t]*\k<fieldQuote>(?<field>[^"\\\r\n]{1,128})\k<fieldQuote>(?:[ \t]*,\s*\k<fieldQuote>[\w.-]{1,64}\k<fieldQuote>[ \t]*:[ \t]*(?:\k<fieldQuote>[^"\\\r\n]{0,128}\k<fieldQuote>|[\w.+-]{1,64})){0,8}[ \t]*,\s*\k<fieldQuote>(?:text|value)\k<fieldQuote>[ \t]*:[ \t]*${ASSIGNED_VALUE}`,
  'g',
);

/**
 * {@link PAIR_IN_LINE} the other way round: `Value=…,Name=DB_PASSWORD`, `{"value": "…", "type":
 * "string", "key": "DB_PASSWORD"}`. A bare value is read up to 256 characters: each `value` word
 * of a long run is a place a match may start.
 */
const PAIR_IN_LINE_VALUE_FIRST = new RegExp(
  String.raw`(?<![\w.])(?<valueFieldQuote>["']?)${VALUE_FIELD}\k<valueFieldQuote>[ \t]*[:=][ \t]*(?:${DQ_VALUE}|${SQ_VALUE}|(?<bare>[^\s"',;&)}\]]{1,256}))(?<tail>${OTHER_FIELDS}[ \t]*[,;&]\s*(?<nameFieldQuote>["']?)${NAME_FIELD}\k<nameFieldQuote>[ \t]*[:=][ \t]*(?<nameQuote>["']?)${SECRET_PATH_NAME}\k<nameQuote>)(?![\w./-])`,
  'gi',
);

// A line that is not a `value:` field's.
const NOT_VALUE_FIELD = String.raw`(?!["']?value["']?[ \t]*:)`;

/**
 * A secret-like name whose value is a field of its own on a line below, as GitLab CI writes a
 * variable (`DB_PASSWORD:` then, one level in, `value: …`, quoted, bare or a block scalar): the
 * `value:` of the name's own mapping, after at most eight other lines (its `description:`, blank
 * lines, a child's lines), never a deeper mapping's.
 */
const NESTED_VALUE = new RegExp(
  String.raw`^(?<lead>[ \t]*)(?<nameQuote>["']?)${SECRET_NAME}\k<nameQuote>[ \t]*:[ \t]*\r?\n(?:[ \t]*\r?\n){0,2}(?<child>\k<lead>[ \t]+)(?=\S)(?:${NOT_VALUE_FIELD}[^\r\n]*\r?\n(?:[ \t]*\r?\n|\k<child>[ \t]+(?=\S)[^\r\n]*\r?\n|\k<child>(?=\S)${NOT_VALUE_FIELD}[^\r\n]*\r?\n){0,8}\k<child>(?=\S))?(?<valueQuote>["']?)value\k<valueQuote>[ \t]*:[ \t]*(?:${DQ_VALUE}|${YAML_SQ_VALUE}|${blockScalar('child')}|(?<bare>[^\s"'|>][^\r\n]*))`,
  'gim',
);

// The methods browser automation types into a field with (Playwright, Puppeteer, Selenium, WebdriverIO).
const FILL_METHODS = 'fill|type|setValue|set_value|sendKeys|send_keys|pressSequentially|press_sequentially';
// A field's selector or label in quotes (another kind of quote may stand inside: `'input[name="password"]'`).
const FIELD = String.raw`(?<fieldQuote>["'])(?<field>(?:(?!\k<fieldQuote>)[^\r\n]){1,128})\k<fieldQuote>`;

/**
 * What code types into a field it names, as browser automation writes it: `page.fill('#password',
 * '…')`, `getByLabel('Password').fill('…')`, `find_element(By.ID, "password").send_keys("…")`;
 * and the password `keyring.set_password(service, user, '…')` stores.
 */
const FILLED_FIELDS: readonly RegExp[] = [
  new RegExp(String.raw`\.(?:${FILL_METHODS})\([ \t]*${FIELD}[ \t]*,[ \t]*(?:${DQ_VALUE}|${SQ_VALUE})`, 'g'),
  new RegExp(String.raw`\((?:[^()"'\r\n]{0,64},[ \t]*)?${FIELD}[ \t]*\)[ \t]*\.(?:${FILL_METHODS})\([ \t]*(?:${DQ_VALUE}|${SQ_VALUE})`, 'g'),
  new RegExp(String.raw`(?<field>set_password)\((?:[ \t]*(?:"[^"\r\n]*"|'[^'\r\n]*'|[\w.]+)[ \t]*,){2}[ \t]*(?:${DQ_VALUE}|${SQ_VALUE})`, 'g'),
];

/**
 * A Terraform variable whose name is a secret's, and its `default` (`variable "db_password" {
 * default = "…" }`, on one line or over lines, other arguments before it).
 */
const TERRAFORM_DEFAULT = new RegExp(String.raw`^[ \t]*variable[ \t]+"${SECRET_NAME}"[ \t]*\{[^{}]{0,512}?(?<![\w-])default[ \t]*=[ \t]*(?:${DQ_VALUE}|(?<bare>[^\s"{\[][^\s}]*))`, 'gim');

// A command's argument, and the arguments before the one sought (each read once: they are split by spaces).
const ARGUMENTS = String.raw`(?:[ \t]+[^\s|;&<>]+){0,32}?[ \t]+`;
// A password given as an argument: a word (`bare`), or in quotes.
const ARGUMENT_WORD = String.raw`(?<bare>[^\s"'${'`'}|;&<>]+)`;
const ARGUMENT_VALUE = String.raw`(?:"(?<dq>[^"\r\n]*)"|${SQ_VALUE}|${ARGUMENT_WORD})`;
// A command's name, not inside a path or another word.
const TOOL = String.raw`(?<![\w/.-])`;
// A `-p` value that is a port mapping (`docker run -p 8080:80`), not a password.
const NOT_PORTS = String.raw`(?!\d+(?::\d+)*(?:\/(?:tcp|udp))?(?=[\s"']|$))`;
// An Oracle user: a name, or one in double quotes.
const ORACLE_USER = String.raw`(?:"[^"\r\n/@]+"|[A-Za-z_][\w$#.]*)`;
// Oracle's `user/password`, either in double quotes, or the logon whole in quotes (`"sys/… as sysdba"`: the value is `inner`).
const ORACLE_LOGON = String.raw`(?:${ORACLE_USER}\/(?:"(?<dq>[^"\r\n]*)"|(?<bare>[^\s@"'\/()][^\s@"']*))|["']${ORACLE_USER}\/(?<inner>[^\s@"'\/]+))`;

/**
 * Passwords commands take as arguments, which no name marks: MySQL's `-p<password>` (attached: a
 * `-p` alone asks for it); `-p <password>` of the registry logins (`docker login`, podman's,
 * nerdctl's, helm's, `az login`), `sshpass`, `mongosh` and its tools; `redis-cli -a` and its
 * `AUTH`; the LDAP tools' `-w` and `ldappasswd`'s `-s` and `-a`; `smbclient -U user%password`;
 * `gh secret set NAME --body <secret>`; OpenSSL's `pass:<password>` and `-k`; keytool's
 * `-storepass`, `-keypass` and `-new`; a secret echoed or given as a here-string to
 * `--password-stdin` or `gh secret set`; and Oracle's `user/password` logon (`sqlplus
 * scott/tiger@db`, `expdp`, `rman` and its `target`/`catalog`, `userid=`, and SQL*Plus's
 * `CONNECT` at a line's start; `sqlplus / as sysdba` names no user).
 */
const COMMAND_PASSWORDS: readonly RegExp[] = [
  new RegExp(String.raw`${TOOL}(?:mysql|mariadb)[\w-]*${ARGUMENTS}-p(?=[^\s-])${ARGUMENT_VALUE}`, 'g'),
  new RegExp(
    String.raw`${TOOL}(?:(?:(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry|az)[ \t]+login|mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport)${ARGUMENTS}|sshpass[ \t]+)-p(?:[ \t]+|(?=\S))${NOT_PORTS}${ARGUMENT_VALUE}`,
    'g',
  ),
  new RegExp(String.raw`${TOOL}(?:redis-cli${ARGUMENTS}(?:-a|--pass)|ldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn)${ARGUMENTS}-w|keytool${ARGUMENTS}-new|openssl${ARGUMENTS}-k)[ \t]+${ARGUMENT_VALUE}`, 'g'),
  // ldappasswd's new password (`-s`) and old one (`-a`), each, beside its bind password.
  new RegExp(String.raw`(?<=${TOOL}ldappasswd[^\r\n|;&]{0,200})[ \t]-[sa][ \t]+${ARGUMENT_VALUE}`, 'g'),
  new RegExp(String.raw`${TOOL}redis-cli${ARGUMENTS}(?:AUTH|auth)(?:[ \t]+[^\s|;&<>]+)?[ \t]+${ARGUMENT_VALUE}(?=[ \t]*(?:$|[\r\n|;&]))`, 'g'),
  new RegExp(
    String.raw`${TOOL}(?:smbclient|rpcclient|smbcacls|smbget)${ARGUMENTS}(?:-U[ \t]*|--user[= \t])(?:"[^"%\r\n]*%(?<dq>[^"\r\n]*)"|'[^'%\r\n]*%(?<sq>[^'\r\n]*)'|[^\s%"']+%${ARGUMENT_WORD})`,
    'g',
  ),
  new RegExp(String.raw`${TOOL}gh[ \t]+(?:secret|variable)[ \t]+set${ARGUMENTS}(?:--body|-b)(?:[ \t]+|=|(?=[^\s-]))${ARGUMENT_VALUE}`, 'g'),
  new RegExp(String.raw`(?<![\w-])-pass(?:in|out)?[ \t]+(?:"pass:(?<dq>[^"\r\n]*)"|'pass:(?<sq>[^'\r\n]*)'|pass:${ARGUMENT_WORD})`, 'g'),
  new RegExp(String.raw`(?<![\w-])-(?:src|dest|new)?(?:store|key)pass[ \t]+${ARGUMENT_VALUE}`, 'g'),
  // SQL Server's tools' `-P`; ssh-keygen's new and old passphrases; HTTPie's `-a user:…`; Windows' `net user NAME …`.
  new RegExp(String.raw`${TOOL}(?:sqlcmd|bcp|osql|isql)${ARGUMENTS}-P[ \t]*${ARGUMENT_VALUE}`, 'g'),
  new RegExp(String.raw`${TOOL}ssh-keygen${ARGUMENTS}-[NP][ \t]+${ARGUMENT_VALUE}`, 'g'),
  new RegExp(String.raw`${TOOL}(?:https?|xh)${ARGUMENTS}(?:-a|--auth)[ \t=]+[^\s:"']+:${ARGUMENT_WORD}`, 'g'),
  new RegExp(String.raw`${TOOL}net[ \t]+user[ \t]+[^\s/]+[ \t]+(?![/*])${ARGUMENT_VALUE}`, 'gi'),
  // PowerShell's `ConvertTo-SecureString "…" -AsPlainText`: its first argument that is not a switch.
  new RegExp(String.raw`${TOOL}ConvertTo-SecureString(?:[ \t]+-(?:AsPlainText|Force))*(?:[ \t]+-String)?[ \t]+(?!-)${ARGUMENT_VALUE}`, 'gi'),
  new RegExp(String.raw`${TOOL}(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:(?:'%s[^']*'|"%s[^"]*")[ \t]+)?${ARGUMENT_VALUE}(?=[ \t]*\|[^\r\n|;&]*(?:--password-stdin|gh[ \t]+secret[ \t]+set|chpasswd))`, 'g'),
  new RegExp(String.raw`--password-stdin[^\r\n|;&<]{0,200}<<<[ \t]*${ARGUMENT_VALUE}`, 'g'),
  new RegExp(String.raw`${TOOL}(?:sqlplus|rman|expdp|impdp|exp|imp|sqlldr|dgmgrl)(?:[ \t]+-[\w-]+)*[ \t]+${ORACLE_LOGON}`, 'g'),
  // rman's `target` and `catalog` (with the database after `@`), and `userid=` of the data tools.
  new RegExp(String.raw`(?<![\w-])(?:(?:target|catalog|auxiliary)[ \t]*=?[ \t]*(?=\S*@)|userid[ \t]*=[ \t]*)${ORACLE_LOGON}`, 'gi'),
  // Prose starts lines with "connect" too: a logon there ends its line, or goes on with `@db` or `AS SYSDBA`.
  new RegExp(String.raw`^[ \t]*(?:SQL>[ \t]*)?conn(?:ect)?[ \t]+${ORACLE_LOGON}(?=@|[ \t]*(?:$|as[ \t]+sys\w*))`, 'gim'),
];

/**
 * A secret-like setting given its value by a `config set` command, as a word after its name:
 * `aws configure set aws_secret_access_key …` (options before `set` or after it), `npm config set
 * //registry/:_authToken …`, `yarn config set npmAuthToken …`.
 */
const CONFIG_SET = new RegExp(
  String.raw`(?<![\w-])(?:config|configure)(?:[ \t]+-\S+(?:[ \t]+[^\s-]\S*)?){0,4}[ \t]+set[ \t]+(?:-\S*[ \t]+)*(?:[^\s:]*:)?(?<name>[A-Za-z_][\w.-]*)[ \t]+(?:${DQ_VALUE}|${SQ_VALUE}|${ARGUMENT_WORD})`,
  'g',
);

// Other options of a command, each with its value or not: at most six.
const OTHER_OPTIONS = String.raw`(?:[ \t]+--?[\w-]+(?:[ \t]+[^\s-]\S*)?){0,6}?`;

/** A secret-like name given by one option and its value by another: `aws ssm put-parameter --name DB_PASSWORD --value …`, either order. */
const NAME_AND_VALUE_OPTIONS = new RegExp(
  String.raw`(?<![\w-])--name[ \t=]+(?<nameQuote>["']?)${SECRET_PATH_NAME}\k<nameQuote>${OTHER_OPTIONS}[ \t]+--value[ \t=]+${ARGUMENT_VALUE}`,
  'gi',
);
const VALUE_AND_NAME_OPTIONS = new RegExp(
  String.raw`(?<![\w-])--value[ \t=]+${ARGUMENT_VALUE}(?<tail>${OTHER_OPTIONS}[ \t]+--name[ \t=]+(?<nameQuote>["']?)${SECRET_PATH_NAME}\k<nameQuote>)(?![\w./-])`,
  'gi',
);

/**
 * A secret-like name and its value as a Dockerfile's `ENV` writes them without `=` (`ENV
 * DB_PASSWORD …`, the value to the line's end), and a `.netrc` entry's `password …` after its
 * `machine` (on one line or over lines; looked behind for only where `password` stands).
 */
const SPACED_VALUE = new RegExp(
  String.raw`(?:^[ \t]*ENV[ \t]+${SECRET_NAME}[ \t]+(?:${DQ_VALUE}|(?<bare>[^\s"=][^\r\n]*))|(?<netrc>password|passwd)(?<=(?<![\w-])machine[ \t]+\S+(?:\s+(?:login|account|port)[ \t]+\S+){0,3}\s+(?:password|passwd))[ \t]+(?<netrcValue>\S+))`,
  'gim',
);

/**
 * A secret-like option and its value after a space (`mysql --password hunter2`, `--api-token X`):
 * the `--password=…` form is an {@link ASSIGNMENT}.
 */
const OPTION = new RegExp(
  String.raw`(?<![\w-])(?=--?[\w-]*?(?:${SECRET_WORDS}))(?<name>--?[A-Za-z][\w-]*)[ \t]+(?:${DQ_VALUE}|${SQ_VALUE}|(?<bare>[^\s"'${'`'}-][^\s"'${'`'}]*))`,
  'gi',
);

/**
 * The text of an XML element whose name is a secret's (`<password>…</password>`, `<apiKey>`),
 * CDATA sections included. A section's text is read to its `]]>` but never past a `<`: read on, a
 * text of many unclosed sections was read again from each (time growing with its square).
 */
const ELEMENT = new RegExp(
  String.raw`<(?=[\w.:-]*?(?:${SECRET_WORDS}))(?<name>[A-Za-z_][\w.:-]*)(?:\s[^<>]*)?(?<!/)>(?<text>(?:<!\[CDATA\[(?:[^\]<]|\](?!\]>))*\]\]>|[^<])*)(?<end></\k<name>\s*>)`,
  'gi',
);

// An XML attribute, its value quoted: at most sixteen of them before and after the one naming the secret.
const XML_ATTRIBUTES = String.raw`(?:\s+[\w.:-]+\s*=\s*(?:"[^"<>]*"|'[^'<>]*')){0,16}`;

// Elements whose text is a page's, an app's or a schema's words, not a setting's value (`<a id="forgot-password">Forgot your password?</a>`, Android's `<string name="prompt_password">`, a doc comment's `<param name="password">`, .resx's `<data>`).
const TEXT_ELEMENTS = 'a|abbr|arg|attribute|b|button|caption|column|data|dd|div|dt|element|em|h[1-6]|i|label|legend|li|option|p|param|plurals|span|string|strong|td|textblock|textview|th|title|typeparam';

/**
 * The text of an element whose `key` or `name` attribute names a secret (`<entry
 * key="db.password">…</entry>`, `<Parameter Name="DbPassword">`, XAML's `x:Key`), or of its
 * `<value>` child (.NET's `<setting name="ApiKey"><value>…</value></setting>`).
 */
const ATTRIBUTE_NAMED_ELEMENT = new RegExp(
  String.raw`<(?!(?:xsd?:)?(?:${TEXT_ELEMENTS})[\s>])(?<tag>[A-Za-z_][\w.:-]*)${XML_ATTRIBUTES}?\s+(?:[\w-]+:)?(?:key|name)\s*=\s*(?<nameQuote>["'])${SECRET_PATH_NAME}\k<nameQuote>${XML_ATTRIBUTES}\s*>(?:\s*<value(?:\s[^<>]*)?>)?(?<text>(?:<!\[CDATA\[(?:[^\]<]|\](?!\]>))*\]\]>|[^<])*)(?<end>(?:<\/value>\s*)?<\/\k<tag>\s*>)`,
  'gi',
);

/**
 * A value element after the element naming it: a property list's `<key>password</key>` then
 * `<string>…</string>` (or `<data>`), Hadoop's `<name>…password</name>` then `<value>…</value>`.
 */
const NAMED_ELEMENT = new RegExp(
  String.raw`<(?<keyTag>key|name)>(?=[^<]*?(?:${SECRET_WORDS}))(?<name>[^<>]+)</\k<keyTag>>\s*<(?<valueTag>string|data|value)>(?<text>[^<]*)(?<end></\k<valueTag>>)`,
  'gi',
);

// A string literal of SQL, in single or double quotes, with a quote doubled or escaped inside.
const SQL_STRING = String.raw`'(?:[^'\\\r\n]|''|\\.)*'|"(?:[^"\\\r\n]|""|\\.)*"`;

/**
 * The string literal SQL sets a password with: `ALTER USER bob WITH PASSWORD '…'`, `CREATE ROLE r
 * PASSWORD '…'`, MySQL's `IDENTIFIED BY '…'`, `IDENTIFIED WITH plugin BY '…'`, Oracle's hash in
 * `IDENTIFIED BY VALUES '…'`, and `SET PASSWORD FOR user = '…'` (a user named in 200 characters at
 * most, so that a text of many `SET PASSWORD FOR` is not read to its end from each).
 */
const SQL_PASSWORD = new RegExp(
  String.raw`(?<![\w-])(?:(?:PASSWORD|IDENTIFIED\s+(?:WITH\s+\w+\s+)?(?:BY(?:\s+VALUES)?|AS))\s+|SET\s+PASSWORD\s+FOR\s+[^=;\r\n]{1,200}?=\s*)(?<literal>${SQL_STRING})`,
  'gi',
);

// A password as Oracle takes it, a literal or a word; a bind variable (`:pw`, `&pw`, `$PW`) names one.
const SQL_USER_SECRET = String.raw`${SQL_STRING}|[^\s;'"():&$][^\s;'"()]*`;

/**
 * A user's or a role's password after `IDENTIFIED BY`, which Oracle takes unquoted: `CREATE USER
 * scott IDENTIFIED BY tiger`, `ALTER USER`, `CREATE ROLE`, a database link's `CONNECT TO u
 * IDENTIFIED BY …`, and the password it replaces (`REPLACE …`, MySQL's too). Only after the user
 * is named, as prose says "identified by ann".
 */
const SQL_USER_PASSWORD = new RegExp(
  String.raw`(?<![\w-])(?:(?:CREATE|ALTER)\s+(?:USER|ROLE)\s+(?:IF\s+NOT\s+EXISTS\s+)?|CONNECT\s+TO\s+)[^\s;]{1,200}\s+IDENTIFIED\s+BY\s+(?!VALUES\s)(?<literal>${SQL_USER_SECRET})(?:(?<replace>\s+REPLACE\s+)(?<old>${SQL_USER_SECRET}))?`,
  'gi',
);

/**
 * A value that names where a secret is rather than holding it, and nothing more: a variable
 * (`$DB_PASSWORD`, `${TOKEN}`, `$config->password`, `$_ENV['X']`, a comment after it), a command's
 * output (`$(vault read …)`), a template's `{{ form.password }}` or `${{ secrets.X }}` (a bare
 * value ends before a `}`: `${TOKEN` is one too); not `${DB_PASSWORD:-…}` nor
 * `$crypt->decrypt('…')`, which hold one; OpenSSL's `env:PW`, `file:…`, `fd:3`, `stdin`. A version
 * (`2.23.0`, as `pip list` gives `google-auth`'s), an LDIF's second colon. One already masked (`***`), a block scalar's header (`|`: its lines hold the value), a backslash that
 * continues the line (the value is on the next one), or none at all,
 * once trimmed. Its spaces are trimmed, not matched: a
 * `\s*` after `\$.*` was tried from each place of a run of spaces before a line break (an XML
 * element's text can hold one), time growing with the square of the run's length.
 */
const NOT_A_SECRET = /^(?:\$(?:\{\{[^\r\n]*|\{[A-Za-z_][\w.]*\}?|\([^()\r\n]*\)|env:[A-Za-z_]\w*|[A-Za-z_]\w*(?:(?:->|::|\.)[A-Za-z_]\w*|\[[^\]\r\n]*\])*)(?:[ \t]+#[^\r\n]*)?|\{\{[^\r\n]*\}\}|(?:env|file|fd):[^\s]*|stdin|\*+|\\|:|true|false|null|none|undefined|v?\d+(?:\.\d+)+(?:[-+][\w.]+)?|[|>][1-9+-]{0,2}(?:[ \t]+#[^\r\n]*)?)?$/i;

// A line of a block scalar: its indent, and its text.
const BLOCK_LINE = /^([ \t]*)(\S[^\r\n]*)$/gm;

/**
 * What a text holding a credential holds at least one of (a plain scan, far cheaper than the
 * patterns): most recorded strings have none of these and are returned as they are. `identified`
 * is SQL's `IDENTIFIED BY '…'`, which names no secret; the commands' names are those of
 * {@link COMMAND_PASSWORDS}.
 */
const CREDENTIAL_GATE = new RegExp(String.raw`sk-|[sr]k_|gh[pousr]_|github_pat_|akia|xox|xapp-|aiza|npm_|hf_|sg\.|whsec_|do[opr]_v1_|shp(?:at|ca|pa|ss)_|glpat-|ya29\.|age-secret-key-|hvs\.|hooks\.slack|discord|-signature=|sig=|eyj|-----begin|bearer|basic|:\/\/|-u\s|--user|identified|mysql|mariadb|login|sshpass|mongo|redis|ldap|smb|rpcclient|config|openssl|machine|securestring|sqlcmd|bcp|osql|isql|ssh-keygen|net\s+user|chpasswd|@tcp\(|@unix\(|sqlplus|rman|expdp|impdp|sqlldr|dgmgrl|conn|${SECRET_WORDS}`, 'i');

// A password hash's scheme (the 'a password hash' shape), asked only of a text with a `$` or a `{`:
// in the gate above, its alternatives cost every recorded string a sixth more.
const HASH_GATE = /\$(?:2[abxy]?\$|[1567]\$|apr1\$|g?y\$|argon2|pbkdf2)|pbkdf2[_:]|scrypt:|\{s?(?:sha|md5)/i;

// What only JSON text's values can hold a secret by: a cookie list, Terraform's `sensitive`, base64, a Secret known
// by its type (the gate above for anything else). Asked only of a text that starts as JSON does, or has a line that does.
const JSON_VALUE_GATE = /httponly|samesite|sensitive|base64|opaque|kubernetes\.io\//i;

// The shortest credential in text: `pwd=x`.
const MIN_CREDENTIAL_TEXT = 5;

/**
 * The text with every credential it holds replaced by `[redacted]`: the published API-key shapes,
 * JSON web tokens, private key blocks, `Bearer`/`Basic` credentials, and passwords and tokens in
 * URLs whole (the scheme word and the URL kept), the value of an assignment to a secret-like name
 * (`DB_PASSWORD=[redacted]`, `"api_key": "[redacted]"`, `password: [redacted]` to the line's end
 * or a block scalar's lines, `- name: DB_PASSWORD` on the line above `value: [redacted]`), the text
 * of a secret-like XML element or of the element after one naming a secret, and SQL's password
 * literals; the cells of a table's secret column and a Kubernetes Secret's data (layout-secrets.ts);
 * in JSON text, what the rules for a payload's values find; in base64 of text, the text's own.
 */
export function redactCredentials(text: string): string {
  if (base64Shaped(text)) {
    const encoded = base64Redacted(text);
    // Base64 that held no credential is still read as text: a key pair printed on two lines looks like base64.
    if (encoded !== text) return encoded;
  }
  if (text.length < MIN_CREDENTIAL_TEXT) return text;
  const first = text.charCodeAt(0);
  if (
    !CREDENTIAL_GATE.test(text) &&
    !((text.includes('$') || text.includes('{')) && HASH_GATE.test(text)) &&
    !((first === 0x7b || first === 0x5b || text.includes('\n{')) && JSON_VALUE_GATE.test(text))
  ) {
    return text;
  }
  return readThrough(text);
}

// A CredentialTexts keeps what it made of texts of MIN_CREDENTIAL_TEXT to KEPT_TEXT_LENGTH
// characters, KEPT_TEXTS at a time in each of its two generations.
const KEPT_TEXT_LENGTH = 256;
const KEPT_TEXTS = 1_000;

/**
 * {@link redactCredentials} for the strings of one session, keeping what it made of each short
 * text: a session records the same words again and again (tool names, argument values, its own
 * `constraint.passed` and `within token limit`). Most pass no gate, and asking the gate costs a
 * typical payload about 1.4 µs; a few name a secret's word, and reading one through every pattern
 * costs about 9 µs. The texts seen most recently are kept: when one generation is full, it becomes
 * the older one and the oldest texts go, so at most 2,000 texts of up to 256 characters are held.
 * Kept as long as the redactor that holds it (a session's; `aura proxy`'s for the relay before a
 * session opens).
 */
export class CredentialTexts {
  private recent = new Map<string, string>();
  private older = new Map<string, string>();

  redact(text: string): string {
    if (text.length < MIN_CREDENTIAL_TEXT || text.length > KEPT_TEXT_LENGTH) return redactCredentials(text);
    let read = this.recent.get(text);
    if (read !== undefined) return read;
    read = this.older.get(text) ?? redactCredentials(text);
    if (this.recent.size >= KEPT_TEXTS) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(text, read);
    return read;
  }
}

function readThrough(text: string): string {
  // JSON text first, while it is JSON: the patterns may leave a bare `[redacted]` where a number was.
  return redactLayouts(textRedacted(jsonTextRedacted(text)));
}

/** {@link redactCredentials}' patterns, over the text as it reads. */
function textRedacted(text: string): string {
  let out = replacePii(text, API_KEYS, () => REDACTED);
  for (const shape of CREDENTIAL_SHAPES) out = out.replace(shape.pattern, shape.kept);
  for (const pattern of COMMAND_PASSWORDS) out = out.replace(pattern, argumentPassword);
  for (const pattern of FILLED_FIELDS) out = out.replace(pattern, filledField);
  out = out.replace(HEADER_VALUE, assignedValue);
  if (PGPASS.test(out)) out = out.replace(PGPASS_ENTRY, `$1$3$4${REDACTED}`);
  return out
    .replace(LDIF_BASE64_VALUE, assignedValue)
    .replace(CONTINUED_VALUE, assignedValue)
    .replace(CONFIG_SET, assignedValue)
    .replace(NAME_AND_VALUE_OPTIONS, assignedValue)
    .replace(VALUE_AND_NAME_OPTIONS, assignedValue)
    .replace(SPACED_VALUE, spacedValue)
    // On a text of one line, `NAME=value more` is a command (lineValue). The text is read once for
    // it, not at each match: the replacements before keep its lines.
    .replace(LINE_VALUE, /[\r\n]/.test(out) ? assignedValue : lineValue)
    .replace(LABEL_VALUE, labelValue)
    .replace(NAMED_VALUE, assignedValue)
    .replace(VALUE_NAMED, assignedValue)
    .replace(REPLY_PAIR, assignedValue)
    .replace(NESTED_VALUE, assignedValue)
    .replace(PAIR_IN_LINE, assignedValue)
    .replace(PAIR_IN_LINE_VALUE_FIRST, assignedValue)
    .replace(DESCRIBED_FIELD, describedValue)
    .replace(ASSIGNMENT, assignedValue)
    .replace(ARROW_ASSIGNMENT, assignedValue)
    .replace(DEFINED_CONSTANT, assignedValue)
    .replace(TERRAFORM_DEFAULT, assignedValue)
    .replace(OPTION, assignedValue)
    .replace(ELEMENT, elementText)
    .replace(ATTRIBUTE_NAMED_ELEMENT, elementText)
    .replace(NAMED_ELEMENT, elementText)
    .replace(SQL_USER_PASSWORD, sqlPassword)
    .replace(SQL_PASSWORD, sqlPassword);
}

// What a file's content looks like when a tool hands it over as base64 (GitHub's `get_file_contents`,
// a Secret's value, a mail part): lines of base64 characters, then its padding. A hex id is not one.
const MIN_BASE64_TEXT = 24;
const BASE64_CHARS = new Uint8Array(128).map((_, code) => Number(/[A-Za-z0-9+/\r\n]/.test(String.fromCharCode(code))));
const PADDING = /^={0,2}\s*$/;

/**
 * True for base64 text that ends as a tool gives a file's (its padding, or a line break: GitHub
 * wraps its lines, as the `base64` command does). Every recorded string is asked: its last
 * character is looked at first, and only a candidate's others (a loop over each string's
 * characters cost the emit bench 4-5% of its rate, on its paths).
 */
function base64Shaped(text: string, declared = false): boolean {
  const length = text.length;
  const last = text.charCodeAt(length - 1);
  if (length < MIN_BASE64_TEXT || (!declared && last !== 0x3d && last !== 0x0a)) return false;
  let i = 0;
  while (i < text.length && BASE64_CHARS[text.charCodeAt(i)] === 1) i++;
  const next = text.charCodeAt(i);
  return i >= MIN_BASE64_TEXT && (i === text.length || ((next === 0x3d || next === 0x20 || next === 0x09) && PADDING.test(text.slice(i))));
}
const HEX_TEXT = /^[0-9a-fA-F]+$/;
// What text holds: no control character but a tab and line ends.
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Base64 whose bytes are text, with the credentials of that text replaced, encoded again (its
 * lines as long as they were): the file a tool read stays readable, without what it held. Base64
 * of other bytes (an image) is kept whole.
 */
function base64Redacted(text: string): string {
  if (HEX_TEXT.test(text)) return text;
  let decoded: string;
  try {
    decoded = UTF8.decode(Buffer.from(text, 'base64'));
  } catch {
    return text;
  }
  if (CONTROL.test(decoded)) return text;
  const redacted = redactCredentials(decoded);
  if (redacted === decoded) return text;
  const encoded = Buffer.from(redacted, 'utf8').toString('base64');
  const width = text.search(/\r?\n/);
  if (width <= 0) return encoded;
  const end = text.match(/\r?\n$/)?.[0] ?? '';
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  return (encoded.match(new RegExp(`.{1,${width}}`, 'g')) ?? []).join(newline) + end;
}

// JSON text a tool gave as a string: an object or an array, whole, or one a line (JSON Lines).
const JSON_TEXT = /^\s*(?:\{[\s\S]*\}|\[[\s\S]*\])\s*$/;
// How deep the rules for values read JSON text: a value deeper than this is left to the patterns.
const MAX_JSON_TEXT_DEPTH = 64;

/**
 * JSON text read as the value it holds, with the redactor's rules for values applied: what a
 * secret-like key, a `{name, value}` pair, a cookie, a `sensitive` value, a Kubernetes Secret's
 * `data` or an argument after `--password` holds, and in any string, base64 of text with a
 * credential in it or a table's secret column. Each value is replaced where it stands in the
 * text, which keeps its layout, and nothing else is touched.
 */
function jsonTextRedacted(text: string): string {
  const whole = JSON_TEXT.test(text) ? jsonValueRedacted(text) : null;
  if (whole !== null || !text.includes('\n')) return whole ?? text;
  // JSON Lines (a log, an export, `kubectl get -o json` of several objects): a value a line,
  // whatever other lines stand around them (a banner, a note that the output was cut).
  return text
    .split('\n')
    .map((line) => (JSON_TEXT.test(line) ? (jsonValueRedacted(line) ?? line) : line))
    .join('\n');
}

/** One JSON value's text with its secret values replaced, or null when it is not one. */
function jsonValueRedacted(text: string): string | null {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch {
    return null;
  }
  const replacements = new Map<string, string>();
  secretValues(value, '', false, replacements, 0);
  return replacements.size === 0 ? text : replacedAt(text, replacements);
}

/** Notes in `out`, by its place (see {@link replacedAt}), the JSON text each value of `value` that must change is to be written as (`secret`: all of it). */
function secretValues(value: unknown, place: string, secret: boolean, out: Map<string, string>, depth: number, base64 = false): void {
  if (depth > MAX_JSON_TEXT_DEPTH) return;
  if (typeof value === 'string') {
    const kept = secret ? REDACTED : stringRedacted(value, base64);
    if (kept !== value) out.set(place, JSON.stringify(kept));
  } else if (typeof value === 'number') {
    if (secret) out.set(place, JSON.stringify(REDACTED));
  } else if (Array.isArray(value)) {
    const items = secret ? null : secretItems(value);
    value.forEach((item, i) => secretValues(item, `${place}[${i}]`, secret || (items?.has(i) === true && !keepsValue(item)), out, depth + 1));
  } else if (value !== null && typeof value === 'object') {
    secretFields(value as Record<string, unknown>, place, secret, out, depth, null);
  }
}

/** {@link secretValues} of an object's fields; those `hidden` names are secret whatever they are called. */
function secretFields(record: Readonly<Record<string, unknown>>, place: string, secret: boolean, out: Map<string, string>, depth: number, hidden: ReadonlySet<string> | null): void {
  const keys = Object.keys(record);
  const named = secret ? null : namedSecretKey(record, keys);
  const encoded = record['encoding'] === 'base64';
  const marked = secret ? null : terraformMarks(record);
  for (const key of keys) {
    const child = record[key];
    const at = `${place}.${JSON.stringify(key)}`;
    if (key === marked?.field && child !== null && typeof child === 'object' && !Array.isArray(child)) {
      if (depth < MAX_JSON_TEXT_DEPTH) secretFields(child as Record<string, unknown>, at, false, out, depth + 1, marked.names);
      continue;
    }
    const hiddenKey = hidden?.has(key) === true && child !== null;
    secretValues(child, at, secret || hiddenKey || ((key === named || isSecretLikeKey(key)) && !keepsValue(child)), out, depth + 1, encoded && key === 'content');
  }
}

/**
 * Terraform says which of a resource's attributes are sensitive beside them, not on them: its
 * state's `sensitive_attributes` marks some of `attributes`, `terraform show -json`'s
 * `sensitive_values` some of `values`. The field and the names marked, or null.
 */
function terraformMarks(record: Readonly<Record<string, unknown>>): { readonly field: string; readonly names: ReadonlySet<string> } | null {
  const attributes = sensitiveAttributes(record['sensitive_attributes']);
  if (attributes !== null) return { field: 'attributes', names: attributes };
  const values = sensitiveValues(record['sensitive_values']);
  return values === null ? null : { field: 'values', names: values };
}

/** The values `terraform show -json`'s `sensitive_values` marks (`{"result": true}`; an object or a list marks parts of one, so all of it), or null for none. */
function sensitiveValues(marks: unknown): ReadonlySet<string> | null {
  if (marks === null || typeof marks !== 'object' || Array.isArray(marks)) return null;
  const names = Object.entries(marks).flatMap(([name, mark]) => (mark === true || (mark !== null && typeof mark === 'object' && Object.keys(mark).length > 0) ? [name] : []));
  return names.length === 0 ? null : new Set(names);
}

/**
 * The attributes a Terraform state's `sensitive_attributes` names (the first step of each path:
 * `[[{"type": "get_attr", "value": "password"}]]`, or a path's steps alone), or null for none.
 */
function sensitiveAttributes(paths: unknown): ReadonlySet<string> | null {
  if (!Array.isArray(paths) || paths.length === 0) return null;
  const names = new Set<string>();
  for (const path of paths) {
    const step: unknown = Array.isArray(path) ? path[0] : path;
    if (step !== null && typeof step === 'object' && (step as Record<string, unknown>)['type'] === 'get_attr') {
      const name = (step as Record<string, unknown>)['value'];
      if (typeof name === 'string') names.add(name);
    }
  }
  return names.size === 0 ? null : names;
}

/** A string of JSON text with what the patterns cannot see through its escapes replaced: base64 of text (`base64`: its object says it is, as GitHub's and GitLab's file contents do), a table's lines. */
function stringRedacted(value: string, base64: boolean): string {
  const decoded = base64Shaped(value, base64) ? base64Redacted(value) : value;
  return decoded === value ? redactLayouts(value) : decoded;
}

/** One open object or array of the JSON text being read: its place, and where in it the reader is. */
interface OpenValue {
  readonly place: string;
  readonly array: boolean;
  index: number;
  key: string;
}

/**
 * `text` (valid JSON) with each value whose place `replacements` names written as given: a value's
 * place is its keys (as JSON strings) and indexes from the root, `."a"[2]`. One pass, no recursion.
 */
function replacedAt(text: string, replacements: ReadonlyMap<string, string>): string {
  const open: OpenValue[] = [];
  let key = false;
  let out = '';
  let copied = 0;
  const here = (): string => {
    const top = open.at(-1);
    return top === undefined ? '' : top.array ? `${top.place}[${top.index}]` : `${top.place}.${top.key}`;
  };
  const value = (start: number, end: number): void => {
    const replacement = replacements.get(here());
    if (replacement === undefined) return;
    out += text.slice(copied, start) + replacement;
    copied = end;
  };
  for (let i = 0; i < text.length; ) {
    const char = text[i] as string;
    if (char === '{' || char === '[') {
      open.push({ place: here(), array: char === '[', index: 0, key: '' });
      key = char === '{';
      i++;
    } else if (char === '}' || char === ']') {
      open.pop();
      i++;
    } else if (char === ',') {
      const top = open.at(-1);
      if (top?.array === true) top.index++;
      else key = true;
      i++;
    } else if (char === '"') {
      let end = text.indexOf('"', i + 1);
      while (end > 0 && backslashesBefore(text, end) % 2 === 1) end = text.indexOf('"', end + 1);
      end += 1;
      const top = open.at(-1);
      if (key && top !== undefined) {
        // The key as the reader's value spells it: JSON text of its decoded form.
        top.key = JSON.stringify(parseJson(text.slice(i, end)));
        key = false;
      } else value(i, end);
      i = end;
    } else if (char === '-' || (char >= '0' && char <= '9') || char === 't' || char === 'f' || char === 'n') {
      let end = i + 1;
      while (end < text.length && /[\w.+-]/.test(text[end] as string)) end++;
      value(i, end);
      i = end;
    } else i++;
  }
  return out + text.slice(copied);
}

function backslashesBefore(text: string, at: number): number {
  let count = 0;
  while (text.charCodeAt(at - 1 - count) === 0x5c) count++;
  return count;
}

/**
 * The named groups of the patterns {@link assignedValue} replaces in (ASSIGNMENT, LINE_VALUE, the
 * name-and-value patterns, CONFIG_SET, the options): the secret's name, its value (quoted, in
 * escaped quotes, bare, or a block scalar), and what follows the value in the match (the name,
 * when it comes after).
 */
interface AssignmentGroups {
  readonly name: string;
  readonly dq?: string;
  readonly sq?: string;
  /** A JavaScript template literal's text. */
  readonly bq?: string;
  readonly esc?: string;
  readonly eq?: string;
  /** The backslashes that end a value in escaped quotes, before its closing quote's own. */
  readonly eqEnd?: string;
  readonly block?: string;
  readonly bare?: string;
  readonly tail?: string;
}

// The first word of a value (a call's arguments with it), with what follows a scheme word (`Token …`) or a call's `new`, as ASSIGNMENT takes a bare one.
const FIRST_VALUE = new RegExp(String.raw`^(?:(?:Bearer|Basic|Token|Digest)[ \t]+|${CALL_KEYWORD})?(?:${CALL_ARGUMENTS}|[^\s(]|\()+`, 'i');

/**
 * {@link LINE_VALUE}'s value replaced in a text of one line, where `NAME=value more` (no space
 * around the `=`) is a command's prefix rather than an env file's line (`PGPASSWORD=… psql -h
 * db`): its value is its first word, and the command stays readable. Spaced (`token = a or b`),
 * it is code's or prose's, and its value runs on.
 */
function lineValue(match: string, ...rest: unknown[]): string {
  const { name, env, bare } = rest.at(-1) as AssignmentGroups & { readonly env?: string };
  const first = env === undefined || bare === undefined ? null : FIRST_VALUE.exec(bare)?.[0];
  if (first === undefined || first === null || !isSecretLikeKey(name)) return assignedValue(match, ...rest);
  return withValueRedacted(match, first, bare?.slice(first.length) ?? '');
}

/** An assignment's or an option's value replaced, when its name is a secret's and the value holds one. */
function assignedValue(match: string, ...rest: unknown[]): string {
  const groups = rest.at(-1) as AssignmentGroups;
  return isSecretLikeKey(groups.name) ? valueReplaced(match, groups) : match;
}

/** {@link LABEL_VALUE}'s value replaced, when its words name a secret: a name of one word before a colon is {@link LINE_VALUE}'s (`password: …` there runs to the line's end as well). */
function labelValue(match: string, ...rest: unknown[]): string {
  const groups = rest.at(-1) as AssignmentGroups & { readonly gap?: string };
  return (groups.gap !== undefined || /[ \t]/.test(groups.name)) && isSecretLikeKey(groups.name) ? valueReplaced(match, groups) : match;
}

/** {@link DESCRIBED_FIELD}'s value replaced, when the field's description names a secret. */
function describedValue(match: string, ...rest: unknown[]): string {
  const groups = rest.at(-1) as AssignmentGroups & { readonly field: string };
  return describesSecret(groups.field) ? valueReplaced(match, groups) : match;
}

/** The match with its value (quoted, in escaped quotes, bare, or a block scalar's lines) replaced. */
function valueReplaced(match: string, groups: AssignmentGroups): string {
  const { dq, sq, bq, esc, eq, eqEnd = '', block, bare, tail = '' } = groups;
  if (block !== undefined) return match.slice(0, match.length - block.length) + blockLinesRedacted(block);
  const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : bq !== undefined ? '`' : eq !== undefined ? `${esc ?? ''}"` : '';
  // A value in escaped quotes that was cut before its closing one gets none.
  const close = eq !== undefined && !match.endsWith(quote) ? '' : quote;
  return withValueRedacted(match, eq === undefined ? (dq ?? sq ?? bq ?? bare ?? '') : eq + eqEnd, close + tail);
}

/**
 * A block scalar with each of its lines replaced, unless it only names a secret: its header, the
 * lines' indents and its blank lines are kept, so the text keeps its shape.
 */
function blockLinesRedacted(block: string): string {
  const lines = block.search(/\r?\n/);
  return block.slice(0, lines) + block.slice(lines).replace(BLOCK_LINE, (line: string, indent: string, text: string) => (NOT_A_SECRET.test(text.trim()) ? line : indent + REDACTED));
}

/** The text of a secret-like XML element ({@link ELEMENT}), or of the element a secret-like one names ({@link NAMED_ELEMENT}), replaced. */
function elementText(match: string, ...rest: unknown[]): string {
  const { name, text, end } = rest.at(-1) as { name: string; text: string; end: string };
  return isSecretLikeKey(name) ? withValueRedacted(match, text, end) : match;
}

/** {@link SPACED_VALUE}'s value replaced: an `ENV` line's as an assignment's, a `.netrc` password whole. */
function spacedValue(match: string, ...rest: unknown[]): string {
  const { netrcValue } = rest.at(-1) as { netrcValue?: string };
  return netrcValue === undefined ? assignedValue(match, ...rest) : withValueRedacted(match, netrcValue, '');
}

/** A password a command takes as an argument ({@link COMMAND_PASSWORDS}), replaced in the quotes it had. */
function argumentPassword(match: string, ...rest: unknown[]): string {
  const { dq, sq, bare, inner } = rest.at(-1) as { dq?: string; sq?: string; bare?: string; inner?: string };
  const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : '';
  return withValueRedacted(match, dq ?? sq ?? bare ?? inner ?? '', quote);
}

/** A value typed into a field ({@link FILLED_FIELDS}), replaced in its quotes when the field names a secret. */
function filledField(match: string, ...rest: unknown[]): string {
  const { field, dq, sq } = rest.at(-1) as { field: string; dq?: string; sq?: string };
  return field === 'set_password' || describesSecret(field) ? withValueRedacted(match, dq ?? sq ?? '', dq !== undefined ? '"' : "'") : match;
}

/** A password SQL sets, and the one it replaces (`REPLACE …`), each replaced in the quotes it had. */
function sqlPassword(match: string, ...rest: unknown[]): string {
  const { literal, replace = '', old = '' } = rest.at(-1) as { literal: string; replace?: string; old?: string };
  const head = match.slice(0, match.length - literal.length - replace.length - old.length);
  return head + sqlValueRedacted(literal) + replace + sqlValueRedacted(old);
}

/** A password of SQL, quoted or not, as `[redacted]` in its quotes, when it holds a secret. */
function sqlValueRedacted(literal: string): string {
  const quote = literal.startsWith("'") || literal.startsWith('"') ? literal.charAt(0) : '';
  const value = literal.slice(quote.length, literal.length - quote.length);
  return holdsSecret(value) ? quote + REDACTED + quote : literal;
}

/**
 * The match with `[redacted]` in place of `value`, which `after` follows at its end, when the
 * value holds a secret; else the match as it was.
 */
function withValueRedacted(match: string, value: string, after: string): string {
  return holdsSecret(value) ? match.slice(0, match.length - after.length - value.length) + REDACTED + after : match;
}

/** False for a value that only names a secret, or whose credential was already replaced (a URL's password): it keeps the rest. */
function holdsSecret(value: string): boolean {
  return !value.includes(REDACTED) && !NOT_A_SECRET.test(value.trim());
}

/**
 * Which known credential shape `text` holds, if any: the published API-key shapes, a JSON web
 * token, a private key, a `Bearer`/`Basic` credential, a password in a URL. A profile holding one
 * is refused (policy/secrets.ts).
 */
export function credentialShape(text: string): string | null {
  if (findPii(text, API_KEYS).length > 0) return 'an API key';
  // `search` starts at the text's start whatever the global pattern's lastIndex.
  for (const shape of CREDENTIAL_SHAPES) if (text.search(shape.pattern) >= 0) return shape.name;
  return null;
}
