/**
 * The machine's python3 as an independent oracle: CPython's own `json` and `hashlib` compute
 * what Aura would hash, so our canonical form and chain are checked against the real thing.
 */

import { execFileSync } from 'node:child_process';

const ORACLE = String.raw`
import hashlib, json, sys
mode = sys.argv[1]
out = []
if mode == 'canonical':
    for line in sys.stdin.read().split('\n'):
        if line:
            out.append(json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False))
elif mode == 'hash':
    for line in sys.stdin.read().split('\n'):
        if line:
            out.append(hashlib.sha256(line.encode('utf-8')).hexdigest())
elif mode == 'verify':
    prev = None
    result = {'valid': True, 'events': 0}
    with open(sys.argv[2], encoding='utf-8') as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            event = json.loads(line)
            body = {k: v for k, v in event.items() if k not in ('prev_hash', 'content_hash')}
            blob = json.dumps(body, sort_keys=True, ensure_ascii=False)
            digest = hashlib.sha256(((prev or 'genesis') + ':' + blob).encode('utf-8')).hexdigest()
            if digest != event['content_hash'] or event['prev_hash'] != prev:
                result = {'valid': False, 'line': number, 'events': result['events']}
                break
            prev = digest
            result['events'] += 1
    out.append(json.dumps(result))
print('\n'.join(out))
`;

function runPython(args: readonly string[], input = ''): string {
  return execFileSync('python3', ['-c', ORACLE, ...args], { input, encoding: 'utf8' });
}

/** What `json.dumps(json.loads(text), sort_keys=True, ensure_ascii=False)` prints, for each JSON text. */
export function pythonCanonical(texts: readonly string[]): string[] {
  return runPython(['canonical'], texts.join('\n')).split('\n').slice(0, texts.length);
}

/** Python's hex SHA-256 of each (UTF-8) text. */
export function pythonSha256(texts: readonly string[]): string[] {
  return runPython(['hash'], texts.join('\n')).split('\n').slice(0, texts.length);
}

/** Verifies a trail with Aura's rule, in Python. */
export function pythonVerify(path: string): { valid: boolean; events: number; line?: number } {
  return JSON.parse(runPython(['verify', path])) as { valid: boolean; events: number; line?: number };
}
