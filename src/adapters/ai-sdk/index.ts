/**
 * `aura-harness/ai-sdk`: the Vercel AI SDK (`ai` 6 and 7) through aura.
 *
 * ```ts
 * const run = assistant.session();
 * const result = await generateText({ model: auraModel(run, model), tools: auraTools(run, tools), prompt });
 * ```
 *
 * - `auraTools` wraps each tool's `execute` in the session's guarded path, with the SDK's
 *   `toolCallId`. A refusal is the tool's output (`{aura_refused: {code, message, request_id}}`),
 *   which the model reads and works around. A call aura holds for approval uses the SDK's own
 *   tool approval (`needsApproval`): the run returns a `tool-approval-request`; when the app
 *   answers with an approved `tool-approval-response`, aura records its request and the approval
 *   (`principal`) for exactly that call, and runs it.
 * - `auraModel` (or `auraMiddleware` in your own `wrapLanguageModel`) records each model call as
 *   `model.call`/`model.result` with its token usage, and ends the run with `LoopBrokenError`
 *   once an observer (`break`) has stopped the session.
 */

import { wrapLanguageModel } from 'ai';
import type { Session } from '../../session/session.js';
import { argsObject, CallGuard, liveInput, type AdapterOptions } from '../guard.js';
import { startModelCall, tokenCount, type ModelOutcome } from '../record-model.js';

/** Options of {@link auraTools}. */
export interface AiSdkToolOptions extends AdapterOptions {
  /**
   * `native` (default): a call aura holds for approval goes through the SDK's tool approval.
   * `refuse`: it comes back to the model as a refusal; the app approves with `session.approve()`.
   */
  readonly approval?: 'native' | 'refuse';
}

/** What the SDK hands a tool's `execute` (AI SDK 6 and 7 alike). */
interface ExecuteOptions {
  readonly toolCallId: string;
  readonly messages?: readonly unknown[];
}

type Execute = (input: never, options: ExecuteOptions) => unknown;
type NeedsApproval = boolean | ((input: never, options: ExecuteOptions) => boolean | PromiseLike<boolean>);

/** What aura's refusal looks like to the model, as the tool's output. */
export interface AuraRefusalOutput {
  readonly aura_refused: { readonly code: string; readonly message: string; readonly request_id: string | null };
}

/**
 * The tools, each `execute` through the session's guarded path. Tools without `execute` (run by
 * the provider, or by the client) are returned unchanged: aura never sees them run.
 */
export function auraTools<T extends Readonly<Record<string, object>>>(session: Session, tools: T, options: AiSdkToolOptions = {}): T {
  const guard = new CallGuard(session, options);
  const native = (options.approval ?? 'native') === 'native';
  const wrapped: Record<string, object> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const { execute, needsApproval } = tool as { execute?: Execute; needsApproval?: NeedsApproval };
    if (typeof execute !== 'function') {
      wrapped[name] = tool;
      continue;
    }
    wrapped[name] = {
      ...tool,
      execute: async (input: unknown, callOptions: ExecuteOptions): Promise<unknown> => {
        const args = argsObject(input);
        const approved = native && ((): boolean => approvedInMessages(callOptions.messages, callOptions.toolCallId));
        const outcome = await guard.call(name, args, (live) => execute(liveInput(input, live) as never, callOptions), { callId: callOptions.toolCallId, approved });
        if (outcome.ran) return outcome.value;
        return { aura_refused: { code: outcome.refusal.code, message: outcome.refusal.text, request_id: outcome.refusal.request_id } } satisfies AuraRefusalOutput;
      },
      ...(native && guard.mayHold
        ? {
            needsApproval: async (input: unknown, callOptions: ExecuteOptions): Promise<boolean> => {
              const own = typeof needsApproval === 'function' ? await needsApproval(input as never, callOptions) : needsApproval === true;
              return own || guard.holds(name, argsObject(input));
            },
          }
        : {}),
    };
  }
  return wrapped as T;
}

/** A model (LanguageModelV3 or V4) whose calls are recorded, and refused once the session is stopped. */
export function auraModel<M extends { readonly specificationVersion: string }>(session: Session, model: M): M {
  const version = model.specificationVersion === 'v4' ? 'v4' : 'v3';
  const wrap = wrapLanguageModel as unknown as (options: { model: M; middleware: object }) => M;
  return wrap({ model, middleware: auraMiddleware(session, version) });
}

interface ModelLike {
  readonly modelId?: string;
  readonly provider?: string;
}

