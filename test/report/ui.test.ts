/**
 * `aura ui` as a user runs it: the built binary on a free port, over a sessions folder holding
 * an aura demo session and a Python Aura session; its pages in chromium, its gates over raw HTTP.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUi } from '../../src/report/server.js';
import { FolderSource } from '../../src/store/folder-source.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { AURA_BIN } from '../helpers/cli.js';
import { AURA_PY, interopIndex } from '../helpers/fixtures.js';
import { demoSession } from '../helpers/sessions.js';
import { tempDir } from '../helpers/temp.js';

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One raw HTTP request to the server (any method, any Host header). */
function request(port: number, target: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('aura ui', () => {
  let browser: Browser;
  let server: ChildProcess;
  let url: URL;
  let port: number;
  let prefix: string;
  let token: string;
  let cookie: string;
  let demoId: string;
  const pythonId = interopIndex().sessions['policy_deny_tool']?.session_id as string;

  beforeAll(async () => {
    const home = tempDir();
    demoId = await demoSession(home);
    for (const suffix of ['.jsonl', '.summary.json']) fs.copyFileSync(path.join(AURA_PY, 'sessions', `${pythonId}${suffix}`), path.join(home, 'sessions', `${pythonId}${suffix}`));
    server = spawn(process.execPath, [AURA_BIN, 'ui', '--port', '0', '--json'], { env: { ...process.env, AURA_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((resolve) => createInterface({ input: server.stdout as NodeJS.ReadableStream }).once('line', resolve));
    url = new URL(String((JSON.parse(first) as { url: string }).url));
    port = Number(url.port);
    prefix = url.pathname;
    token = url.searchParams.get('token') as string;
    cookie = `aura_ui_${port}=${token}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (server?.exitCode === null) server.kill('SIGKILL');
  });

  it('prints a loopback URL under a 16-byte base64url path prefix, with a 32-byte base64url token', () => {
    expect(url.hostname).toBe('127.0.0.1');
    expect(prefix).toMatch(/^\/[A-Za-z0-9_-]{22}\/$/);
    expect(Buffer.from(prefix.slice(1, -1), 'base64url')).toHaveLength(16);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it('renders the sessions list in the browser, sorts it, and opens a session report, all under the prefix', async () => {
    const origin = `http://127.0.0.1:${port}`;
    const watch = await watchedPage(browser, (requested) => requested.startsWith(`${origin}/`));
    const { page } = watch;
    await page.goto(url.href);
    // The token went into a cookie, scoped to the prefix, and out of the address bar.
    expect(page.url()).toBe(`${origin}${prefix}`);
    expect(await page.context().cookies()).toEqual([expect.objectContaining({ name: `aura_ui_${port}`, value: token, path: prefix, httpOnly: true, sameSite: 'Strict' })]);
    const rows = page.locator('table.sessions tbody tr');
    expect(await rows.count()).toBe(2);
    const ids = await rows.locator('td:first-child').allTextContents();
    expect(ids.sort()).toEqual([demoId, pythonId].sort());
    const demoRow = rows.filter({ hasText: demoId });
    expect(await demoRow.textContent()).toContain('FAIL');
    expect(await demoRow.textContent()).toContain('intact');

    // Sorting by events: ascending, then descending.
    const events = async (): Promise<number[]> => (await rows.locator('td:nth-child(4)').allTextContents()).map(Number);
    await page.locator('th', { hasText: 'events' }).click();
    const ascending = await events();
    expect(ascending).toEqual([...ascending].sort((a, b) => a - b));
    await page.locator('th', { hasText: 'events' }).click();
    expect(await events()).toEqual([...ascending].reverse());

    await page.locator(`a`, { hasText: demoId }).click();
    await page.waitForSelector('#timeline .row');
    expect(page.url()).toBe(`${origin}${prefix}s/${demoId}`);
    expect(await page.locator('#verdict .badge').textContent()).toBe('FAIL');
    await page.locator('a.back').click();
    await page.waitForSelector('table.sessions');
    expect(page.url()).toBe(`${origin}${prefix}`);
    expect(watch.errors).toEqual([]);
    expect(watch.requests.every((r) => r.startsWith(`${origin}${prefix}`))).toBe(true);
  });

  it('keeps its cookie from another server on 127.0.0.1 that the signed-in browser visits', async () => {
    const seen: (string | undefined)[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.headers.cookie);
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      // An empty icon, so the browser asks for the pages alone.
      res.end('<!doctype html><link rel="icon" href="data:,"><title>another server</title><p>another server');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherOrigin = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(url.href);
      expect(page.url()).toBe(`http://127.0.0.1:${port}${prefix}`);
      // A cookie of the whole host reaches the other server: the browser does send it cookies.
      await context.addCookies([{ name: 'host_wide', value: '1', domain: '127.0.0.1', path: '/' }]);
      for (const target of ['/', '/s/', `/s/${demoId}`, prefix.slice(0, -1)]) await page.goto(`${otherOrigin}${target}`);
      expect(seen).toEqual(['host_wide=1', 'host_wide=1', 'host_wide=1', 'host_wide=1']);
      // And the browser still holds the UI's, which its own pages get.
      await page.goto(`http://127.0.0.1:${port}${prefix}s/${demoId}`);
      await page.waitForSelector('#timeline .row');
    } finally {
      await context.close();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('answers 401 under the prefix without the token, and with a wrong one', async () => {
    for (const target of ['', `s/${demoId}`, 's/aura_sess_x']) expect((await request(port, `${prefix}${target}`)).status).toBe(401);
    expect((await request(port, `${prefix}?token=wrong`)).status).toBe(401);
    expect((await request(port, prefix, { headers: { Cookie: `aura_ui_${port}=${token.slice(1)}x` } })).status).toBe(401);
  });

  it('answers 404 outside the prefix, with the token or the cookie or neither, and says nothing of the prefix', async () => {
    const secret = prefix.slice(1, -1);
    const near = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    const outside = ['/', `/?token=${token}`, `/s/${demoId}`, `/${secret}`, `/${secret}?token=${token}`, `/${near}/`, `/${near}/s/${demoId}`, `/${secret}x/`, `/x${secret}/`, `/${token}/`, `//${secret}/`, `/%2F${secret}/`, '/favicon.ico'];
    for (const headers of [{}, { Cookie: cookie }]) {
      for (const target of outside) {
        for (const method of ['GET', 'POST']) {
          const answer = await request(port, target, { method, headers });
          expect({ target, method, status: answer.status, location: answer.headers.location, cookie: answer.headers['set-cookie'] }).toEqual({ target, method, status: 404, location: undefined, cookie: undefined });
          expect(answer.body).toBe('404: not found\n');
        }
      }
    }
  });

  it('trades the token in the URL for an HttpOnly SameSite=Strict cookie scoped to the prefix, and redirects without it', async () => {
    const answer = await request(port, `${prefix}s/${demoId}?token=${token}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`${prefix}s/${demoId}`);
    expect(answer.headers['set-cookie']).toEqual([`${cookie}; HttpOnly; SameSite=Strict; Path=${prefix}`]);
    // Never to another site: a path that normalizes to '//host' stays under the prefix.
    expect((await request(port, `${prefix}.//evil.example/?token=${token}`)).headers.location).toBe(`${prefix}/evil.example/`);
  });

  it('answers 404 under the prefix for paths outside the sessions folder and ids the gate refuses', async () => {
    for (const target of ['s/..%2F..%2Fetc%2Fpasswd', 's/aura_sess_x', 's/aura_sess_000000000000', 's/%2Fetc%2Fpasswd', '../../etc/passwd', 's/%E0%A4%A', 'favicon.ico', `s/${demoId}/`, `/s/${demoId}`]) {
      expect({ target, status: (await request(port, `${prefix}${target}`, { headers: { Cookie: cookie } })).status }).toEqual({ target, status: 404 });
    }
    const page = await request(port, `${prefix}s/${demoId}.jsonl`, { headers: { Cookie: cookie } });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('is read-only: POST, PUT and DELETE get 405; HEAD gets the headers only', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const answer = await request(port, prefix, { method, headers: { Cookie: cookie } });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('GET, HEAD');
    }
    const head = await request(port, prefix, { method: 'HEAD', headers: { Cookie: cookie } });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
  });

  it('refuses a Host header other than its loopback address (DNS rebinding)', async () => {
    expect((await request(port, prefix, { headers: { Cookie: cookie, Host: `evil.example:${port}` } })).status).toBe(403);
  });

  it('refuses a page from outside loopback (Origin), and serves its own', async () => {
    expect((await request(port, prefix, { headers: { Cookie: cookie, Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await request(port, prefix, { headers: { Cookie: cookie, Origin: `http://127.0.0.1:${port}` } })).status).toBe(200);
  });

  it('stops on SIGTERM with exit code 0', async () => {
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('aura ui on files it cannot read', () => {
  it('says what is wrong with a session whose summary is a folder, and 404s a folder named like a trail', async () => {
    const home = tempDir();
    const id = await demoSession(home);
    const sessions = path.join(home, 'sessions');
    fs.rmSync(path.join(sessions, `${id}.summary.json`));
    fs.mkdirSync(path.join(sessions, `${id}.summary.json`));
    fs.mkdirSync(path.join(sessions, 'aura_sess_00000000000f.jsonl'));
    const ui = await serveUi(0, { source: new FolderSource(sessions), keys: null, exportPii: false, generator: 'test', token: 'ui-test-token-0123456789' });
    try {
      const prefix = new URL(ui.url).pathname;
      const get = async (subpath: string): Promise<{ status: number; body: string }> => {
        const res = await fetch(`http://127.0.0.1:${ui.port}${prefix}${subpath}`, { headers: { Cookie: `aura_ui_${ui.port}=ui-test-token-0123456789` } });
        return { status: res.status, body: await res.text() };
      };
      expect((await get('')).status).toBe(200);
      expect(await get(`s/${id}`)).toEqual({ status: 500, body: `500: cannot read ${path.join(sessions, `${id}.summary.json`)}: it is a folder, not a file (EISDIR)\n` });
      expect((await get('s/aura_sess_00000000000f')).status).toBe(404);
    } finally {
      await ui.close();
    }
  });
});
