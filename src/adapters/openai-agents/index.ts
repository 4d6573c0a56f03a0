/**
 * `aura-harness/openai-agents`: the OpenAI Agents SDK (`@openai/agents`) through aura.
 *
 * ```ts
 * const run = assistant.session();
 * const agent = new Agent({ name: 'planner', model: auraModel(run, model), tools: auraTools(run, [weather, pay]) });
 * const result = await runner.run(agent, 'Plan and pay');
 * ```
 *
 * - `auraTools` wraps each function tool's `invoke` in the session's guarded path, with the SDK's
 *   `callId`. A refusal is the tool's output, which the model reads and works around. A call aura
 *   holds for approval is the SDK's own `needsApproval`: the run ends with an interruption; once
 *   the app calls `result.state.approve(item)` and runs the state again, aura records its request
 *   and the approval (`principal`) for exactly that call, and runs it.
 * - `auraModel` records each model call as `model.call`/`model.result` with its usage, and ends the
 *   run with `LoopBrokenError` once `break` has stopped the session.
 *
 * The adapter needs nothing from the SDK at run time: it works on the SDK's own tool and model
 * objects, so it follows the SDK's versions without importing one.
 */

import type { Session } from '../../session/session.js';
import { parseJson } from '../../spine/native-json.js';
import { argsObject, CallGuard, liveInput, type AdapterOptions } from '../guard.js';
import { startModelCall, tokenCount } from '../record-model.js';

interface RunContextLike {
  isToolApproved?(approval: { toolName: string; callId: string }): boolean | undefined;
}

interface FunctionToolLike {
  readonly type: string;
  readonly name: string;
  invoke(runContext: RunContextLike, input: string, details?: { readonly toolCall?: { readonly callId?: string } }): Promise<unknown>;
  needsApproval?(runContext: RunContextLike, input: never, callId?: string): Promise<boolean>;
}

/**
 * The tools, each function tool through the session's guarded path. Other tools (hosted tools,
 * computer use, handoffs) are returned unchanged: they do not run in this process.
 */
export function auraTools<T extends { readonly type: string }>(session: Session, tools: readonly T[], options: AdapterOptions = {}): T[] {
  const guard = new CallGuard(session, options);
  return tools.map((tool) => (tool.type === 'function' ? (guardTool(guard, tool as unknown as FunctionToolLike) as unknown as T) : tool));
}

function guardTool(guard: CallGuard, tool: FunctionToolLike): FunctionToolLike {
  return {
    ...tool,
    // The SDK takes a shorter path for a tool whose approval policy is its own static one.
    ...(guard.mayHold
      ? {
          needsApproval: async (runContext: RunContextLike, input: never, callId?: string): Promise<boolean> => {
            const own = tool.needsApproval === undefined ? false : await tool.needsApproval(runContext, input, callId);
            return own || guard.holds(tool.name, argsObject(input));
          },
        }
      : {}),
    invoke: async (runContext, input, details) => {
      const parsed = parseInput(input);
      const callId = details?.toolCall?.callId;
      // The SDK runs a call that needs approval only once the app approved it in the run state.
      const approved = (): boolean => callId !== undefined && runContext.isToolApproved?.({ toolName: tool.name, callId }) === true;
      // Input that is not JSON, and arguments the guarded path left as they were (no secret
      // injected, none dropped), go to the tool as they came: not written out again for the SDK to parse.
      const liveText = (live: Record<string, unknown>): string => (parsed === input || sameArgs(parsed, live) ? input : JSON.stringify(liveInput(parsed, live)));
      const outcome = await guard.call(tool.name, argsObject(parsed), (live) => tool.invoke(runContext, liveText(live), details), { callId, approved });
      return outcome.ran ? outcome.value : outcome.refusal.text;
    },
  };
}

interface ModelRequestLike {
  readonly input?: unknown;
  readonly tools?: readonly { readonly name?: string }[];
}

interface ModelResponseLike {
  readonly usage?: { readonly inputTokens?: number; readonly outputTokens?: number };
  readonly output?: readonly { readonly type?: string; readonly name?: string; readonly callId?: string }[];
}

interface ModelLike {
  getResponse(request: never): Promise<unknown>;
  getStreamedResponse(request: never): AsyncIterable<unknown>;
}

/** A model whose calls are recorded, and refused once `break` has stopped the session. */
export function auraModel<M extends ModelLike>(session: Session, model: M, name = model.constructor.name): M {
  const facts = (request: ModelRequestLike): Record<string, unknown> => ({
    model: name,
    messages: Array.isArray(request.input) ? request.input.length : 1,
    tools: (request.tools ?? []).map((tool) => tool.name ?? null),
  });
  const recorded: ModelLike = {
    getResponse: async (request: ModelRequestLike) => {
      const call = startModelCall(session, facts(request));
      let response: ModelResponseLike;
      try {
        response = (await model.getResponse(request as never)) as ModelResponseLike;
      } catch (error) {
        call.failed(error);
        throw error;
      }
      call.done({
        prompt_tokens: tokenCount(response.usage?.inputTokens),
        completion_tokens: tokenCount(response.usage?.outputTokens),
        tool_calls: (response.output ?? []).filter((item) => item.type === 'function_call').map((item) => ({ tool: item.name ?? '', tool_call_id: item.callId ?? null })),
      });
      return response;
    },
    getStreamedResponse: (request: ModelRequestLike) => streamed(session, model, request, facts(request)),
  };
  return Object.assign(Object.create(Object.getPrototypeOf(model) as object) as M, model, recorded);
}

async function* streamed(session: Session, model: ModelLike, request: ModelRequestLike, facts: Record<string, unknown>): AsyncIterable<unknown> {
  const call = startModelCall(session, facts);
  try {
    for await (const event of model.getStreamedResponse(request as never)) {
      const done = event as { type?: string; response?: ModelResponseLike };
      if (done.type === 'response_done') {
        call.done({ prompt_tokens: tokenCount(done.response?.usage?.inputTokens), completion_tokens: tokenCount(done.response?.usage?.outputTokens) });
      }
      yield event;
    }
  } catch (error) {
    call.failed(error);
    throw error;
  }
}

/** True when `live` holds the same values as the parsed input, key for key (nested values by identity). */
function sameArgs(parsed: unknown, live: Record<string, unknown>): boolean {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return false;
  const keys = Object.keys(parsed);
  if (keys.length !== Object.keys(live).length) return false;
  return keys.every((key) => Object.hasOwn(live, key) && live[key] === (parsed as Record<string, unknown>)[key]);
}

function parseInput(input: string): unknown {
  try {
    return parseJson(input) as unknown;
  } catch {
    return input;
  }
}