interface CallParams {
  readonly prompt?: readonly unknown[];
  readonly tools?: readonly { readonly name?: string }[];
}

interface GenerateResult {
  readonly content?: readonly { readonly type: string; readonly toolName?: string; readonly toolCallId?: string }[];
  readonly finishReason?: unknown;
  readonly usage?: { readonly inputTokens?: unknown; readonly outputTokens?: unknown };
}

interface StreamPart {
  readonly type: string;
  readonly toolName?: string;
  readonly toolCallId?: string;
  readonly finishReason?: unknown;
  readonly usage?: GenerateResult['usage'];
}

/** The language-model middleware behind {@link auraModel}, for your own `wrapLanguageModel` stack. */
export function auraMiddleware(session: Session, specificationVersion: 'v3' | 'v4' = 'v3'): object {
  return {
    specificationVersion,
    wrapGenerate: async ({ doGenerate, params, model }: { doGenerate: () => PromiseLike<GenerateResult>; params: CallParams; model: ModelLike }): Promise<GenerateResult> => {
      const call = startModelCall(session, modelFacts(model, params));
      let result: GenerateResult;
      try {
        result = await doGenerate();
      } catch (error) {
        call.failed(error);
        throw error;
      }
      const calls = (result.content ?? []).filter((part) => part.type === 'tool-call').map(toolCallOf);
      call.done(outcomeOf(result.finishReason, result.usage, calls));
      return result;
    },
    wrapStream: async ({ doStream, params, model }: { doStream: () => PromiseLike<{ stream: ReadableStream<StreamPart> }>; params: CallParams; model: ModelLike }): Promise<{ stream: ReadableStream<StreamPart> }> => {
      const call = startModelCall(session, modelFacts(model, params));
      let result: { stream: ReadableStream<StreamPart> };
      try {
        result = await doStream();
      } catch (error) {
        call.failed(error);
        throw error;
      }
      const calls: ModelOutcome['tool_calls'] & object[] = [];
      const recorded = new TransformStream<StreamPart, StreamPart>({
        transform(part, controller) {
          if (part.type === 'tool-call') calls.push(toolCallOf(part));
          else if (part.type === 'finish') call.done(outcomeOf(part.finishReason, part.usage, calls));
          else if (part.type === 'error') call.failed((part as { error?: unknown }).error);
          controller.enqueue(part);
        },
      });
      return { ...result, stream: result.stream.pipeThrough(recorded) };
    },
  };
}

function modelFacts(model: ModelLike, params: CallParams): Record<string, unknown> {
  return {
    model: model.modelId ?? null,
    provider: model.provider ?? null,
    messages: params.prompt?.length ?? 0,
    tools: (params.tools ?? []).map((tool) => tool.name ?? null),
  };
}

function toolCallOf(part: { readonly toolName?: string; readonly toolCallId?: string }): { tool: string; tool_call_id: string | null } {
  return { tool: part.toolName ?? '', tool_call_id: part.toolCallId ?? null };
}

function outcomeOf(finishReason: unknown, usage: GenerateResult['usage'], calls: ModelOutcome['tool_calls']): ModelOutcome {
  // AI SDK 6 and 7 report `{unified, raw}`; earlier versions a string.
  const reason = typeof finishReason === 'string' ? finishReason : ((finishReason as { unified?: unknown } | undefined)?.unified ?? null);
  return {
    finish_reason: typeof reason === 'string' ? reason : null,
    prompt_tokens: tokenCount(usage?.inputTokens),
    completion_tokens: tokenCount(usage?.outputTokens),
    tool_calls: calls ?? [],
  };
}

/**
 * Whether the messages the SDK hands `execute` hold an approved `tool-approval-response` for this
 * call: the SDK runs a tool that needs approval only then.
 */
function approvedInMessages(messages: readonly unknown[] | undefined, toolCallId: string): boolean {
  const parts = (messages ?? []).flatMap((message) => {
    const content = (message as { content?: unknown }).content;
    return Array.isArray(content) ? (content as { type?: unknown; toolCallId?: unknown; approvalId?: unknown; approved?: unknown }[]) : [];
  });
  const approvalIds = new Set(parts.filter((part) => part.type === 'tool-approval-request' && part.toolCallId === toolCallId).map((part) => part.approvalId));
  return parts.some((part) => part.type === 'tool-approval-response' && approvalIds.has(part.approvalId) && part.approved === true);
}
