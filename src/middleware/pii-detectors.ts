/**
 * Detectors of personal data in text, for the `pii_mask` middleware. Each entity type is a
 * candidate pattern plus, where the format has one, its checksum: a candidate that fails the
 * checksum is not personal data, it is a number that happens to look like it (a 16-digit order
 * number failing Luhn, an IBAN with a wrong check pair). The rules, and what they leave out:
 *
 * - `email`: `local@domain.tld`, a TLD of 2+ letters (so `user@localhost` is not one).
 * - `phone`: only with a `+` country code (8–15 digits in all, E.164), or in the North American
 *   grouping `(NXX) NXX-XXXX`, `NXX-NXX-XXXX`, `NXX.NXX.XXXX`, `NXX NXX XXXX`. A bare digit run is
 *   never a phone, nor digits glued to letters, `-`, `_` or `/` (so `ORD-2024-555-0123` is not one).
 * - `payment_card`: 13–19 digits, ungrouped or in groups of 4 (Amex 4-6-5) joined by one kind of
 *   separator, issuer digit 2–6, passing Luhn.
 * - `iban`: country letters, 2 check digits, the country's length where known (15–34 otherwise),
 *   passing ISO 7064 mod 97-10.
 * - `ip`: dotted-quad IPv4 with octets 0–255 (not three-part or four-part versions written `v1.2.3.4`,
 *   nor one glued to more dotted digits), and IPv6 as `node:net` validates it.
 * - `national_id`: only identifiers whose format carries a check character: the Spanish DNI/NIE
 *   (mod-23 letter), the Italian codice fiscale (odd/even table check letter) and the Swedish
 *   personnummer `YYMMDD-NNNC` (Luhn). US SSNs and UK NINOs have no checksum and are not detected:
 *   their shapes collide with ordinary numbers.
 * - `api_key`: the published shapes of OpenAI (`sk-…`), Stripe (`sk_live_…`, `rk_live_…`), GitHub
 *   (`ghp_…`, `gho_…`, `github_pat_…`), AWS access key ids (`AKIA…`), Slack (`xoxb-…`, `xoxp-…`,
 *   `xapp-…`), Google (`AIza…`, OAuth's `ya29.…`), npm (`npm_…`), Hugging Face (`hf_…`),
 *   SendGrid (`SG.….…`), Stripe's webhook secrets (`whsec_…`), DigitalOcean (`dop_v1_…`), Shopify
 *   (`shpat_…`), GitLab (`glpat-…`), age (`AGE-SECRET-KEY-1…`) and Vault (`hvs.…`).
 */

import { createRequire } from 'node:module';
import type * as Net from 'node:net';

/** The entity types the middleware knows. */
export const PII_ENTITIES = ['email', 'phone', 'payment_card', 'iban', 'ip', 'national_id', 'api_key'] as const;

/** One entity type. */
export type PiiEntity = (typeof PII_ENTITIES)[number];

