/**
 * `aura-harness/langchain`: LangChain.js (`@langchain/core` 1.x) and LangGraph.js through aura.
 *
 * ```ts
 * const run = assistant.session();
 * const model = new ChatOpenAI({ model, callbacks: [new AuraCallbackHandler(run)] });   // recorded
 * const tools = auraTools(run, [search, pay]);                                          // guarded
 * ```
 *
 * - `auraTools` wraps each tool so its call goes through the session's guarded path with the
 *   tool-call id of the `ToolCall` it answers. A refusal is the tool's output (the `ToolMessage`
 *   the model reads). A call aura holds for approval, and a session `break` stopped, become a
 *   LangGraph `interrupt` when the graph has a checkpointer: resume with
 *   `new Command({ resume: { approved: true, principal: 'alice' } })` and exactly that call runs
 *   (or the session goes on); `approved: false` tells the model a person declined. Without a
 *   checkpointer they are refusals, released by `session.approve()`.
 * - `AuraCallbackHandler` records each chat-model run as `model.call`/`model.result` (token usage
 *   from `usage_metadata`). Once `break` has stopped the session, it ends the run at the next
 *   model call with `LoopBrokenError`. On the model it sees the model's runs only; on a run
 *   (`invoke(input, { callbacks })`) it also records tool runs of tools `auraTools` did not wrap,
 *   at LangChain's cost of a callback run for every runnable of the run.
 */

import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { AuraError, LoopBrokenError } from '../../errors.js';
import type { Session } from '../../session/session.js';
import { parseJson } from '../../spine/native-json.js';
import { argsObject, CallGuard, liveInput, type AdapterOptions, type GuardedOutcome } from '../guard.js';
import { startModelCall, tokenCount, type ModelCall } from '../record-model.js';

/** Marks runs of tools aura wraps, so the callback handler does not record them twice. */
const GUARDED = 'aura_guarded';

/** What a person answers to aura's interrupt. */
export interface AuraResume {
  readonly approved: boolean;
  /** Who decided (default: the adapter's `principal`, else the session's operator). */
  readonly principal?: string;
}

/** What aura's interrupt carries (`__interrupt__[].value`). */
export interface AuraInterrupt {
  readonly aura: 'approval_required' | 'loop_broken';
  readonly session_id: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly tool_call_id: string | null;
  readonly message: string;
}

/** The config a tool runs with: LangChain's, with the `ToolCall` it answers when there is one. */
type ToolConfig = RunnableConfig & { readonly toolCall?: { readonly id?: string } };

/** Each tool through the session's guarded path (names, descriptions and schemas unchanged). */
export function auraTools(session: Session, tools: readonly StructuredToolInterface[], options: AdapterOptions = {}): DynamicStructuredTool[] {
  const guard = new CallGuard(session, options);
  return tools.map((tool) => auraTool(guard, tool));
}

function auraTool(guard: CallGuard, tool: StructuredToolInterface): DynamicStructuredTool {
  // LangChain's StructuredTool: what it runs, and its settings the interface does not name.
  const inner = tool as StructuredToolInterface & { _call?: (input: unknown, runManager: unknown, config: RunnableConfig) => unknown; responseFormat?: 'content' | 'content_and_artifact'; metadata?: Record<string, unknown> };
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.schema as never,
    ...(tool.returnDirect === undefined ? {} : { returnDirect: tool.returnDirect }),
    ...(inner.responseFormat === undefined ? {} : { responseFormat: inner.responseFormat }),
    metadata: { ...inner.metadata, [GUARDED]: true },
    func: async (input: unknown, runManager: unknown, config?: RunnableConfig): Promise<unknown> => {
      const { toolCall, ...rest }: ToolConfig = config ?? {};
      const callId = toolCall?.id;
      const args = argsObject(input);
      // The wrapper has already checked the input against the tool's own schema and opened its run:
      // a tool with a body of its own (`_call`) runs it directly, anything else is invoked (as content: this wrapper makes the message).
      const run = (live: Record<string, unknown>): Promise<unknown> =>
        typeof inner._call === 'function' ? Promise.resolve(inner._call(liveInput(input, live), runManager, rest)) : tool.invoke(liveInput(input, live) as never, { ...rest, metadata: { ...rest.metadata, [GUARDED]: true } });
      const checkpointed = config?.configurable?.['__pregel_checkpointer'] !== undefined;
      const interrupts = checkpointed ? await langGraphInterrupt() : null;
      let approved = false;
      let principal: string | undefined;
      if (interrupts !== null && guard.holds(tool.name, args)) {
        const answer = resumeOf(interrupts(describe(guard.session, 'approval_required', tool.name, args, callId, `${tool.name} needs a person's approval before it runs`)));
        // The request is recorded (and left pending): the trail shows what the model asked for.
        if (!answer.approved) return (await guard.call(tool.name, args, run, { callId }), `A person declined this call of ${tool.name}: it did not run. Reach the goal another way, or ask the user.`);
        approved = true;
        principal = answer.principal;
      }
      const outcome = await (principal === undefined ? guard : new CallGuard(guard.session, { principal })).call(tool.name, args, run, { callId, approved });
      return answerOf(outcome, guard.session, interrupts, tool.name, args, callId);
    },
  });
}

