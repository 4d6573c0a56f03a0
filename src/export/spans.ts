/**
 * The span tree of a session, built from its events in trail order (GenAI conventions):
 *
 * - the session is the root `invoke_agent {agent}` span, from the first event to the last;
 * - each guarded call is an `execute_tool {tool}` span, from `tool.intent` (or the first
 *   `tool.call` when nothing recorded an intent) to `tool.result`/`tool.error`, a denial or a hold;
 * - each policy decision is an `apply_guardrail {rule}` span, a child of the call it decided;
 * - every other event is a span event of the span it belongs to (its call while one is open,
 *   else the root), named by its kind and carrying its event id and hash, never its payload.
 *
 * Span events rather than log records: a trace pipeline then carries everything with no second
 * signal to configure, and each event keeps its place and time in the tree.
 *
 * The builder takes one event at a time and hands out each span as it ends, so a live exporter
 * sends calls while the session runs and the root at close; fed a whole trail, it gives the same
 * spans in the same order. Ids come from event ids: exporting a trail again gives the same spans.
 */

import { IdentityRedactor } from './operator-redaction.js';
import { canonicalJson } from '../spine/canonical.js';
import { sha256 } from '../spine/hash.js';
import { objectOf, stringOf } from '../spine/json-shape.js';
import type { AuraEvent, JsonObject } from '../spine/record.js';
import { AURA, GEN_AI, GENERAL, GUARDRAIL_COMPONENT, MCP, OPERATION } from './semconv.js';

/** An attribute value: ints are bigints, doubles numbers (OTLP keeps the two apart). */
export type AttributeValue = string | boolean | bigint | number;

/** One attribute of a span, span event or resource. */
export interface Attribute {
  readonly key: string;
  readonly value: AttributeValue;
}

/** A timed event inside a span. */
export interface SpanEvent {
  readonly name: string;
  readonly timeUnixNano: bigint;
  readonly attributes: readonly Attribute[];
}

/** OTLP span kinds used here. */
export const SPAN_KIND = { internal: 1, client: 3 } as const;

/** OTLP status code of a failed span. */
export const STATUS_ERROR = 2;

/** A finished span. */
export interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | null;
  readonly name: string;
  readonly kind: (typeof SPAN_KIND)[keyof typeof SPAN_KIND];
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: readonly Attribute[];
  readonly events: readonly SpanEvent[];
  readonly droppedEventsCount: number;
  readonly status: { readonly code: typeof STATUS_ERROR; readonly message: string } | null;
}

/** What goes on spans besides the defaults. */
export interface SpanOptions {
  /** Put tool arguments and results (as recorded: redacted, masked) on tool spans. Default false. */
  readonly captureToolContent?: boolean;
}

// A continuous session can run for days; its root span must not grow without end.
const MAX_SPAN_EVENTS = 1000;
// Calls emitted without results would otherwise stay open until close, each making the next lookup slower.
const MAX_OPEN_CALLS = 64;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ZERO_ID = /^0+$/;

/** A call whose span is open. */
interface OpenCall {
  readonly spanId: string;
  readonly tool: string;
  /** The framework's id of the call (`tool_call_id`), which tells parallel calls of one tool apart. */
  readonly callId: string | null;
  /** The caller's span (`trace_parent` of `tool.intent`), else the session's. */
  readonly traceId: string;
  readonly parentSpanId: string;
  readonly start: bigint;
  readonly opening: AuraEvent;
  readonly attributes: Attribute[];
  readonly events: SpanEvent[];
  /** Ids of the events of the call, for decisions that name the event they decided. */
  readonly members: Set<string>;
  dropped: number;
  sawCall: boolean;
  /** The `tool.result` that ended the call; its after-the-fact checks still join the span. */
  resultEventId: string | null;
  end: bigint;
  error: { type: string; message: string } | null;
}

/** The MCP session a trail runs in (`mcp.session` event). */
interface McpSession {
  readonly sessionId: string | null;
  readonly protocolVersion: string | null;
  readonly networkTransport: string | null;
}

/** The session's span while it is open: known from the first event on. */
interface OpenRoot {
  readonly first: AuraEvent;
  readonly start: bigint;
  readonly spanId: string;
  readonly traceId: string;
  readonly events: SpanEvent[];
  dropped: number;
}

