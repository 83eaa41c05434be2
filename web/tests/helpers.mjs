// Test harness: a real doublemove server on a free loopback port with a temporary SQLite file, and
// headless Debian chromium driven by playwright-core (no browser download).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '../..');
export const shots = join(repo, 'docs/screenshots');

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.unref();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/**
 * Starts the server on a free port with a temporary SQLite file. `opts.args`: extra arguments for
 * `doublemove serve`. The returned `restart()` stops the process and starts it again on the same port and
 * database (for tests of what survives a restart); `stop()` stops it and removes the database.
 */
export async function startServer(opts = {}) {
  const bin = process.env.DOUBLEMOVE_BIN ?? join(repo, 'target/release/doublemove');
  if (!existsSync(bin)) throw new Error(`no server binary at ${bin}: run scripts/ui-test (or cargo build --release -p doublemove)`);
  const dir = mkdtempSync(join(tmpdir(), 'dm-ui-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let proc, log = '';
  async function launch() {
    log = '';
    proc = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--db', join(dir, 'test.db'), ...(opts.args ?? [])], { stdio: ['ignore', 'ignore', 'pipe'] });
    proc.stderr.on('data', d => (log += d));
    for (let i = 0; ; i++) {
      try {
        const r = await fetch(`${base}/api/games?status=all`);
        if (r.ok) break;
      } catch {}
      if (i > 150 || proc.exitCode !== null) throw new Error(`server did not start: ${log}`);
      await new Promise(r => setTimeout(r, 100));
    }
  }
  async function kill() {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise(r => proc.on('exit', r));
    proc.kill('SIGTERM');
    await exited;
  }
  await launch();
  const index = await (await fetch(base + '/')).text();
  if (!index.includes('/app.js')) throw new Error('the server binary does not embed web/dist (rebuild it after building web/)');
  return {
    base,
    log: () => log,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startBrowser(opts = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'dm-chromium-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: opts.viewport ?? { width: 1200, height: 820 },
  });
  // DOUBLEMOVE_WEB_DIST=web/dist: serve the page's static files from that folder instead of the binary's
  // embedded copy (a quick loop while changing the UI; the final run uses a rebuilt binary).
  const dist = process.env.DOUBLEMOVE_WEB_DIST;
  if (dist) {
    await ctx.route(/\/(app\.js|style\.css)(\?.*)?$/, route =>
      route.fulfill({ path: join(resolve(dist), new URL(route.request().url()).pathname.slice(1)) }));
  }
  return {
    ctx,
    async close() {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** The two screen sizes of issue 11: a desktop and a phone. */
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };
export const SIZES = [['desktop', DESKTOP], ['phone', PHONE]];

/**
 * A server with loose rate limits (these tests make many games and requests through the API from one
 * client) and one browser. `page(viewport, errors)` opens a page at that size (desktop by default) and
 * collects its uncaught errors into the `errors` array if one is given; `call(method, path, body, token)`
 * is a JSON request to the server that throws on an error status; `stop()` closes both.
 */
export async function startLoose() {
  const server = await startServer({ args: ['--request-burst', '1000', '--create-burst', '100', '--engine-games-per-client', '20'] });
  let browser;
  try {
    browser = await startBrowser({ viewport: DESKTOP });
  } catch (e) {
    await server.stop();
    throw e;
  }
  return {
    server,
    browser,
    base: server.base,
    async page(viewport = DESKTOP, errors = null) {
      const page = await browser.ctx.newPage();
      await page.setViewportSize(viewport);
      if (errors) page.on('pageerror', e => errors.push(`${page.url()}: ${e.message}`));
      return page;
    },
    async call(method, path, body, token) {
      const headers = { 'Content-Type': 'application/json' };
      if (token) headers.Authorization = `Bearer ${token}`;
      const r = await fetch(server.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const data = await r.json().catch(() => null);
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(data)}`);
      return data;
    },
    async stop() {
      await browser.close();
      await server.stop();
    },
  };
}

/** Clicks a square of the chessground board (click-to-move), scrolling the board into view first. */
export async function clickSquare(page, sq, orientation = 'white', root = 'main') {
  const board = page.locator(`${root} cg-board`).first();
  await board.scrollIntoViewIfNeeded();
  const box = await board.boundingBox();
  const f = sq.charCodeAt(0) - 97, r = Number(sq[1]) - 1;
  const x = orientation === 'white' ? f : 7 - f, y = orientation === 'white' ? 7 - r : r;
  await page.mouse.click(box.x + (x + 0.5) * box.width / 8, box.y + (y + 0.5) * box.height / 8);
}
export async function move(page, uci, orientation = 'white') {
  await clickSquare(page, uci.slice(0, 2), orientation);
  await clickSquare(page, uci.slice(2, 4), orientation);
}

/** The game state last received by the page (the game page keeps it in window.__game). */
export const game = page => page.evaluate(() => window.__game);

export async function waitGame(page, pred, what, timeout = 20000) {
  const end = Date.now() + timeout;
  let g;
  while (Date.now() < end) {
    g = await game(page);
    if (g && pred(g)) return g;
    await page.waitForTimeout(100);
  }
  throw new Error(`timed out waiting for ${what}; last state: ${JSON.stringify(g && { status: g.status, turn: g.turn, phase: g.phase, moves: g.moves })}`);
}

export async function screenshot(page, name) {
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, name) });
}

/** Pieces of a FEN placement by square. */
export function boardMap(fen) {
  const out = {};
  fen.split(' ')[0].split('/').forEach((row, i) => {
    let f = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) f += Number(ch);
      else out[String.fromCharCode(97 + f++) + (8 - i)] = ch;
    }
  });
  return out;
}

/** A quiet move (to an empty square) from the side's dests, preferring the given origins. */
export function quietMove(g, prefer, exclude = []) {
  const board = boardMap(g.fen);
  const dests = g.legal.dests;
  for (const from of [...prefer, ...Object.keys(dests)]) {
    if (exclude.includes(from)) continue;
    for (const to of dests[from] ?? []) if (!board[to] && !g.legal.promotions.includes(from + to)) return from + to;
  }
  throw new Error('no quiet move');
}