/**
 * The output the model reads. A session `break` stopped becomes an interrupt in a checkpointed
 * graph: the person's answer lets the session go on (the call is then made again) or ends it.
 */
async function answerOf(outcome: GuardedOutcome<unknown>, session: Session, interrupts: Interrupt | null, tool: string, args: Readonly<Record<string, unknown>>, callId: string | undefined): Promise<unknown> {
  if (outcome.ran) return outcome.value;
  if (interrupts === null || !(outcome.error instanceof LoopBrokenError) || outcome.error.data === undefined) return outcome.refusal.text;
  const answer = resumeOf(interrupts(describe(session, 'loop_broken', tool, args, callId, outcome.refusal.text)));
  if (!answer.approved) throw outcome.error;
  session.approve(outcome.error.data.request_id, answer.principal === undefined ? {} : { principal: answer.principal });
  return outcome.refusal.text.replace(/^aura refused this call/, 'aura stopped this call earlier; a person let the session go on. Change strategy, or call again: it was refused');
}

function describe(session: Session, aura: AuraInterrupt['aura'], tool: string, args: Readonly<Record<string, unknown>>, callId: string | undefined, message: string): AuraInterrupt {
  return { aura, session_id: session.id, tool, args, tool_call_id: callId ?? null, message };
}

function resumeOf(value: unknown): AuraResume {
  const answer = value !== null && typeof value === 'object' ? (value as Partial<AuraResume>) : {};
  return { approved: answer.approved === true, ...(typeof answer.principal === 'string' ? { principal: answer.principal } : {}) };
}

type Interrupt = (value: AuraInterrupt) => unknown;

/** LangGraph's `interrupt`, loaded only in a graph that has a checkpointer (LangChain alone does not need LangGraph). */
async function langGraphInterrupt(): Promise<Interrupt> {
  const { interrupt } = await import('@langchain/langgraph');
  return interrupt as Interrupt;
}

interface Serialized {
  readonly id?: readonly string[];
  readonly kwargs?: Readonly<Record<string, unknown>>;
}

interface Generation {
  readonly message?: { readonly usage_metadata?: { readonly input_tokens?: number; readonly output_tokens?: number }; readonly tool_calls?: readonly { readonly name: string; readonly id?: string }[]; readonly response_metadata?: Readonly<Record<string, unknown>> };
  readonly generationInfo?: Readonly<Record<string, unknown>>;
}

interface LlmResult {
  readonly generations: readonly (readonly Generation[])[];
  readonly llmOutput?: { readonly tokenUsage?: { readonly promptTokens?: number; readonly completionTokens?: number } } | null;
}

/**
 * Records model runs (and tool runs of tools aura did not wrap) into the session. Errors it
 * raises are meant to stop the run: a stopped session at the next model call, a policy denial of
 * an unwrapped tool.
 */