/** Builds spans from events, handing each to `onSpan` when it ends. */
export class SpanBuilder {
  private root: OpenRoot | null = null;
  private last: AuraEvent | null = null;
  private readonly calls: OpenCall[] = [];
  private readonly rootFacts = new Map<string, AttributeValue>();
  private mcp: McpSession | null = null;
  /** The span the session runs under (`trace_parent` of `session.open`). */
  private rootParent: string | null = null;
  private finished = false;
  /** The operator's identity never goes on a span (a principal who was the operator, a message quoting them). */
  private readonly identity = new IdentityRedactor();

  constructor(
    private readonly onSpan: (span: Span) => void,
    private readonly options: SpanOptions = {},
  ) {}

  /** Takes the next event of the trail. */
  add(event: AuraEvent): void {
    if (this.finished) return;
    this.root ??= { first: event, start: nanos(event), spanId: spanIdOf(event.event_id), traceId: traceIdOf(event), events: [], dropped: 0 };
    this.last = event;
    this.identity.noteEvent(event.agent_ids, event.kind, event.payload);
    this.noteRootFacts(event);
    const pending = this.calls.find((call) => call.resultEventId !== null);
    if (pending !== undefined && !this.checksResult(event, pending)) this.endCall(pending);

    switch (event.kind) {
      case 'tool.intent':
        this.openCall(event);
        return;
      case 'tool.call': {
        const tool = stringOf(event.payload['tool']) ?? stringOf(event.payload['skill_id']) ?? '';
        const callId = stringOf(event.payload['tool_call_id']);
        const call = this.calls.find((c) => c.tool === tool && c.callId === callId && !c.sawCall && c.resultEventId === null) ?? this.openCall(event);
        call.sawCall = true;
        addPromoted(call.attributes, event, PROMOTED_ON_CALL);
        if (call.opening !== event) this.addEvent(call, event);
        return;
      }
      case 'tool.result':
      case 'tool.error':
        this.result(event);
        return;
      case 'constraint.passed':
      case 'constraint.violated':
      case 'constraint.approval_required':
      case 'constraint.approved':
        this.decision(event);
        return;
      case 'mcp.session': {
        const p = event.payload;
        this.mcp = { sessionId: stringOf(p['mcp_session_id']), protocolVersion: stringOf(p['protocol_version']), networkTransport: stringOf(p['network_transport']) };
        break;
      }
    }
    const tool = stringOf(event.payload['tool']);
    const call = tool === null ? undefined : this.openCallOf(tool, stringOf(event.payload['tool_call_id']));
    this.addEvent(call ?? null, event);
  }

  /** The root span: set by the first event, before any other span can start. */
  private get openRoot(): OpenRoot {
    if (this.root === null) throw new Error('no event yet');
    return this.root;
  }

  /** True while a call's result is recorded but its after-the-fact checks may still come. */
  get settling(): boolean {
    return this.calls.some((call) => call.resultEventId !== null);
  }

  /**
   * Ends a call waiting on checks of its result. A session records a result and its checks in one
   * synchronous step, so a live exporter settles once that step is over; fed a whole trail, the
   * next event does the same at the same point.
   */
  settle(): void {
    const pending = this.calls.find((call) => call.resultEventId !== null);
    if (pending !== undefined) this.endCall(pending);
  }

  /** Ends every open span and the root. Later events are ignored. */
  finish(): void {
    if (this.finished || this.root === null || this.last === null) return;
    this.finished = true;
    for (const call of [...this.calls]) this.endCall(call, nanos(this.last));
    const { first, start, spanId, traceId, events, dropped } = this.root;
    const agent = stringOf(this.rootFacts.get(AURA.agentRef)) ?? first.aura_id;
    const attributes: Attribute[] = [
      { key: GEN_AI.operationName, value: OPERATION.invokeAgent },
      { key: GEN_AI.agentName, value: agent },
      { key: GEN_AI.agentId, value: first.aura_id },
      { key: GEN_AI.conversationId, value: first.session_id },
      { key: AURA.sessionId, value: first.session_id },
      { key: AURA.auraId, value: first.aura_id },
    ];
    addPromoted(attributes, first);
    for (const [key, value] of this.rootFacts) setAttribute(attributes, key, value);
    this.emitSpan({
      traceId,
      spanId,
      parentSpanId: this.rootParent,
      name: `${OPERATION.invokeAgent} ${agent}`,
      kind: SPAN_KIND.internal,
      startTimeUnixNano: start,
      endTimeUnixNano: maxOf(start, nanos(this.last)),
      attributes,
      events,
      droppedEventsCount: dropped,
      status: null,
    });
  }

