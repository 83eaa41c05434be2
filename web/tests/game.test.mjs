import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, move, waitGame, game, screenshot, quietMove } from './helpers.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function createVsEngine(page, variant) {
  await page.goto(server.base + '/');
  await page.selectOption('select[name=variant]', variant);
  await page.selectOption('select[name=opponent]', 'engine');
  await page.selectOption('select[name=level]', '1');
  await page.selectOption('select[name=color]', 'white');
  await page.selectOption('select[name=clock]', '600+5');
  await Promise.all([page.waitForURL(/\/game\//), page.click('#create-game')]);
  return waitGame(page, g => g.status === 'started' && g.turn === 'white', 'the game to start');
}

test('Double Move Chess against the engine: Double Move turn, takeback, resign', async () => {
  const page = await browser.ctx.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  let g = await createVsEngine(page, 'double-move');
  assert.equal(g.variant, 'double-move');
  assert.match(await page.textContent('#status'), /your move/i);
  assert.match(await page.textContent('#dm-white'), /available/);
  assert.match(await page.textContent('#dm-black'), /available/);
  await page.click('#double-toggle');
  assert.equal(await page.getAttribute('#double-toggle', 'aria-pressed'), 'true');
  await move(page, 'e2e4');
  g = await waitGame(page, g => g.phase === 'second', 'the second half');
  assert.match(await page.textContent('#status'), /Double Move: second half/);
  assert.match(await page.textContent('#dm-white'), /used/);
  await move(page, 'd2d4');
  g = await waitGame(page, g => g.turn === 'white' && g.turns.length >= 2, 'the engine reply');
  assert.equal(g.turns[0].kind, 'double');
  assert.equal(g.turns[0].san, 'e4,d4');
  assert.match(await page.textContent('#moves'), /e4,d4/);
  await screenshot(page, 'game.png');
  await page.click('#takeback');
  g = await waitGame(page, g => g.moves.length === 0, 'the takeback');
  assert.equal(g.takebacks_used.white, 1);
  assert.equal(g.double_move.white, true);
  // an ordinary move, then resign
  await move(page, 'g1f3');
  g = await waitGame(page, g => g.turn === 'white' && g.moves.length >= 2, 'the engine reply');
  await page.click('#resign');
  await page.click('#resign');
  g = await waitGame(page, g => g.status === 'finished', 'the resignation');
  assert.equal(g.reason, 'resignation');
  assert.equal(g.winner, 'black');
  assert.match(await page.textContent('#status'), /resign/i);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Two Move Chess against the engine: response move, then a two-move turn', async () => {
  const page = await browser.ctx.newPage();
  let g = await createVsEngine(page, 'two-move');
  assert.equal(g.phase, 'response');
  assert.match(await page.textContent('#status'), /response move/i);
  await move(page, 'e2e4');
  g = await waitGame(page, g => g.turn === 'white' && g.turns.length >= 2, 'the engine reply');
  assert.equal(g.turns[0].kind, 'response');
  assert.equal(g.phase, 'start');
  const first = quietMove(g, ['b1', 'g1']);
  await move(page, first);
  g = await waitGame(page, g => g.phase === 'second' || g.turn === 'black', 'the first move');
  if (g.phase === 'second') {
    assert.match(await page.textContent('#status'), /your second move/i);
    const second = quietMove(g, ['g1', 'b1', 'd2', 'a2', 'h2'], [first.slice(2, 4)]);
    await move(page, second);
    g = await waitGame(page, g => g.turns.length >= 3 && g.turns[2].complete !== false, 'the second move');
    assert.equal(g.turns[2].uci, `${first},${second}`);
    assert.match(await page.textContent('#moves'), new RegExp(g.turns[2].san));
  }
  g = await waitGame(page, g => g.turn === 'white' && g.turns.length >= 4, 'the engine reply');
  await page.click('#resign');
  await page.click('#resign');
  await waitGame(page, g => g.status === 'finished', 'the resignation');
  await page.close();
});

test('phone-sized game page, watcher is read-only', async () => {
  const page = await browser.ctx.newPage();
  await page.setViewportSize({ width: 390, height: 844 });
  const r = await (await fetch(server.base + '/api/games', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ variant: 'double-move', opponent: 'engine', level: 1, color: 'black', clock: { limit: 300, increment: 3 } }) })).json();
  await page.goto(`${server.base}/game/${r.id}`);
  await waitGame(page, g => g.moves.length > 0, 'the engine to move');
  assert.match(await page.textContent('.game-title'), /watching/);
  assert.equal(await page.locator('#resign').count(), 0);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `no horizontal scrolling (width ${width})`);
  await screenshot(page, 'game-phone.png');
  await page.setViewportSize({ width: 1200, height: 820 });
  await page.goto(server.base + '/');
  await page.waitForSelector('#archive table');
  await page.waitForSelector('#my-games table');
  await screenshot(page, 'lobby.png');
  await page.close();
});
