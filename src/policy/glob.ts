/**
 * Glob patterns on tool names, compiled once at profile load. Patterns match literally except
 * for `*` (any run of characters, dots included), `?` (one character) and `[...]` (a class, `!`
 * or `^` negating it); `\` escapes the next character. A pattern is never taken as a RegExp.
 */

/** A compiled pattern. */
export interface Glob {
  readonly pattern: string;
  test(name: string): boolean;
}

/** Why a pattern cannot be compiled. */
export class GlobSyntaxError extends Error {}

const SPECIAL = /[.+^${}()|\\/]/;

/**
 * Compiles a glob.
 * @throws GlobSyntaxError for an empty pattern, an unclosed `[`, or a trailing `\`.
 */
export function compileGlob(pattern: string): Glob {
  if (typeof pattern !== 'string' || pattern === '') throw new GlobSyntaxError('a tool pattern must be a non-empty string');
  let source = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '\\') {
      if (i + 1 >= pattern.length) throw new GlobSyntaxError(`pattern ${JSON.stringify(pattern)} ends with a lone backslash`);
      source += escapeChar(pattern.charAt(++i));
    } else if (c === '*') {
      while (pattern.charAt(i + 1) === '*') i++;
      source += '.*';
    } else if (c === '?') {
      source += '.';
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) throw new GlobSyntaxError(`pattern ${JSON.stringify(pattern)} has an unclosed '['`);
      let body = pattern.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, (m) => `\\${m}`)}]`;
      i = close;
    } else {
      source += escapeChar(c);
    }
  }
  const regex = new RegExp(`${source}$`, 'su');
  return { pattern, test: (name) => regex.test(name) };
}

function escapeChar(c: string): string {
  return SPECIAL.test(c) || c === '*' || c === '?' || c === '[' || c === ']' ? `\\${c}` : c;
}