  private emitSpan(span: Span): void {
    if (!this.identity.active) {
      this.onSpan(span);
      return;
    }
    const identity = this.identity;
    const attributes = (list: readonly Attribute[]): Attribute[] => list.map((a) => (typeof a.value === 'string' ? { key: a.key, value: identity.text(a.value) } : a));
    this.onSpan({
      ...span,
      name: identity.text(span.name),
      attributes: attributes(span.attributes),
      events: span.events.map((e) => ({ ...e, attributes: attributes(e.attributes) })),
      status: span.status === null ? null : { ...span.status, message: identity.text(span.status.message) },
    });
  }

  /** Facts of the session found along the way, for the root span. */
  private noteRootFacts(event: AuraEvent): void {
    const p = event.payload;
    if (event.kind === 'membrane.ingress' || event.kind === 'session.open') {
      const context = objectOf(p['context']);
      const ref = stringOf(p['agent_ref']) ?? stringOf(context['agent_ref']);
      if (ref !== null) this.rootFacts.set(AURA.agentRef, ref);
      const mode = stringOf(p['mode']);
      if (mode !== null) this.rootFacts.set(AURA.mode, mode);
      const purpose = stringOf(p['purpose']) ?? stringOf(context['purpose']);
      if (purpose !== null) this.rootFacts.set(GEN_AI.agentDescription, purpose);
      const parent = traceParentOf(p);
      if (event.kind === 'session.open' && parent !== null && parent.traceId === this.openRoot.traceId) this.rootParent = parent.spanId;
    } else if (event.kind === 'identity.bound') {
      const operator = objectOf(p['operator']);
      for (const [key, source] of [
        [AURA.operatorMethod, 'method'],
        [AURA.operatorSubjectHash, 'subject_hash'],
      ] as const) {
        const value = stringOf(operator[source]);
        if (value !== null) this.rootFacts.set(key, value);
      }
      if (typeof operator['verified'] === 'boolean') this.rootFacts.set(AURA.operatorVerified, operator['verified']);
    } else if (event.kind === 'session.close') {
      const reason = stringOf(p['reason']);
      if (reason !== null) this.rootFacts.set(AURA.closeReason, reason);
      if (typeof p['goal_reached'] === 'boolean') this.rootFacts.set(AURA.goalReached, p['goal_reached']);
    }
  }

  private openCall(event: AuraEvent, tool = stringOf(event.payload['tool']) ?? stringOf(event.payload['skill_id']) ?? '(no tool)', callId = stringOf(event.payload['tool_call_id'])): OpenCall {
    const attributes: Attribute[] = [
      { key: GEN_AI.operationName, value: OPERATION.executeTool },
      { key: GEN_AI.toolName, value: tool },
      { key: GEN_AI.toolCallId, value: callId ?? event.event_id },
      { key: GEN_AI.toolType, value: 'function' },
    ];
    if (this.mcp !== null) {
      attributes.push({ key: MCP.methodName, value: MCP.toolsCall });
      if (this.mcp.sessionId !== null) attributes.push({ key: MCP.sessionId, value: this.mcp.sessionId });
      if (this.mcp.protocolVersion !== null) attributes.push({ key: MCP.protocolVersion, value: this.mcp.protocolVersion });
      if (this.mcp.networkTransport !== null) attributes.push({ key: GENERAL.networkTransport, value: this.mcp.networkTransport });
    }
    addPromoted(attributes, event);
    const capability = stringOf(event.payload['capability_id']);
    if (capability !== null) attributes.push({ key: AURA.capabilityId, value: capability });
    if (this.options.captureToolContent === true && event.payload['args'] !== undefined) {
      attributes.push({ key: GEN_AI.toolCallArguments, value: canonicalJson(event.payload['args'], 'args') });
    }
    const end = nanos(event);
    // A result with nothing before it: the call began its latency earlier, but not before the session.
    const latency = event.telemetry['latency_ms'];
    const start = typeof latency === 'number' && latency > 0 && event.kind !== 'tool.intent' ? maxOf(this.openRoot.start, end - BigInt(Math.round(latency * 1e6))) : end;
    const parent = traceParentOf(event.payload);
    const call: OpenCall = {
      spanId: spanIdOf(event.event_id),
      tool,
      callId,
      traceId: parent?.traceId ?? this.openRoot.traceId,
      parentSpanId: parent?.spanId ?? this.openRoot.spanId,
      start,
      opening: event,
      attributes,
      events: [],
      members: new Set(),
      dropped: 0,
      sawCall: false,
      resultEventId: null,
      end,
      error: null,
    };
    if (event.kind !== 'tool.intent') this.addEvent(call, event);
    if (this.calls.length >= MAX_OPEN_CALLS) this.endCall(this.calls[0] as OpenCall);
    this.calls.push(call);
    return call;
  }

