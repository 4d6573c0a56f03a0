/**
 * `buildServer()`: the MCP server of the findings channel, on the official SDK. One factory that
 * stdio and Streamable HTTP both serve (the SDK examples' skeleton). Tools declare a title,
 * per-field descriptions, an output schema and `readOnlyHint`, and return `structuredContent`
 * plus the same JSON as a text block. Refusals are tool errors (`isError: true`) with a message a
 * model can act on; the transport never sees them as protocol errors.
 */

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { VERSION } from '../version.js';
import { ToolRefusal, type FindingsTools } from './findings-service.js';

const severity = z.enum(['critical', 'warn', 'info']);
// Findings carry server-defined keys: a strict object schema would reject them (DESIGN §8).
const finding = z.object({ kind: z.string(), severity }).passthrough();
const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The findings channel over `service` (the sessions folders, or the fleet store). */
export function buildServer(service: FindingsTools): McpServer {
  const server = new McpServer({ name: 'aura', version: VERSION });

  server.registerTool(
    'get_session_findings',
    {
      title: 'Session findings (SuperAuditor v1.1)',
      description:
        "Pull the audit findings of aura's sessions: integrity of the trails and the store, policy violations, pending approvals, loops and more. " +
        'Each finding has a kind and a static severity (critical, warn, info). Read-only; computed from the files at each call.',
      inputSchema: {
        session_key: z
          .string()
          .optional()
          .describe('An opaque label: the key a session declared (such as my-client-1), or a session id (aura_sess_ + 12 hex). It scopes session findings to the sessions it names (none: an empty scope, not an error); store findings always cover every session'),
        per_kind_limit: z.unknown().optional().describe('Maximum findings per kind: an integer >= 1 (default 5); anything else is refused'),
        include_summary: z.unknown().optional().describe('Include the prose summary (default true)'),
      },
      outputSchema: z
        .object({
        findings: z.array(finding),
        total: z.number().int(),
        counts_by_kind: z.record(z.string(), z.number()),
        counts_by_severity: z.record(z.string(), z.number()),
        capped_kinds: z.array(z.string()),
        per_kind_limit: z.number().int(),
        summary: z.string().optional(),
        identity_shared: z.boolean().optional(),
        _meta: z.object({ server_version: z.string(), superauditor: z.string() }),
      })
        .passthrough(),
      annotations: READ_ONLY,
    },
    (args) => answer(() => service.getSessionFindings(args)),
  );

  server.registerTool(
    'list_sessions',
    {
      title: 'List sessions',
      description: 'The sessions this caller may read: agent, opened, events, verdict, chain validity and state.',
      inputSchema: {},
      outputSchema: z.object({ sessions: z.array(z.object({ session_id: z.string() }).passthrough()) }).passthrough(),
      annotations: READ_ONLY,
    },
    () => answer(() => service.listSessions()),
  );

  server.registerTool(
    'get_session_report',
    {
      title: 'Session audit report',
      description: "One session's audit report (verdict, findings, scorecard, recommendations), re-checked from its trail.",
      inputSchema: { session_key: z.string().describe('The session id: aura_sess_ + 12 hex') },
      outputSchema: z.object({ session_id: z.string(), audit_report: z.object({ verdict: z.string() }).passthrough() }).passthrough(),
      annotations: READ_ONLY,
    },
    (args) => answer(() => service.getSessionReport(args.session_key)),
  );

  server.registerTool(
    'verify_session',
    {
      title: 'Verify a session trail',
      description: "Verify one session's hash chain: integrity, completeness and, when it has a summary, the seal, and whether the summary says what the trail says (summary_mismatch).",
      inputSchema: { session_key: z.string().describe('The session id: aura_sess_ + 12 hex') },
      outputSchema: z.object({ session_id: z.string(), hash_chain_valid: z.boolean(), complete: z.boolean(), events: z.number() }).passthrough(),
      annotations: READ_ONLY,
    },
    (args) => answer(() => service.verifySession(args.session_key)),
  );

  return server;
}

async function answer(compute: () => object | Promise<object>): Promise<CallToolResult> {
  try {
    const result = (await compute()) as Record<string, unknown>;
    return { structuredContent: result, content: [{ type: 'text', text: JSON.stringify(result) }] };
  } catch (error) {
    if (error instanceof ToolRefusal) return { isError: true, content: [{ type: 'text', text: error.message }] };
    throw error;
  }
}
