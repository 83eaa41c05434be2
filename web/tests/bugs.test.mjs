// The "Bugs" of issue 11, one test each (each failed before its fix): at 1280×860, and at 390×844 where
// the layout matters.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoose, DESKTOP as DESK, PHONE, move, waitGame, quietMove } from './helpers.mjs';

let env, server;
const errors = [];
before(async () => {
  // many games are made through the API here: more than one client's default request burst
  env = await startLoose();
  server = env.server;
});
after(async () => {
  await env?.stop();
});

async function open(path, viewport = DESK) {
  const page = await env.page(viewport, errors);
  await page.goto(server.base + path);
  return page;
}
const call = (...a) => env.call(...a);
const newGame = body => call('POST', '/api/games', { variant: 'chess', color: 'white', clock: null, ...body });
/** A person-vs-person game with both seats taken: [created, joined]. */
async function startedGame(variant = 'chess') {
  const a = await newGame({ variant, opponent: 'human', public: false });
  const b = await call('POST', `/api/games/${a.id}/join`, { invite: a.invite });
  return [a, b];
}
/** Creates a game against the engine from the lobby's form, as a player would. */
async function createVsEngine(page, variant, color = 'white') {
  await page.selectOption('select[name=variant]', variant);
  await page.selectOption('select[name=opponent]', 'engine');
  await page.selectOption('select[name=level]', '1');
  await page.selectOption('select[name=color]', color);
  await page.selectOption('select[name=clock]', '600+5');
  await Promise.all([page.waitForURL(/\/game\//), page.click('#create-game')]);
  return waitGame(page, g => g.status === 'started' && g.turn === color, 'the game to start');
}
/** Screenshots of these tests, to look at (not the docs' screenshots): $TMPDIR/dm-ui-bugs/. */
async function screenshot(page, name) {
  const dir = join(tmpdir(), 'dm-ui-bugs');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), fullPage: true });
}
/** WCAG contrast ratio of two computed CSS colours ("rgb(…)"/"rgba(…)"). */
function contrast(fg, bg) {
  const lum = c => {
    const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map(Number).map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}

for (const [name, vp] of [['desktop', DESK], ['phone', PHONE]]) {
  test(`bug 1 (${name}): the create-game forms show only the fields of the chosen opponent`, async () => {
    const check = async (page, root) => {
      const pub = page.locator(`${root} label:has(input[name=public])`);
      const level = page.locator(`${root} label:has(select[name=level])`);
      await page.selectOption(`${root} select[name=opponent]`, 'engine');
      assert.equal(await pub.isVisible(), false, '"list in open games" is hidden for an engine game');
      assert.equal(await level.isVisible(), true, 'the level is shown for an engine game');
      await page.selectOption(`${root} select[name=opponent]`, 'human');
      assert.equal(await pub.isVisible(), true, '"list in open games" is shown for a person');
      assert.equal(await level.isVisible(), false, 'the level is hidden for a person');
    };
    const page = await open('/', vp);
    await check(page, '#new-game');
    await page.goto(server.base + '/editor');
    await page.click('#ed-play-btn');
    await check(page, '#ed-play');
    await page.close();
  });
}

test('bug 2 (phone): the first taps land on the tapped squares after the page has laid itself out', async () => {
  const page = await open('/', PHONE);
  await createVsEngine(page, 'chess');
  // the header's account links and the players by the clocks arrive after the board was drawn
  await page.waitForSelector('#account a');
  await page.waitForFunction(() => document.querySelector('#clock-bottom .who')?.textContent);
  await move(page, 'e2e4');
  const g = await waitGame(page, g => g.moves.length >= 1, 'e2e4 to be played', 5000);
  assert.equal(g.moves[0], 'e2e4');
  await page.close();
});

test('bug 3: "Really resign?" and primary buttons stay readable under the mouse', async () => {
  const page = await open('/');
  await page.hover('#create-game');
  const create = await page.$eval('#create-game', el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]);
  assert.ok(contrast(...create) >= 4.5, `Create game under the mouse: ${create} (${contrast(...create).toFixed(2)}:1)`);
  await createVsEngine(page, 'double-move');
  await page.click('#resign');
  await page.waitForSelector('#resign.danger');
  await page.hover('#resign');
  await page.waitForTimeout(100);
  const [fg, bg] = await page.$eval('#resign', el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]);
  assert.match(await page.textContent('#resign'), /Really resign\?/);
  assert.ok(contrast(fg, bg) >= 4.5, `Really resign? under the mouse: ${fg} on ${bg} (${contrast(fg, bg).toFixed(2)}:1)`);
  await screenshot(page, 'bug-resign-hover.png');
  await page.close();
});