export class AuraCallbackHandler extends BaseCallbackHandler {
  readonly name = 'aura';
  private readonly models = new Map<string, ModelCall>();
  private readonly tools = new Map<string, { readonly tool: string; readonly args: Readonly<Record<string, unknown>>; readonly callId: string | null; readonly started: number }>();

  constructor(readonly session: Session) {
    // Chains and retrievers are not recorded: skipping them keeps a graph's every node from waiting on
    // this handler. Agents are not ignored: LangChain sends tool runs only to handlers that take agents'.
    super({ raiseError: true, _awaitHandler: true, ignoreChain: true, ignoreRetriever: true, ignoreCustomEvent: true });
  }

  override handleChatModelStart(llm: Serialized, messages: readonly (readonly unknown[])[], runId: string, _parentRunId?: string, _extraParams?: Record<string, unknown>, _tags?: string[], metadata?: Record<string, unknown>): void {
    const model = metadata?.['ls_model_name'] ?? llm.kwargs?.['model'] ?? llm.id?.at(-1) ?? null;
    this.models.set(runId, startModelCall(this.session, { model, provider: metadata?.['ls_provider'] ?? null, messages: messages[0]?.length ?? 0, run_id: runId }));
  }

  override handleLLMEnd(output: LlmResult, runId: string): void {
    const call = this.models.get(runId);
    if (call === undefined) return;
    this.models.delete(runId);
    const generation = output.generations[0]?.[0];
    const usage = generation?.message?.usage_metadata;
    const legacy = output.llmOutput?.tokenUsage;
    const reason = generation?.generationInfo?.['finish_reason'] ?? generation?.message?.response_metadata?.['finish_reason'] ?? null;
    call.done({
      finish_reason: typeof reason === 'string' ? reason : null,
      prompt_tokens: tokenCount(usage?.input_tokens) ?? tokenCount(legacy?.promptTokens),
      completion_tokens: tokenCount(usage?.output_tokens) ?? tokenCount(legacy?.completionTokens),
      tool_calls: (generation?.message?.tool_calls ?? []).map((c) => ({ tool: c.name, tool_call_id: c.id ?? null })),
    });
  }

  override handleLLMError(error: Error, runId: string): void {
    this.models.get(runId)?.failed(error);
    this.models.delete(runId);
  }

  override handleToolStart(tool: Serialized, input: string, runId: string, _parentRunId?: string, _tags?: string[], metadata?: Record<string, unknown>, runName?: string, toolCallId?: string): void {
    if (metadata?.[GUARDED] === true) return;
    const name = runName ?? tool.id?.at(-1) ?? 'tool';
    const args = argsObject(parsedInput(input));
    const callId = toolCallId ?? null;
    this.session.emit('tool.call', { tool: name, args, ...(callId === null ? {} : { tool_call_id: callId }) });
    this.tools.set(runId, { tool: name, args, callId, started: performance.now() });
  }

  override handleToolEnd(output: unknown, runId: string): void {
    const run = this.tools.get(runId);
    if (run === undefined) return;
    this.tools.delete(runId);
    const content = (output as { content?: unknown } | null)?.content ?? output;
    // With its arguments, as the guarded path records a result: what they ran tells whether it printed a secret.
    this.session.emit('tool.result', { tool: run.tool, args: run.args, ...(run.callId === null ? {} : { tool_call_id: run.callId }), result: typeof content === 'string' ? content : parseJson(JSON.stringify(content ?? null)) }, { telemetry: { latency_ms: elapsed(run.started) } });
  }

  override handleToolError(error: Error, runId: string): void {
    const run = this.tools.get(runId);
    if (run === undefined) return;
    this.tools.delete(runId);
    // A refusal was recorded by the session when it refused the call.
    if (error instanceof AuraError) return;
    this.session.emit('tool.error', { tool: run.tool, ...(run.callId === null ? {} : { tool_call_id: run.callId }), error: { name: error.name, message: error.message } }, { telemetry: { latency_ms: elapsed(run.started) } });
  }
}

function parsedInput(input: unknown): unknown {
  if (typeof input !== 'string') return input;
  try {
    return parseJson(input) as unknown;
  } catch {
    return input;
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
