/**
 * The body of a POST to aura's Streamable HTTP endpoints (`aura mcp --http`, `aura proxy --http`),
 * read here and handed to the MCP SDK's transport already parsed. The SDK's own reading parses it
 * with `JSON.parse`, which can misread a key written with an escape on Node 24
 * (src/spine/native-json.ts): the arguments the proxy records and passes on are then what the
 * client wrote. Read after the caller was authorized, never before.
 */

import type * as http from 'node:http';
import { parseJson } from '../spine/native-json.js';

/** The most a request body may hold, the SDK's own default (4 MiB). */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

/**
 * The parsed body of `req`, or null once the request was answered: 413 for a body over
 * {@link MAX_REQUEST_BODY_BYTES}, 400 (JSON-RPC -32700) for one that is not JSON. Both answers are
 * the SDK's.
 */
export async function readJsonBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<{ readonly value: unknown } | null> {
  if (Number(req.headers['content-length']) > MAX_REQUEST_BODY_BYTES) return tooLarge(req, res);
  const body = await new Promise<Buffer | null>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const take = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= MAX_REQUEST_BODY_BYTES) return void chunks.push(chunk);
      req.off('data', take);
      resolve(null);
    };
    req.on('data', take).once('end', () => resolve(Buffer.concat(chunks))).once('error', reject);
  });
  if (body === null) return tooLarge(req, res);
  // As the SDK decodes it: malformed UTF-8 replaced, a byte order mark dropped.
  const text = new TextDecoder().decode(body);
  try {
    return { value: parseJson(text) };
  } catch {
    answer(res, 400, -32700, 'Parse error: Invalid JSON');
    return null;
  }
}

function tooLarge(req: http.IncomingMessage, res: http.ServerResponse): null {
  // The rest is read and dropped, so that the client, still sending, reads the answer.
  req.resume();
  answer(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_REQUEST_BODY_BYTES} bytes`);
  return null;
}

function answer(res: http.ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/** Answers with a status and `body` as JSON. */
export function sendJson(res: http.ServerResponse, status: number, body: object): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}