  /** The open call of this tool (and call id, when the trail names calls). */
  private openCallOf(tool: string, callId: string | null): OpenCall | undefined {
    return this.calls.find((call) => call.tool === tool && (callId === null || call.callId === callId) && call.resultEventId === null);
  }

  private result(event: AuraEvent): void {
    const tool = stringOf(event.payload['tool']) ?? stringOf(event.payload['skill_id']) ?? '(no tool)';
    const call = this.openCallOf(tool, stringOf(event.payload['tool_call_id'])) ?? this.openCall(event);
    if (call.opening !== event) this.addEvent(call, event);
    call.end = nanos(event);
    if (event.kind === 'tool.error') {
      const error = event.payload['error'];
      const shape = objectOf(error);
      call.error = { type: stringOf(error) ?? stringOf(shape['name']) ?? '_OTHER', message: stringOf(error) ?? stringOf(shape['message']) ?? 'tool error' };
      this.endCall(call);
      return;
    }
    const result = event.payload['result'];
    if (objectOf(result)['isError'] === true) call.error = { type: MCP.toolError, message: 'the tool returned an error result' };
    if (this.options.captureToolContent === true && result !== undefined) call.attributes.push({ key: GEN_AI.toolCallResult, value: canonicalJson(result, 'result') });
    // Policy checks a result after it is recorded: those decisions join the call before it ends.
    call.resultEventId = event.event_id;
  }

  /** Whether `event` is a policy check of the result that `call` is waiting on. */
  private checksResult(event: AuraEvent, call: OpenCall): boolean {
    if (event.kind === 'constraint.passed') return event.payload['for_event'] === call.resultEventId;
    if (event.kind !== 'constraint.violated') return false;
    const decided = decidedEvent(event.payload);
    return decided.kind === 'tool.result' && stringOf(decided.payload['tool']) === call.tool;
  }

  private decision(event: AuraEvent): void {
    const p = event.payload;
    const { kind: decidedKind, payload: decided } = decidedEvent(p);
    const tool = stringOf(p['tool']) ?? stringOf(decided['tool']) ?? stringOf(decided['skill_id']);
    const callId = stringOf(decided['tool_call_id']);
    let call: OpenCall | undefined;
    if (event.kind === 'constraint.passed') {
      const target = stringOf(p['for_event']);
      call = this.calls.find((c) => target !== null && c.members.has(target));
    } else if (tool !== null && (event.kind === 'constraint.approved' || decidedKind === 'tool.call' || decidedKind === 'tool.result')) {
      call =
        this.calls.find((c) => c.tool === tool && (callId === null || c.callId === callId) && (decidedKind !== 'tool.result' || c.resultEventId !== null)) ??
        (event.kind === 'constraint.approved' ? undefined : this.openCall(event, tool, callId));
    }
    const parent = call ?? null;
    // A check of a result extends the call to the decision.
    if (call !== undefined && call.resultEventId !== null) call.end = nanos(event);
    if (event.kind === 'constraint.passed') {
      const source = call === undefined ? null : call.resultEventId === p['for_event'] ? 'tool_output' : 'tool_input';
      const results = Array.isArray(p['results']) ? p['results'] : [];
      for (const [index, item] of results.entries()) this.guardrail(event, index, parent, objectOf(objectOf(item)['rule']), 'passed', 'allow', source, null);
      return;
    }
    const source = decidedKind === 'tool.call' ? 'tool_input' : decidedKind === 'tool.result' ? 'tool_output' : decidedKind;
    const rule = objectOf(p['rule']);
    const message = stringOf(p['message']) ?? event.kind;
    if (event.kind === 'constraint.approved') {
      this.guardrail(event, 0, parent, rule, 'approved', 'release', source, null);
      return;
    }
    if (event.kind === 'constraint.approval_required') {
      this.guardrail(event, 0, parent, rule, 'approval_required', 'hold', source, null);
      if (call !== undefined) this.fail(call, event, 'approval_required', message);
      return;
    }
    const auditOnly = p['audit_only'] === true;
    this.guardrail(event, 0, parent, rule, 'violated', auditOnly ? 'audit' : 'deny', source, auditOnly ? null : message, auditOnly);
    if (!auditOnly && call !== undefined) this.fail(call, event, 'policy_denied', message);
  }

