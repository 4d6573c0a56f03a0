/**
 * `npm test` needs nothing outside this repository: a fresh clone has no folder beside it. Every
 * source file of the test run (the tests, their helpers and fixtures, the scripts they run, the
 * vitest config) is parsed, and every path it builds from a `..` or an absolute literal is worked
 * out from the file's own location: each must land inside the repository. A path this check
 * cannot work out from literals is a failure too, so a new way of reaching outside cannot slip by.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as fixtures from './helpers/fixtures.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** What the test run reads or runs: `npm test` is eslint, tsc and vitest over these. */
function sourcesOfTheTestRun(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return walk(full);
      return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [full] : [];
    });
  return [...walk(path.join(REPO, 'test')), ...walk(path.join(REPO, 'scripts')), path.join(REPO, 'vitest.config.ts')];
}

function inside(target: string): boolean {
  const resolved = path.resolve(target);
  return resolved === REPO || resolved.startsWith(`${REPO}${path.sep}`);
}

// Folders of the system the tests may name by absolute path (a browser binary, /dev/null, a
// tmpfs mount point under the temp folder); anything else that exists on this machine may not.
const SYSTEM = ['/dev', '/proc', '/sys', '/usr', '/bin', '/etc', '/tmp'];

/** Works out the value of a path expression from literals and the file's own location; null when it cannot. */
class PathEvaluator {
  private readonly parsed = new Map<string, ts.SourceFile>();

  source(file: string): ts.SourceFile {
    let source = this.parsed.get(file);
    if (source === undefined) {
      source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      this.parsed.set(file, source);
    }
    return source;
  }

  evaluate(node: ts.Expression, file: string, depth = 0): string | null {
    if (depth > 20) return null;
    const next = (e: ts.Expression): string | null => this.evaluate(e, file, depth + 1);
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isNonNullExpression(node)) return next(node.expression);
    if (ts.isPropertyAccessExpression(node)) {
      if (ts.isMetaProperty(node.expression) && node.name.text === 'url') return pathToFileURL(file).href;
      if (ts.isMetaProperty(node.expression) && node.name.text === 'dirname') return path.dirname(file);
      const base = next(node.expression);
      if (base === null || !base.startsWith('file:')) return null;
      if (node.name.text === 'href') return base;
      if (node.name.text === 'pathname') return fileURLToPath(base);
      return null;
    }
    if (ts.isNewExpression(node) && node.expression.getText() === 'URL') {
      const [relative, base] = (node.arguments ?? []).map(next);
      return relative === null || relative === undefined || base === null || base === undefined ? null : new URL(relative, base).href;
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText();
      const args = node.arguments.map(next);
      if (args.some((a) => a === null)) return null;
      const values = args as string[];
      if (/^(url\.)?fileURLToPath$/.test(callee)) return values[0]?.startsWith('file:') === true ? fileURLToPath(values[0]) : null;
      if (/^path\.(join|resolve)$/.test(callee)) return path.resolve(...values);
      if (callee === 'path.dirname' && values[0] !== undefined) return path.dirname(values[0]);
      return null;
    }
    if (ts.isIdentifier(node)) return this.identifier(node.text, file, depth + 1);
    return null;
  }

  /** A module-level `const` of this file, or one it imports from another file of the repository. */
  private identifier(name: string, file: string, depth: number): string | null {
    for (const statement of this.source(file).statements) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          if (ts.isIdentifier(declaration.name) && declaration.name.text === name && declaration.initializer !== undefined) return this.evaluate(declaration.initializer, file, depth);
        }
      }
      if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.moduleSpecifier.text.startsWith('.')) {
        const bindings = statement.importClause?.namedBindings;
        if (bindings === undefined || !ts.isNamedImports(bindings)) continue;
        const binding = bindings.elements.find((e) => e.name.text === name);
        if (binding === undefined) continue;
        const from = path.resolve(path.dirname(file), statement.moduleSpecifier.text.replace(/\.js$/, '.ts'));
        return fs.existsSync(from) ? this.identifier((binding.propertyName ?? binding.name).text, from, depth) : null;
      }
    }
    return null;
  }
}

/** A call or `new URL` that builds a path, or `.pathname`/`.href` of one. */
function buildsPath(node: ts.Node): node is ts.Expression {
  if (ts.isCallExpression(node)) return /^(path\.(join|resolve|dirname)|(url\.)?fileURLToPath)$/.test(node.expression.getText());
  if (ts.isNewExpression(node)) return node.expression.getText() === 'URL';
  return ts.isPropertyAccessExpression(node) && (node.name.text === 'pathname' || node.name.text === 'href') && buildsPath(node.expression);
}

