/**
 * The report pages as self-contained HTML documents: the page's CSS and JS (real files under
 * `assets/`, copied next to this module by the build) inlined, the data embedded as JSON, and a
 * Content-Security-Policy that lets the page load nothing at all: no network, no CDN, no font, so
 * a saved report opens the same years later from a USB stick.
 *
 * The data is untrusted (trail payloads are whatever the agent sent): it is embedded only inside
 * a `<script type="application/json">` block with every `<` escaped, so neither `</script>` nor
 * `<!--` can end the block, and the page script renders it with `textContent` only.
 */

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SessionsListRow } from './list-model.js';
import type { ReportPageModel } from './page-model.js';

const assetCache = new Map<string, string>();

/** A file of the page code, read once. */
function asset(name: string): string {
  let text = assetCache.get(name);
  if (text === undefined) {
    text = fs.readFileSync(fileURLToPath(new URL(`./assets/${name}`, import.meta.url)), 'utf8');
    assetCache.set(name, text);
  }
  return text;
}

/**
 * JSON that is safe inside a `<script>` element: `<` becomes `\u003c` (so `</script>` and `<!--`
 * cannot appear), and U+2028/U+2029 are escaped for older parsers. The result still parses to
 * the same value.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Text safe in HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The policy of a page: only its own inline script and style run, and nothing is fetched. */
export function contentSecurityPolicy(script: string, style: string): string {
  return `default-src 'none'; script-src ${sha256Source(script)}; style-src ${sha256Source(style)}; img-src data:; base-uri 'none'; form-action 'none'`;
}

/** A page: its title, the data it renders, and the scripts (in order) that render it. */
interface PageParts {
  readonly title: string;
  readonly data: unknown;
  readonly scripts: readonly string[];
}

/** A rendered page and the policy it carries (a server sends the same as a header). */
export interface RenderedPage {
  readonly html: string;
  readonly csp: string;
}

function page(parts: PageParts): RenderedPage {
  const style = asset('report.css');
  const script = parts.scripts.map(asset).join('\n');
  const csp = contentSecurityPolicy(script, style);
  const html = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    // An empty icon, so a browser does not ask a server for /favicon.ico.
    '<link rel="icon" href="data:,">',
    `<title>${escapeHtml(parts.title)}</title>`,
    `<style>${style}</style>`,
    '</head>',
    '<body>',
    '<main id="app"><noscript>This report needs JavaScript to render its data.</noscript></main>',
    `<script type="application/json" id="aura-data">${scriptSafeJson(parts.data)}</script>`,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
  return { html, csp };
}

/** The report page of one session; `backHref` links to a sessions list (in `aura ui`). */
export function reportHtml(model: ReportPageModel, backHref: string | null = null): RenderedPage {
  return page({ title: `aura report · ${model.session_id}`, data: { ...model, back_href: backHref }, scripts: ['common.js', 'report.js'] });
}

/** The sessions list page of `aura ui`. */
export function sessionsListHtml(sessionsDir: string, rows: readonly SessionsListRow[], generator: string): RenderedPage {
  return page({ title: 'aura sessions', data: { sessions_dir: sessionsDir, sessions: rows, generator }, scripts: ['common.js', 'list.js'] });
}
