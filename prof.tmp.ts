import { SpanBuilder, type Span } from './src/export/spans.js';
import { otlpProto } from './src/export/otlp-proto.js';
import { otlpJson, spanSourceOf } from './src/export/otel.js';
import { parseJsonLossless } from './src/spine/json-reader.js';
import { canonicalJson } from './src/spine/canonical.js';
import { toolCallPayload } from './bench/utils/payload.js';
const N = 100_000;
const texts = Array.from({ length: N }, (_, i) => i % 2 === 0 ? canonicalJson(toolCallPayload(i)) : canonicalJson({ tool: 'fs.read_file', result: { bytes: 4096 } }));
function run(parse: (t: string) => unknown) {
  const spans: Span[] = [];
  const b = new SpanBuilder((s) => spans.push(s));
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    b.add({ event_id: i.toString(16).padStart(32, '0'), parent_id: null, trace_id: 'a'.repeat(32), span_id: null, step_id: null, task_id: null, session_id: 'aura_sess_000000000001', aura_id: 'x', agent_ids: {}, kind: i % 2 === 0 ? 'tool.call' : 'tool.result', timestamp: '2026-01-01T00:00:00.001500+00:00', payload: parse(texts[i]!) as never, telemetry: i % 2 ? { latency_ms: 1.5 } : {}, prev_hash: null, content_hash: 'c'.repeat(64) });
    if (b.settling) b.settle();
  }
  return { ms: performance.now() - t0, spans };
}
for (let k = 0; k < 2; k++) {
  const a = run(parseJsonLossless); const j = run(JSON.parse);
  const src = spanSourceOf('aura_sess_000000000001', 'x');
  let t = performance.now(); for (let i = 0; i < j.spans.length; i += 512) otlpProto(src, j.spans.slice(i, i + 512)); const proto = performance.now() - t;
  t = performance.now(); for (let i = 0; i < j.spans.length; i += 512) otlpJson(src, j.spans.slice(i, i + 512)); const json = performance.now() - t;
  console.log({ lossless: a.ms.toFixed(0), jsonparse: j.ms.toFixed(0), proto: proto.toFixed(0), json: json.toFixed(0), perEventUs: (j.ms * 1000 / N).toFixed(2) });
}
