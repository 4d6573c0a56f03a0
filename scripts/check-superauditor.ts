/**
 * The SuperAuditor two-pull check, against any MCP server that offers `get_session_findings`:
 *
 *   npm run check:superauditor -- --stdio "node dist/cli/bin.cjs mcp"
 *   npm run check:superauditor -- --url http://127.0.0.1:8765/mcp --token <bearer token>
 *
 * It pulls with per_kind_limit 1 and then 200 and checks what the standard makes observable: no
 * kind over the limit; a kind with more rows at 200 than at 1 is named in capped_kinds at 1 (and a
 * kind with as many is not); the rows at 1 lead the rows at 200; counts agree with the findings;
 * `_meta` names the server and `superauditor`; a per_kind_limit of 0 is refused as a tool error;
 * both answers validate against the standard's response schema (conformance/superauditor/schema/).
 * Exit 0 when every check passes, 1 when one fails, 2 for bad arguments.
 */

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { schemaErrors } from './superauditor-schema.js';

interface Response {
  findings: { kind: string; severity: string; [key: string]: unknown }[];
  total: number;
  counts_by_kind: Record<string, number>;
  counts_by_severity: Record<string, number>;
  capped_kinds: string[];
  per_kind_limit: number;
  _meta?: { server_version?: unknown; superauditor?: unknown };
}

function transportOf(args: readonly string[]): Transport {
  const value = (flag: string): string | undefined => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const stdio = value('--stdio');
  const url = value('--url');
  if (stdio !== undefined) {
    // A shell reads the command as the user wrote it: quoted paths with spaces stay one word.
    return new StdioClientTransport({ command: '/bin/sh', args: ['-c', `exec ${stdio}`], stderr: 'inherit' });
  }
  if (url !== undefined) {
    const token = value('--token');
    return new StreamableHTTPClientTransport(new URL(url), token === undefined ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  }
  console.error('usage: check-superauditor (--stdio "<command>" | --url <url> [--token <token>])');
  process.exit(2);
}

async function pull(client: Client, limit: unknown): Promise<{ isError: boolean; body: Response | null; text: string }> {
  const result = await client.callTool({ name: 'get_session_findings', arguments: { per_kind_limit: limit, include_summary: false } });
  const text = (result.content as { type: string; text?: string }[]).find((c) => c.type === 'text')?.text ?? '';
  return { isError: result.isError === true, body: result.isError === true ? null : ((result.structuredContent as Response | undefined) ?? (JSON.parse(text) as Response)), text };
}

async function main(): Promise<void> {
  const client = new Client({ name: 'check-superauditor', version: '1.0.0' });
  await client.connect(transportOf(process.argv.slice(2)));
  const failures: string[] = [];
  const check = (ok: boolean, what: string): void => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failures.push(what);
  };
  try {
    const one = await pull(client, 1);
    const many = await pull(client, 200);
    check(!one.isError && !many.isError && one.body !== null && many.body !== null, 'get_session_findings answers with limits 1 and 200');
    if (one.body !== null && many.body !== null) {
      const at1 = one.body;
      const at200 = many.body;
      for (const [name, r] of [['1', at1], ['200', at200]] as const) {
        const errors = schemaErrors(r);
        check(errors.length === 0, `the answer at ${name} validates against the response schema${errors.length === 0 ? '' : ` (${errors.join('; ')})`}`);
      }
      const byKind = (r: Response): Map<string, Response['findings']> =>
        r.findings.reduce((m, f) => m.set(f.kind, [...(m.get(f.kind) ?? []), f]), new Map<string, Response['findings']>());
      const k1 = byKind(at1);
      const k200 = byKind(at200);
      check([...k1.values()].every((rows) => rows.length <= 1), 'C1: no kind over per_kind_limit 1');
      for (const [kind, rows] of k200) {
        const low = k1.get(kind) ?? [];
        if (rows.length > low.length) check(at1.capped_kinds.includes(kind), `C2: ${kind} has ${rows.length} at 200 and ${low.length} at 1, so it is capped at 1`);
        else check(!at1.capped_kinds.includes(kind), `C2: ${kind} has as many at 200 as at 1, so it is not capped`);
        check(JSON.stringify(low) === JSON.stringify(rows.slice(0, low.length)), `the row of ${kind} at 1 leads its rows at 200`);
      }
      for (const [name, r] of [['1', at1], ['200', at200]] as const) {
        const counts = [...byKind(r)].every(([kind, rows]) => r.counts_by_kind[kind] === rows.length) && r.total === r.findings.length;
        const bySeverity = r.findings.reduce<Record<string, number>>((m, f) => ({ ...m, [f.severity]: (m[f.severity] ?? 0) + 1 }), {});
        check(counts && JSON.stringify(Object.entries(bySeverity).sort()) === JSON.stringify(Object.entries(r.counts_by_severity).sort()), `C3: counts agree with findings at ${name}`);
        check(r.per_kind_limit === Number(name), `per_kind_limit ${name} is echoed`);
      }
      check(typeof at1._meta?.server_version === 'string' && /^\d+\.\d+$/.test(String(at1._meta.superauditor)), 'C12: _meta.server_version and _meta.superauditor');
    }
    const zero = await pull(client, 0);
    check(zero.isError, 'C14: per_kind_limit 0 is refused as a tool error');
  } finally {
    await client.close();
  }
  console.log(failures.length === 0 ? 'superauditor two-pull check: passed' : `superauditor two-pull check: ${failures.length} failed`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

await main();