/** One value found in a text: `[start, end)` in UTF-16 units. */
export interface PiiMatch {
  readonly entity: PiiEntity;
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

interface Detector {
  readonly entity: PiiEntity;
  readonly pattern: RegExp;
  /**
   * What every match holds, found by a plain scan: a text without it skips the pattern, whose
   * lookbehinds and alternatives cost far more per character. On the pii-mask bench's tickets
   * the gates took masking from a median of 203 to 176 ms per 4,000 payloads (interleaved, one process).
   */
  readonly gate: string | RegExp;
  /** True when the candidate is the real thing (its checksum holds). */
  readonly valid: (candidate: string) => boolean;
}

// A value is never part of a longer word, id or path: these may not touch either end.
const GLUE = String.raw`[\w/-]`;
// An API key's prefix marks it wherever it is (a URL's path, `step-ghp_…`): only a letter or digit
// may not touch it, as in `risk-…` or `desk_live_…`.
const KEY_GLUE = '[A-Za-z0-9]';

const always = (): boolean => true;

/**
 * Detectors in priority order: where two candidates overlap, the earlier detector wins (an API key
 * holding digits is a key, a card number is not also a phone).
 */
const DETECTORS: readonly Detector[] = [
  {
    entity: 'api_key',
    gate: /sk-|[sr]k_|gh[pousr]_|github_pat_|AKIA|xox|xapp-|AIza|npm_|hf_|SG\.|whsec_|do[opr]_v1_|shp(?:at|ca|pa|ss)_|glpat-|ya29\.|AGE-SECRET-KEY-|hvs\./,
    pattern: new RegExp(
      String.raw`(?<!${KEY_GLUE})(?:sk-(?:proj-)?[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=]{24,}|do[opr]_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|glpat-[A-Za-z0-9_-]{20,}|ya29\.[A-Za-z0-9_-]{20,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|hvs\.[A-Za-z0-9_-]{24,})(?!${KEY_GLUE})`,
      'g',
    ),
    valid: always,
  },
  {
    entity: 'email',
    gate: '@',
    pattern: /(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w-])/g,
    valid: always,
  },
  {
    entity: 'iban',
    gate: /[A-Z]{2}\d\d/,
    pattern: new RegExp(String.raw`(?<!${GLUE})[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?!${GLUE})`, 'g'),
    valid: validIban,
  },
  {
    entity: 'payment_card',
    gate: /\d{4}[ -]?\d{4}/,
    pattern: new RegExp(String.raw`(?<!${GLUE}|[.+])[2-6]\d{3}(?:[ -]?\d{2,7}){2,4}(?!${GLUE}|\.\d)`, 'g'),
    valid: validCard,
  },
  {
    entity: 'national_id',
    gate: /\d{6}|[A-Z]{6}\d/,
    pattern: new RegExp(
      String.raw`(?<!${GLUE})(?:\d{8}[A-Z]|[XYZ]\d{7}[A-Z]|[A-Z]{6}\d{2}[A-EHLMPRST]\d{2}[A-Z]\d{3}[A-Z]|\d{6}[-+]\d{4})(?!${GLUE})`,
      'g',
    ),
    valid: validNationalId,
  },
  {
    entity: 'ip',
    gate: /\d\.\d/,
    pattern: /(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)/g,
    valid: always,
  },
  {
    entity: 'ip',
    gate: ':',
    // Candidates only; node:net decides. At least two colons, so times like 12:30 never reach it.
    pattern: /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g,
    valid: validIpv6,
  },
  {
    entity: 'phone',
    gate: /\+\d|\d{3}[-. )]/,
    pattern: new RegExp(
      String.raw`(?<!${GLUE}|\+)(?:\+[1-9]\d{0,2}(?:[ .-]?\(?\d{1,4}\)?){2,6}|\([2-9]\d{2}\) ?[2-9]\d{2}-\d{4}|[2-9]\d{2}([-. ])[2-9]\d{2}\1\d{4})(?!${GLUE}|\.\d)`,
      'g',
    ),
    valid: validPhone,
  },
];


/**
 * The personal data in `text` of the given types, left to right, without overlaps.
 * @param entities the types to look for.
 */
