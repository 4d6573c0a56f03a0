// Fails when the modules of src/ import each other in a circle, counting every edge the ESLint
// rule `import-x/no-cycle` skips: `import type`, `export type … from` and `import()` (DESIGN §1:
// data flows one way, and a circle of types is a circle of design).
// Usage: node scripts/check-import-cycles.mjs [root]   (default src)
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? 'src');

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const files = sourceFiles(root);
const known = new Set(files);
/** Each module's relative imports that land inside the root, as file paths. */
const edges = new Map(
  files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((ref) => ref.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'))
      .filter((target) => known.has(target));
    return [file, [...new Set(targets)]];
  }),
);

// Tarjan's strongly connected components: each component of more than one module is a circle.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const circles = [];
let next = 0;
function visit(file) {
  index.set(file, next);
  low.set(file, next);
  next++;
  stack.push(file);
  onStack.add(file);
  for (const target of edges.get(file)) {
    if (!index.has(target)) {
      visit(target);
      low.set(file, Math.min(low.get(file), low.get(target)));
    } else if (onStack.has(target)) {
      low.set(file, Math.min(low.get(file), index.get(target)));
    }
  }
  if (low.get(file) !== index.get(file)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== file);
  if (component.length > 1 || edges.get(file).includes(file)) circles.push(component);
}
for (const file of files) if (!index.has(file)) visit(file);

if (circles.length === 0) process.exit(0);
for (const circle of circles) {
  const members = new Set(circle);
  process.stderr.write(`import circle of ${circle.length} modules:\n`);
  for (const file of circle.sort()) {
    const inside = edges.get(file).filter((target) => members.has(target)).map((target) => relative(process.cwd(), target));
    process.stderr.write(`  ${relative(process.cwd(), file)} -> ${inside.join(', ')}\n`);
  }
}
process.exit(1);