  /** A call that policy stopped (or a result it refused): the span ends with the decision. */
  private fail(call: OpenCall, event: AuraEvent, type: string, message: string): void {
    call.error = { type, message };
    call.end = nanos(event);
    if (call.resultEventId === null) this.endCall(call);
  }

  /** A decision's span: a child of the call it decided, else of the session. */
  private guardrail(event: AuraEvent, index: number, call: OpenCall | null, rule: JsonObject, verdict: string, action: string, source: string | null, failure: string | null, auditOnly = false): void {
    const ruleType = stringOf(rule['type']) ?? 'policy';
    const attributes: Attribute[] = [
      { key: GEN_AI.operationName, value: OPERATION.applyGuardrail },
      { key: GEN_AI.guardrailComponentName, value: GUARDRAIL_COMPONENT },
      { key: GEN_AI.guardrailRuleId, value: stringOf(rule['id']) ?? stringOf(rule['name']) ?? ruleType },
      { key: GEN_AI.guardrailResultType, value: 'decision' },
      { key: GEN_AI.guardrailResultValue, value: verdict },
      { key: AURA.ruleType, value: ruleType },
      { key: AURA.guardrailAction, value: action },
    ];
    const policyId = stringOf(this.rootFacts.get(AURA.agentRef));
    if (policyId !== null) attributes.push({ key: GEN_AI.guardrailPolicyId, value: policyId });
    const policyVersion = promotedPolicyVersion(event);
    if (policyVersion !== null) attributes.push({ key: GEN_AI.guardrailPolicyVersion, value: policyVersion });
    if (source !== null) attributes.push({ key: GEN_AI.guardrailSource, value: source });
    if (auditOnly) attributes.push({ key: AURA.auditOnly, value: true });
    const requestId = stringOf(event.payload['request_id']);
    if (requestId !== null) attributes.push({ key: AURA.requestId, value: requestId });
    addPromoted(attributes, event, PROMOTED_ON_DECISION);
    const time = nanos(event);
    this.emitSpan({
      traceId: call?.traceId ?? this.openRoot.traceId,
      spanId: spanIdOf(index === 0 ? event.event_id : `${event.event_id}#${index}`),
      parentSpanId: call?.spanId ?? this.openRoot.spanId,
      name: `${OPERATION.applyGuardrail} ${ruleType}`,
      kind: SPAN_KIND.internal,
      startTimeUnixNano: time,
      endTimeUnixNano: time,
      attributes,
      events: [],
      droppedEventsCount: 0,
      status: failure === null ? null : { code: STATUS_ERROR, message: failure },
    });
  }

  private endCall(call: OpenCall, end = call.end): void {
    this.calls.splice(this.calls.indexOf(call), 1);
    const attributes = call.attributes;
    if (call.error !== null) attributes.push({ key: GENERAL.errorType, value: call.error.type });
    this.emitSpan({
      traceId: call.traceId,
      spanId: call.spanId,
      parentSpanId: call.parentSpanId,
      name: `${OPERATION.executeTool} ${call.tool}`,
      kind: this.mcp === null ? SPAN_KIND.internal : SPAN_KIND.client,
      startTimeUnixNano: call.start,
      endTimeUnixNano: maxOf(call.start, end),
      attributes,
      events: call.events,
      droppedEventsCount: call.dropped,
      status: call.error === null ? null : { code: STATUS_ERROR, message: call.error.message },
    });
  }