test('bug 4: a half-played Two Move turn is not marked as a single-move turn', async () => {
  const page = await open('/');
  let g = await createVsEngine(page, 'two-move');
  await move(page, 'e2e4'); // the first turn is a response move turn
  g = await waitGame(page, g => g.turn === 'white' && g.turns.length >= 2, 'the engine reply');
  const first = quietMove(g, ['g1', 'b1']);
  await move(page, first);
  g = await waitGame(page, g => g.phase === 'second', 'the first half of the turn');
  const last = g.turns[g.turns.length - 1];
  assert.equal(last.complete, false);
  assert.equal(last.kind, 'normal');
  const cell = page.locator('#moves .mturn').last();
  assert.match(await cell.textContent(), /,…$/);
  assert.equal(await cell.locator('sup.kind.single').count(), 0, 'no single-move mark on a half-played turn');
  assert.equal(await page.locator('#moves .mturn').first().locator('sup.kind.response').count(), 1, 'the response turn keeps its mark');
  await page.close();
});

test('bug 5: the evaluation graph scores a decided final position as its result, with axis labels', async () => {
  const page = await open('/analysis?variant=chess&engine=0');
  await page.fill('#pgn-input', '[Variant "Chess"]\n\n1. f3 e5 2. g4 Qh4# 0-1');
  await page.click('#pgn-load');
  await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 4);
  await page.click('#eval-graph');
  await page.waitForFunction(() => /5\/5 positions/.test(document.querySelector('#graph-info')?.textContent ?? ''), null, { timeout: 30000 });
  const last = page.locator('#graph svg circle').last();
  assert.equal(await last.getAttribute('data-eval'), '-1000', 'checkmated White: the graph bottom');
  assert.match(await last.locator('title').textContent(), /0-1/);
  const labels = await page.locator('#graph svg text').allTextContents();
  assert.ok(labels.some(t => /White/.test(t)) && labels.some(t => /Black/.test(t)), `axis labels: ${labels}`);
  assert.ok(labels.some(t => /turn/i.test(t)), `an x-axis label: ${labels}`);
  await page.locator('#graph').scrollIntoViewIfNeeded();
  await screenshot(page, 'bug-eval-graph.png');
  await page.close();
});

test('bug 6: the PGN link downloads doublemove_{variant}_{id}.pgn', async () => {
  const [a] = await startedGame('two-move');
  const page = await open(`/game/${a.id}`);
  await page.waitForSelector('#game-title .versus');
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 5000 }), page.click('a:text-is("PGN")')]);
  assert.equal(dl.suggestedFilename(), `doublemove_two-move_${a.id}.pgn`);
  await page.close();
});

test('bug 7: the lobby lists fit on the desktop, page through, and give results in words', async () => {
  // 12 open public games, 14 finished ones (resigned), one ended by fivefold repetition
  for (let i = 0; i < 12; i++) await newGame({ opponent: 'human', public: true, clock: { limit: 300, increment: 3 } });
  for (let i = 0; i < 13; i++) {
    const [a] = await startedGame();
    await call('POST', `/api/games/${a.id}/resign`, undefined, a.token);
  }
  const [w, b] = await startedGame();
  for (let i = 0; i < 4; i++)
    for (const [mv, t] of [['g1f3', w], ['g8f6', b], ['f3g1', w], ['f6g8', b]]) await call('POST', `/api/games/${w.id}/move`, { move: mv }, t.token);
  const rep = await call('GET', `/api/games/${w.id}`);
  assert.equal(rep.reason, 'fivefold_repetition');

  for (const [name, vp] of [['desktop', DESK], ['small desktop', { width: 1100, height: 800 }], ['phone', PHONE]]) {
    const page = await open('/', vp);
    await page.waitForSelector('#archive table');
    await page.waitForSelector('#open-games table');
    for (const id of ['#open-games', '#archive', '#my-games']) {
      const fit = await page.$eval(id, el => {
        const box = el.getBoundingClientRect();
        const cells = [...el.querySelectorAll('tr td:last-child a, tr td:last-child button')].map(a => a.getBoundingClientRect());
        return { scroll: el.scrollWidth, client: el.clientWidth, right: box.right, cells: cells.map(c => c.right), vw: innerWidth };
      });
      assert.ok(fit.scroll <= fit.client + 1, `${name} ${id}: no cut-off table (${fit.scroll} > ${fit.client})`);
      assert.ok(fit.cells.length > 0 && fit.cells.every(r => r <= Math.min(fit.right, fit.vw) + 1), `${name} ${id}: the last column is visible`);
    }
    // a page of 10, then the next page
    assert.equal(await page.locator('#archive tbody tr').count(), 10);
    const firstPage = await page.locator('#archive tbody tr').first().getAttribute('data-id');
    await page.click('#archive .pager button.next');
    assert.equal(await page.locator('#archive tbody tr').count(), 4);
    assert.notEqual(await page.locator('#archive tbody tr').first().getAttribute('data-id'), firstPage);
    assert.match(await page.textContent('#archive .pager'), /11–14 of 14/);
    await page.click('#archive .pager button.prev');
    assert.equal(await page.locator('#archive tbody tr').first().getAttribute('data-id'), firstPage);
    assert.equal(await page.locator('#open-games tbody tr').count(), 10);
    await page.click('#open-games .pager button.next');
    assert.equal(await page.locator('#open-games tbody tr').count(), 2);
    // results in words, never a raw reason code
    const archive = await page.textContent('#archive');
    assert.doesNotMatch(archive, /_/, 'no raw reason codes');
    assert.match(archive, /Black won by resignation/);
    assert.match(await page.textContent('#archive tbody tr:first-child'), /Draw by fivefold repetition/);
    await screenshot(page, `bug-lobby-${name.replace(' ', '-')}.png`);
    await page.close();
  }
});