/** True for a literal (or a const it names) with a `..` segment, anywhere in the expression. */
function climbs(node: ts.Node, evaluator: PathEvaluator, file: string): boolean {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return DOTDOT.test(node.text);
  if (ts.isIdentifier(node)) return DOTDOT.test(evaluator.evaluate(node, file) ?? '');
  return ts.forEachChild(node, (child) => climbs(child, evaluator, file) || undefined) ?? false;
}

const DOTDOT = /(^|[\\/])\.\.([\\/]|$)/;

function isModuleSpecifier(node: ts.Node): boolean {
  const parent = node.parent;
  return (
    ts.isImportDeclaration(parent) ||
    ts.isExportDeclaration(parent) ||
    ts.isExternalModuleReference(parent) ||
    (ts.isCallExpression(parent) && (parent.expression.kind === ts.SyntaxKind.ImportKeyword || parent.expression.getText() === 'vi.mock')) ||
    ts.isLiteralTypeNode(parent) ||
    ts.isImportTypeNode(parent.parent)
  );
}

function isSystem(target: string): boolean {
  const resolved = path.resolve(target);
  return SYSTEM.some((root) => resolved === root || resolved.startsWith(`${root}/`));
}

/**
 * Every path in the test run's sources that leaves the repository, or that this check cannot work
 * out: each path built with `path.*`, `fileURLToPath` or `new URL` (worked out from literals and
 * the file's location), each `..` handed to `fs` as it is (relative to the repository, where
 * vitest runs), and each absolute literal naming something on this machine. A `..` that is only
 * data (a hostile session id the tests hand to aura) builds no path and is left alone.
 */
function escapingPaths(): string[] {
  const evaluator = new PathEvaluator();
  const problems: string[] = [];
  for (const file of sourcesOfTheTestRun()) {
    const source = evaluator.source(file);
    const where = (node: ts.Node): string => `${path.relative(REPO, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const check = (node: ts.Node, target: string | null, canTell: boolean): void => {
      if (target === null) {
        if (!canTell) problems.push(`${where(node)}: cannot tell where ${node.getText()} leads`);
      } else if (!inside(target) && !isSystem(target)) problems.push(`${where(node)}: ${node.getText()} is ${target}, outside the repository`);
    };
    const visit = (node: ts.Node): void => {
      if (buildsPath(node) && !buildsPath(node.parent)) {
        const value = evaluator.evaluate(node, file);
        const target = value === null ? null : value.startsWith('file:') ? fileURLToPath(value) : path.isAbsolute(value) ? value : path.resolve(REPO, value);
        check(node, target, !climbs(node, evaluator, file));
      } else if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !isModuleSpecifier(node)) {
        const text = node.text;
        if (/^\/[^/\s]+/.test(text) && fs.existsSync(text)) check(node, text, true);
        const parent = node.parent;
        if (DOTDOT.test(text) && ts.isCallExpression(parent) && /^fs\./.test(parent.expression.getText())) check(node, path.resolve(REPO, text), true);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return problems;
}

describe('the test suite is self-contained', () => {
  it('builds no path that leaves the repository, in any test, helper, fixture or script', () => {
    expect(escapingPaths()).toEqual([]);
  });

  it('keeps every path the fixture helpers export inside the repository, and the fixtures are there', () => {
    const exported = Object.entries(fixtures).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
    expect(exported.map(([name]) => name).sort()).toEqual(['AURA_PY', 'REPO', 'SUPERAUDITOR']);
    for (const [name, value] of exported) {
      expect(inside(value), `${name} = ${value}`).toBe(true);
      expect(fs.existsSync(value), `${name} = ${value}`).toBe(true);
    }
    expect(fixtures.REPO).toBe(REPO);
    for (const entry of Object.values(fixtures.interopIndex().tampered)) expect(fs.existsSync(path.join(fixtures.AURA_PY, 'tampered', entry.file))).toBe(true);
    for (const entry of Object.values(fixtures.interopIndex().sessions)) expect(fs.existsSync(fixtures.pythonTrail(entry.session_id))).toBe(true);
  });

  it('says where each committed fixture set comes from', () => {
    expect(fs.readFileSync(path.join(fixtures.AURA_PY, 'PROVENANCE.md'), 'utf8')).toMatch(/Python Aura|Aura.*Python/);
    expect(fs.readFileSync(path.join(fixtures.SUPERAUDITOR, 'NOTICE.md'), 'utf8')).toContain('MIT License');
  });
});