  private addEvent(call: OpenCall | null, event: AuraEvent): void {
    call?.members.add(event.event_id);
    const holder = call ?? this.openRoot;
    if (holder.events.length >= MAX_SPAN_EVENTS) {
      holder.dropped++;
      return;
    }
    holder.events.push({ name: event.kind, timeUnixNano: nanos(event), attributes: eventAttributes(event) });
  }
}

/** The spans of a whole trail, in the order they end (the root last). */
export function buildSpans(events: readonly AuraEvent[], options: SpanOptions = {}): Span[] {
  const spans: Span[] = [];
  const builder = new SpanBuilder((span) => spans.push(span), options);
  for (const event of events) builder.add(event);
  builder.finish();
  return spans;
}

/**
 * A valid span id (16 hex, not all zero) derived from an event id: the random half of aura's
 * 32-hex event ids as they are (cheap, and easy to match by eye), else a hash of the id.
 */
export function spanIdOf(eventId: string): string {
  const tail = eventId.slice(16);
  if (HEX32.test(eventId) && !ZERO_ID.test(tail)) return tail;
  const id = sha256(`span:${eventId}`).slice(0, 16);
  return ZERO_ID.test(id) ? '0000000000000001' : id;
}

function traceIdOf(event: AuraEvent): string {
  return HEX32.test(event.trace_id) && !ZERO_ID.test(event.trace_id) ? event.trace_id : sha256(`trace:${event.session_id}`).slice(0, 32);
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

// Events come many to a second: the whole seconds of the last one are kept; and an event's time
// is asked for several times in a row (its span, its span event, its call's end).
let lastSecond: { readonly text: string; readonly zone: string; readonly nanos: bigint } = { text: '', zone: '', nanos: 0n };
let lastTimestamp: { readonly text: string; readonly nanos: bigint } = { text: '', nanos: 0n };

/** Nanoseconds since the epoch of an ISO 8601 timestamp with up to nanosecond digits; 0 if unreadable. */
export function unixNanos(timestamp: string): bigint {
  if (timestamp === lastTimestamp.text) return lastTimestamp.nanos;
  const nanos = readUnixNanos(timestamp);
  lastTimestamp = { text: timestamp, nanos };
  return nanos;
}

function readUnixNanos(timestamp: string): bigint {
  const match = TIMESTAMP.exec(timestamp);
  if (match === null) return 0n;
  const [, second = '', fraction = '', zone = ''] = match;
  if (second !== lastSecond.text || zone !== lastSecond.zone) {
    const millis = Date.parse(`${second}${zone}`);
    if (Number.isNaN(millis)) return 0n;
    lastSecond = { text: second, zone, nanos: BigInt(millis) * 1_000_000n };
  }
  return fraction === '' ? lastSecond.nanos : lastSecond.nanos + BigInt(fraction.padEnd(9, '0'));
}

function nanos(event: AuraEvent): bigint {
  return unixNanos(event.timestamp);
}

function maxOf(a: bigint, b: bigint): bigint {
  return b > a ? b : a;
}

/** The `trace_parent` a payload names (`{trace_id, span_id}`), when it is a valid one. */
function traceParentOf(payload: JsonObject): { traceId: string; spanId: string } | null {
  const parent = objectOf(payload['trace_parent']);
  const traceId = stringOf(parent['trace_id']);
  const spanId = stringOf(parent['span_id']);
  if (traceId === null || spanId === null || !HEX32.test(traceId) || ZERO_ID.test(traceId) || !HEX16.test(spanId) || ZERO_ID.test(spanId)) return null;
  return { traceId, spanId };
}

/**
 * The event a decision is about: aura records `{kind, payload}`; Python Aura records the denied
 * call's payload itself, which is a tool call when it names a tool.
 */
function decidedEvent(payload: JsonObject): { kind: string | null; payload: JsonObject } {
  const wrapped = objectOf(payload['event'] ?? payload['pending_event']);
  if (typeof wrapped['kind'] === 'string' && 'payload' in wrapped) return { kind: wrapped['kind'], payload: objectOf(wrapped['payload']) };
  return { kind: stringOf(wrapped['tool']) === null ? null : 'tool.call', payload: wrapped };
}

function promotedPolicyVersion(event: AuraEvent): string | null {
  return stringOf(event.payload['policy_version']) ?? stringOf(event.agent_ids['policy_version']) ?? stringOf(objectOf(event.payload['context'])['policy_version']);
}

/**
 * The promoted attributes (reference §18.5), each with where it is read from; the agent ref from
 * the trailer too (§21.39). Read one at a time, so an event adding two of them to a span reads two.
 */
const PROMOTED: readonly (readonly [string, (event: AuraEvent) => AttributeValue | null])[] = [
  [AURA.agentRef, (e) => stringOf(e.payload['agent_ref']) ?? stringOf(objectOf(e.payload['context'])['agent_ref']) ?? stringOf(e.agent_ids['agent_ref'])],
  [AURA.policyVersion, promotedPolicyVersion],
  [AURA.stepId, (e) => e.step_id ?? stringOf(e.payload['step_id'])],
  [AURA.tool, (e) => stringOf(e.payload['tool'])],
  [AURA.principal, (e) => stringOf(e.payload['principal'])],
  [AURA.skillId, (e) => stringOf(e.payload['skill_id'])],
  [AURA.manifestSnapshotHash, (e) => stringOf(e.payload['manifest_snapshot_hash'])],
  [AURA.operatorMethod, (e) => stringOf(operatorOf(e)['method'])],
  [AURA.operatorSubjectHash, (e) => stringOf(operatorOf(e)['subject_hash'])],
  [AURA.operatorVerified, (e) => {
    const verified = operatorOf(e)['verified'];
    return typeof verified === 'boolean' ? verified : null;
  }],
  [AURA.attempt, (e) => {
    const attempt = e.telemetry['attempt'];
    return typeof attempt === 'number' && Number.isInteger(attempt) ? BigInt(attempt) : null;
  }],
];

/** Those of {@link PROMOTED} a later event of a span adds to it. */
function promotedOnly(...keys: string[]): typeof PROMOTED {
  return PROMOTED.filter(([key]) => keys.includes(key));
}
const PROMOTED_ON_CALL = promotedOnly(AURA.principal, AURA.attempt);
const PROMOTED_ON_DECISION = promotedOnly(AURA.principal, AURA.tool);

function operatorOf(event: AuraEvent): JsonObject {
  return objectOf(objectOf(event.agent_ids['ids'])['operator']);
}

function addPromoted(attributes: Attribute[], event: AuraEvent, promoted = PROMOTED): void {
  for (const [key, read] of promoted) {
    const value = read(event);
    if (value !== null) setAttribute(attributes, key, value);
  }
}

function setAttribute(attributes: Attribute[], key: string, value: AttributeValue): void {
  const at = attributes.findIndex((a) => a.key === key);
  if (at === -1) attributes.push({ key, value });
  else attributes[at] = { key, value };
}

/**
 * What a span event carries: the event's id and hash (to find it in the trail), its step, and for
 * observer alerts and middleware markers only their names and severity, never a matched value.
 */
function eventAttributes(event: AuraEvent): Attribute[] {
  const attributes: Attribute[] = [
    { key: AURA.eventId, value: event.event_id },
    { key: AURA.contentHash, value: event.content_hash },
  ];
  if (event.step_id !== null) attributes.push({ key: AURA.stepId, value: event.step_id });
  const p = event.payload;
  const named: [string, unknown][] =
    event.kind === 'observer.alert'
      ? [
          [AURA.observer, p['observer'] ?? p['name']],
          [AURA.severity, p['severity']],
          [AURA.ruleType, p['rule'] ?? p['code']],
        ]
      : event.kind === 'middleware.applied'
        ? [[AURA.middleware, p['middleware'] ?? p['name']]]
        : event.kind === 'tool.error'
          ? [[GENERAL.errorType, stringOf(p['error']) ?? objectOf(p['error'])['name']]]
          : [];
  for (const [key, value] of named) if (typeof value === 'string') attributes.push({ key, value });
  return attributes;
}