/**
 * Waits for the board to mark `n` kings in check (chessground draws on the next frame, and hides a
 * square it no longer needs rather than removing it).
 */
async function checks(page, n, what) {
  try {
    await page.waitForFunction(n => marked().length === n, n, { timeout: 3000 });
  } catch {
    assert.fail(`${what}: ${await page.evaluate(() => marked().length)} kings marked, not ${n}`);
  }
}

test('bug 8: the analysis board shows check; no Double Move button outside Double Move Chess', async () => {
  const page = await open('/analysis?variant=chess&engine=0&fen=' + encodeURIComponent('rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3'));
  await page.addInitScript(() => (window.marked = () => [...document.querySelectorAll('cg-board square.check')].filter(s => s.style.display !== 'none')));
  await page.evaluate(() => (window.marked = () => [...document.querySelectorAll('cg-board square.check')].filter(s => s.style.display !== 'none')));
  await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('No legal moves'));
  await checks(page, 1, 'the mated king is marked');
  // a check given on the board (Double Move: between the halves the opponent's king is attacked)
  await page.goto(server.base + '/analysis?variant=chess&engine=0');
  await page.fill('#pgn-input', '[Variant "Chess"]\n\n1. e4 f5 2. Qh5+ *');
  await page.click('#pgn-load');
  await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 3);
  await checks(page, 1, 'Qh5+ marks the black king');
  await page.click('#prev');
  await checks(page, 0, 'no check before Qh5+');
  for (const v of ['twinmove', 'two-move', 'chess']) {
    await page.goto(`${server.base}/analysis?variant=${v}&engine=0`);
    await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('to play'));
    assert.equal(await page.locator('#double-toggle').isVisible(), false, `no Double Move button in ${v}`);
  }
  await page.goto(`${server.base}/analysis?variant=double-move&engine=0`);
  await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('to play'));
  assert.equal(await page.locator('#double-toggle').isVisible(), true);
  await page.close();
});

test('bug 9: a public waiting game\'s page has a Join button that joins with the listed invite', async () => {
  const a = await newGame({ variant: 'double-move', opponent: 'human', public: true, clock: { limit: 600, increment: 5 } });
  for (const vp of [DESK, PHONE]) {
    const page = await open(`/game/${a.id}`, vp);
    await page.waitForSelector('#join-game');
    assert.equal(await page.locator('#join-game').isVisible(), true);
    await page.close();
  }
  const page = await open(`/game/${a.id}`);
  await page.waitForSelector('#join-game');
  await page.click('#join-game');
  await page.waitForSelector('#you-play');
  const g = await waitGame(page, g => g.status === 'started', 'the game to start');
  assert.equal(g.black.joined, true);
  assert.match(await page.textContent('#you-play'), /you play black/);
  assert.equal(await page.locator('#join-game').count(), 0);
  // a private game's page has no Join button
  const p = await newGame({ opponent: 'human', public: false });
  const page2 = await open(`/game/${p.id}`);
  await page2.waitForSelector('#watching');
  await page2.waitForTimeout(300);
  assert.equal(await page2.locator('#join-game').count(), 0);
  await page.close();
  await page2.close();
});

test('bug 10: Two Move PGN import refuses `1.d4 d5 *` with its reason and accepts `1.d4 d5, *`', async () => {
  const page = await open('/analysis?variant=two-move&engine=0');
  await page.fill('#pgn-input', '[Variant "Two Move Chess"]\n\n1.d4 d5 *');
  await page.click('#pgn-load');
  await page.waitForFunction(() => document.querySelector('#analysis-error')?.textContent);
  assert.match(await page.textContent('#analysis-error'), /a second move by another piece must follow/);
  await page.fill('#pgn-input', '[Variant "Two Move Chess"]\n\n1.d4 d5, *');
  await page.click('#pgn-load');
  await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 2);
  assert.equal(await page.textContent('#analysis-error'), '');
  assert.match(await page.inputValue('#fen'), / Hd5$/);
  await page.close();
});

test('no page errors', () => assert.deepEqual(errors, []));