export function findPii(text: string, entities: ReadonlySet<PiiEntity>): PiiMatch[] {
  // Most recorded strings are short words and ids: no value is shorter.
  if (text.length < 7) return [];
  const found: PiiMatch[] = [];
  for (const detector of DETECTORS) {
    if (!entities.has(detector.entity) || !(typeof detector.gate === 'string' ? text.includes(detector.gate) : detector.gate.test(text))) continue;
    detector.pattern.lastIndex = 0;
    for (let m = detector.pattern.exec(text); m !== null; m = detector.pattern.exec(text)) {
      const candidate = m[0];
      const start = m.index;
      const end = start + candidate.length;
      if (!detector.valid(candidate)) continue;
      if (found.some((other) => start < other.end && other.start < end)) continue;
      found.push({ entity: detector.entity, start, end, text: candidate });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * `text` with each value {@link findPii} finds of the given types replaced by what `replacement`
 * makes of it; the same string when there is none.
 */
export function replacePii(text: string, entities: ReadonlySet<PiiEntity>, replacement: (match: PiiMatch) => string): string {
  const matches = findPii(text, entities);
  if (matches.length === 0) return text;
  let out = '';
  let at = 0;
  for (const match of matches) {
    out += text.slice(at, match.start) + replacement(match);
    at = match.end;
  }
  return out + text.slice(at);
}

/** The Luhn check (ISO/IEC 7812-1) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const CARD_GROUPING = /^\d{4}([ -]?)\d{4}\1\d{4}\1\d{4}(?:\1\d{3})?$|^\d{4}([ -]?)\d{6}\2\d{5}$|^\d{13,19}$/;

function validCard(candidate: string): boolean {
  if (!CARD_GROUPING.test(candidate)) return false;
  const digits = candidate.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && luhnValid(digits);
}

// ISO 13616 lengths of the countries most often seen; other countries are held to 15–34.
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AT: 20, BE: 16, CH: 21, CZ: 24, DE: 22, DK: 18, ES: 24, FI: 18, FR: 27, GB: 22, GR: 27, IE: 22, IT: 27, LU: 20, NL: 18, NO: 15, PL: 28, PT: 25, SE: 24,
};

/** ISO 7064 mod 97-10 over an IBAN without spaces. */
export function ibanValid(iban: string): boolean {
  const expected = IBAN_LENGTHS[iban.slice(0, 2)];
  if (expected !== undefined ? iban.length !== expected : iban.length < 15 || iban.length > 34) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : char;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

function validIban(candidate: string): boolean {
  return ibanValid(candidate.replaceAll(' ', ''));
}

// Required at the first candidate, not imported: node:net (and the stream modules it loads) costs
// every command that masks nothing, such as most Claude Code hooks, a millisecond of its start.
let net: typeof Net | null = null;

function validIpv6(candidate: string): boolean {
  // Two hex groups at least: '::' alone, or 'a::', are more often code than addresses.
  if (candidate.split(':').filter((group) => group !== '').length < 2) return false;
  net ??= createRequire(import.meta.url)('node:net') as typeof Net;
  return net.isIPv6(candidate);
}

function validPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, '').length;
  return candidate.startsWith('+') ? digits >= 8 && digits <= 15 : digits === 10;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** The Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits) check letter: the number mod 23. */
export function spanishIdValid(id: string): boolean {
  const prefix = 'XYZ'.indexOf(id.charAt(0));
  const number = Number((prefix >= 0 ? String(prefix) : id.charAt(0)) + id.slice(1, 8));
  return DNI_LETTERS.charAt(number % 23) === id.charAt(8);
}

// Values of the odd positions (1st, 3rd, …) of a codice fiscale, for 0–9 and A–Z alike.
const CF_ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];

/** The Italian codice fiscale check letter (DM 23/12/1976): odd positions by table, even by value, mod 26. */
export function codiceFiscaleValid(code: string): boolean {
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = code.charCodeAt(i);
    const index = c >= 65 ? c - 65 : c - 48;
    sum += i % 2 === 0 ? (CF_ODD[index] ?? 0) : index;
  }
  return String.fromCharCode(65 + (sum % 26)) === code.charAt(15);
}

/** The Swedish personnummer `YYMMDD-NNNC`: a real month and day, and Luhn over the 10 digits. */
export function personnummerValid(id: string): boolean {
  const month = Number(id.slice(2, 4));
  const day = Number(id.slice(4, 6));
  // Samordningsnummer add 60 to the day.
  const dayOk = (day >= 1 && day <= 31) || (day >= 61 && day <= 91);
  return month >= 1 && month <= 12 && dayOk && luhnValid(id.slice(0, 6) + id.slice(7));
}

function validNationalId(candidate: string): boolean {
  if (candidate.length === 9) return spanishIdValid(candidate);
  if (candidate.length === 16) return codiceFiscaleValid(candidate);
  return personnummerValid(candidate);
}
