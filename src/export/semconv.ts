/**
 * Every attribute and operation name aura puts on a span, in one place. The `gen_ai.*` and `mcp.*`
 * names follow the OpenTelemetry GenAI conventions (agent and tool spans, guardrails, MCP), which
 * are in development and were moved out of `@opentelemetry/semantic-conventions` (which marks them
 * deprecated there), so they are defined here; `aura.*` are aura's own (reference §18.5).
 *
 * Guardrails: the conventions name the operation `apply_guardrail` and describe a result with
 * `gen_ai.guardrail.result.type`/`.value`; aura's policy is an in-process guardrail whose native
 * results are `passed`, `violated`, `approval_required` and `approved`, so those are the values.
 */

/** `gen_ai.operation.name` values. */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  executeTool: 'execute_tool',
  applyGuardrail: 'apply_guardrail',
} as const;

/** GenAI attribute names. */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  agentDescription: 'gen_ai.agent.description',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  /** Opt-in: may hold sensitive content. */
  toolCallArguments: 'gen_ai.tool.call.arguments',
  /** Opt-in: may hold sensitive content. */
  toolCallResult: 'gen_ai.tool.call.result',
  guardrailComponentName: 'gen_ai.guardrail.component.name',
  guardrailPolicyId: 'gen_ai.guardrail.policy.id',
  guardrailPolicyVersion: 'gen_ai.guardrail.policy.version',
  guardrailRuleId: 'gen_ai.guardrail.policy.rule.id',
  guardrailResultType: 'gen_ai.guardrail.result.type',
  guardrailResultValue: 'gen_ai.guardrail.result.value',
  guardrailSource: 'gen_ai.guardrail.source',
} as const;

/** MCP attribute names and the values aura sets. */
export const MCP = {
  methodName: 'mcp.method.name',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  toolsCall: 'tools/call',
  /** `error.type` of a `CallToolResult` with `isError: true`. */
  toolError: 'tool_error',
} as const;

/** General attribute names. */
export const GENERAL = {
  serviceName: 'service.name',
  serviceVersion: 'service.version',
  errorType: 'error.type',
  networkTransport: 'network.transport',
} as const;

/** aura's own attribute names. */
export const AURA = {
  sessionId: 'aura.session_id',
  auraId: 'aura.aura_id',
  eventId: 'aura.event_id',
  kind: 'aura.kind',
  contentHash: 'aura.content_hash',
  agentRef: 'aura.agent_ref',
  policyVersion: 'aura.policy_version',
  stepId: 'aura.step_id',
  tool: 'aura.tool',
  principal: 'aura.principal',
  skillId: 'aura.skill_id',
  capabilityId: 'aura.capability_id',
  manifestSnapshotHash: 'aura.manifest_snapshot_hash',
  operatorMethod: 'aura.operator.method',
  operatorSubjectHash: 'aura.operator.subject_hash',
  operatorVerified: 'aura.operator.verified',
  attempt: 'aura.attempt',
  mode: 'aura.mode',
  closeReason: 'aura.close_reason',
  goalReached: 'aura.goal_reached',
  ruleType: 'aura.rule.type',
  auditOnly: 'aura.audit_only',
  /** What policy did about the call: `allow`, `deny`, `hold` (approval required), `release` or `audit`. */
  guardrailAction: 'aura.guardrail.action',
  requestId: 'aura.request_id',
  observer: 'aura.observer',
  severity: 'aura.severity',
  middleware: 'aura.middleware',
  count: 'aura.count',
} as const;

/** The guardrail component, as `gen_ai.guardrail.component.name`. */
export const GUARDRAIL_COMPONENT = 'aura policy';
