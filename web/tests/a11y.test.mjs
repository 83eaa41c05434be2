// Accessibility audit (issue 11): axe-core run in the page on every kind of page, at desktop and phone
// sizes, signed out and signed in; no violation of impact "serious" or "critical" (this includes text
// contrast below 4.5:1, unlabelled fields and buttons without names). Keyboard: the main controls are
// reachable with Tab and work with Enter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { startLoose, startBrowser, SIZES, DESKTOP } from './helpers.mjs';

const require = createRequire(import.meta.url);
// Evaluated through the devtools protocol: the site's CSP (script-src 'self') rightly refuses an
// injected <script>.
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let env, server;

before(async () => {
  env = await startLoose();
  server = env.server;
});
after(async () => {
  await env?.stop();
});

async function post(path, body, headers = {}) {
  const r = await fetch(server.base + path, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return r.json();
}

/** The serious and critical violations axe finds on the page, as readable lines. */
async function audit(page) {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    // The boards are drawn squares and pieces (chessground), described by the page around them.
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' — ' + (n.failureSummary ?? '').split('\n').slice(0, 2).join(' ')) }));
  });
  return result.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.join('\n    ')}`);
}

async function pages() {
  const engine = await post('/api/games', { variant: 'double-move', opponent: 'engine', level: 1, color: 'white' });
  const open = await post('/api/games', { variant: 'two-move', opponent: 'human', color: 'white', public: true });
  return [
    ['lobby', '/'],
    ['game vs engine', `/game/${engine.id}`],
    ['waiting game', `/game/${open.id}`],
    ['analysis', '/analysis?variant=twinmove'],
    ['editor', '/editor?variant=double-move'],
    ['rules', '/variant/two-move'],
    ['leaderboard', '/leaderboard'],
    ['sign up', '/signup'],
    ['sign in', '/login'],
  ];
}

for (const [size, viewport] of SIZES) {
  test(`no serious or critical accessibility violations, signed out (${size})`, async () => {
    const found = [];
    for (const [name, path] of await pages()) {
      const page = await env.page(viewport);
      await page.goto(server.base + path);
      await page.waitForLoadState('networkidle');
      for (const v of await audit(page)) found.push(`${name} ${path}: ${v}`);
      await page.close();
    }
    assert.deepEqual(found, [], found.join('\n'));
  });
}

test('no serious or critical accessibility violations, signed in: lobby and player page', async () => {
  const { ctx, close } = await startBrowser({ viewport: DESKTOP });
  try {
    const page = await ctx.newPage();
    await page.goto(server.base + '/signup');
    await page.getByLabel('Username').fill('auditor');
    await page.getByLabel('Password', { exact: true }).fill('secret-pw');
    await page.getByRole('button', { name: /sign up/i }).click();
    await page.waitForURL(server.base + '/');
    await page.waitForLoadState('networkidle');
    const found = (await audit(page)).map(v => `lobby: ${v}`);
    await page.goto(server.base + '/@/auditor');
    await page.waitForLoadState('networkidle');
    found.push(...(await audit(page)).map(v => `player page: ${v}`));
    assert.deepEqual(found, [], found.join('\n'));
  } finally {
    await close();
  }
});

test('keyboard: the create form is reachable with Tab and starts a game with Enter', async () => {
  const page = await env.page();
  await page.goto(server.base + '/');
  const create = page.getByRole('button', { name: /create game/i });
  await create.waitFor();
  // Tab until the create button has focus (bounded), then press Enter.
  let reached = false;
  for (let i = 0; i < 80 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await create.evaluate(b => b === document.activeElement);
  }
  assert.ok(reached, 'the Create game button is reachable with Tab');
  await Promise.all([page.waitForURL(/\/game\//), page.keyboard.press('Enter')]);
  await page.close();
});
