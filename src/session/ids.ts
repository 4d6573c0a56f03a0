/**
 * Identifier formats (reference §1), and the id source and clock a session takes, injectable so
 * tests can fix ids and times.
 */

import { randomBytes, randomFillSync } from 'node:crypto';

/** Where a session gets its ids and times from. */
export interface IdSource {
  /** `aura_sess_` + 12 hex. */
  sessionId(): string;
  /** 32 lowercase hex. */
  eventId(): string;
  /** 32 lowercase hex. */
  traceId(): string;
}

/** Microseconds since the Unix epoch. */
export type Clock = () => number;

/** Random ids, as Aura draws them (UUID4 hex). */
export const randomIds: IdSource = {
  sessionId: () => `aura_sess_${uuidHex().slice(0, 12)}`,
  eventId: uuidHex,
  traceId: uuidHex,
};

// Random bytes drawn 256 ids at a time and turned into hex at once: one id is then one slice of
// a string. Dropping randomUUID's dashes made three strings an id; a hex conversion an id was the
// most an id cost after that, the more so when the call path was cold (the first event after a
// framework's own work).
const ID_BYTES = 16;
const POOL_IDS = 256;
const pool = Buffer.alloc(ID_BYTES * POOL_IDS);
let poolHex = '';
let poolAt = POOL_IDS;

/** A random UUID4 as 32 lowercase hex (what Python's `uuid4().hex` gives). */
function uuidHex(): string {
  if (poolAt === POOL_IDS) {
    randomFillSync(pool);
    // The version (4) and variant (10xx) bits of every id in the pool.
    for (let at = 0; at < pool.length; at += ID_BYTES) {
      pool[at + 6] = ((pool[at + 6] as number) & 0x0f) | 0x40;
      pool[at + 8] = ((pool[at + 8] as number) & 0x3f) | 0x80;
    }
    poolHex = pool.toString('hex');
    poolAt = 0;
  }
  const start = poolAt * ID_BYTES * 2;
  poolAt++;
  return poolHex.slice(start, start + ID_BYTES * 2);
}

// The wall clock in microseconds, less the monotonic clock: the time is the monotonic clock from
// there (`performance.timeOrigin + now()` is finer, but the `performance` global loads perf_hooks,
// a millisecond or more of a short process such as a Claude Code hook). Date has only milliseconds,
// so the middle of its millisecond is taken. A wall clock slewed or set since (a virtual machine's
// moved 5 ms within a test run) is caught up with at the next check, once a second.
let checkedAt = monotonicMicros();
let wallOrigin = Date.now() * 1000 + 500 - checkedAt;
const RECHECK_MICROS = 1_000_000;
const DRIFT_MICROS = 2_000;

function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/**
 * The wall clock with microseconds (Date has only milliseconds): the monotonic clock, taken back
 * to the wall clock when they drift apart. A session's recorder never lets an event's time go back.
 */
export const systemClock: Clock = () => {
  const monotonic = monotonicMicros();
  if (monotonic - checkedAt >= RECHECK_MICROS) {
    checkedAt = monotonic;
    const wall = Date.now() * 1000 + 500;
    if (Math.abs(wall - (wallOrigin + monotonic)) > DRIFT_MICROS) wallOrigin = wall - monotonic;
  }
  return wallOrigin + monotonic;
};

/**
 * A timestamp as Python's `datetime.isoformat()` prints a UTC time: microseconds, `+00:00`, and
 * no fraction at all when the microseconds are zero.
 */
export function isoTimestamp(micros: number): string {
  const wholeSeconds = Math.floor(micros / 1_000_000);
  const fraction = micros - wholeSeconds * 1_000_000;
  // Events come many to a second: the date part is formatted once per second.
  if (wholeSeconds !== lastSecond) {
    lastSecond = wholeSeconds;
    lastSecondText = new Date(wholeSeconds * 1000).toISOString().slice(0, 19);
  }
  return fraction === 0 ? `${lastSecondText}+00:00` : `${lastSecondText}.${String(fraction).padStart(6, '0')}+00:00`;
}

let lastSecond = Number.NaN;
let lastSecondText = '';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID: 48-bit millisecond time then 80 random bits, Crockford base32 (26 characters). */
export function newUlid(nowMillis = Date.now()): string {
  let time = '';
  let t = nowMillis;
  for (let i = 0; i < 10; i++) {
    time = (CROCKFORD[t % 32] as string) + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(10);
  let bits = 0n;
  for (const byte of random) bits = (bits << 8n) | BigInt(byte);
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = (CROCKFORD[Number(bits & 31n)] as string) + tail;
    bits >>= 5n;
  }
  return time + tail;
}

const SESSION_KEY_MAX_LENGTH = 256;

/** What a session key must be, for error messages. */
export const SESSION_KEY_RULE = `a label of 1 to ${SESSION_KEY_MAX_LENGTH} characters without control characters, such as "my-client-1"`;

/**
 * A session key as declared (SuperAuditor §7): an opaque label such as `my-client-1`, one to 256
 * characters with no control character. It is only ever compared, never used as a path.
 * @returns the key, or null when `value` is not one
 */
export function sessionKeyOf(value: unknown): string | null {
  // eslint-disable-next-line no-control-regex
  return typeof value === 'string' && value.length > 0 && value.length <= SESSION_KEY_MAX_LENGTH && value.isWellFormed() && !/[\u0000-\u001f\u007f-\u009f]/.test(value) ? value : null;
}
