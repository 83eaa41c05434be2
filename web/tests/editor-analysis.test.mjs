import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, clickSquare, screenshot } from './helpers.mjs';

let server, browser;
before(async () => {
  server = await startServer();
  browser = await startBrowser();
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

test('editor: set up a position, validation message, then analyse it (engine lines appear)', async () => {
  const page = await browser.ctx.newPage();
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  await page.goto(server.base + '/editor');
  await page.selectOption('#ed-variant', 'double-move');
  await page.click('#ed-clear');
  for (const [tool, sq] of [['white-king', 'g1'], ['white-queen', 'b3'], ['white-pawn', 'g6'], ['white-rook', 'd1'], ['black-king', 'h8'], ['black-queen', 'd8'], ['black-pawn', 'g7'], ['black-pawn', 'h6']]) {
    await page.click(`#tool-${tool}`);
    await clickSquare(page, sq);
  }
  await page.click('#tool-move');
  await page.uncheck('#ed-castle-K'); await page.uncheck('#ed-castle-Q'); await page.uncheck('#ed-castle-k'); await page.uncheck('#ed-castle-q');
  await page.waitForFunction(() => document.querySelector('#ed-validation')?.textContent?.startsWith('Valid'));
  const fen = await page.inputValue('#ed-fen');
  assert.equal(fen, '3q3k/6p1/6Pp/8/8/1Q6/8/3R2K1 w - - 0 1 WB');
  // a broken position shows the rules crate's message
  await page.fill('#ed-fen', '3q4/6p1/6Pp/8/8/1Q6/8/3R2K1 w - - 0 1 WB');
  await page.waitForFunction(() => document.querySelector('#ed-validation')?.className === 'error');
  assert.match(await page.textContent('#ed-validation'), /invalid FEN/i);
  await page.fill('#ed-fen', fen);
  await page.waitForFunction(() => document.querySelector('#ed-validation')?.textContent?.startsWith('Valid'));
  assert.equal(await page.locator('cg-board piece').count(), 8);
  await screenshot(page, 'editor.png');
  await Promise.all([page.waitForURL(/\/analysis/), page.click('#ed-analyse')]);
  await page.waitForSelector('#engine-lines .line', { timeout: 15000 });
  await page.waitForFunction(() => document.querySelectorAll('#engine-lines .line').length >= 2, null, { timeout: 15000 });
  assert.match(await page.inputValue('#fen'), /^3q3k\/6p1\/6Pp/);
  // play a Double Move on the analysis board: both halves are checked by the server
  await page.click('#double-toggle');
  await clickSquare(page, 'b3'); await clickSquare(page, 'g8');
  await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('second half'));
  await clickSquare(page, 'g8'); await clickSquare(page, 'h7');
  await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 2);
  assert.match(await page.textContent('#tree'), /1\. Qg8\+?²,Qx?h7/);
  await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('No legal moves'));
  await page.click('#tree .mturn >> nth=0');
  await page.waitForFunction(() => document.querySelector('#status')?.textContent?.includes('second half'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('analysis: PGN import, move tree, evaluation graph, screenshots', async () => {
  const page = await browser.ctx.newPage();
  await page.goto(server.base + '/analysis?variant=two-move');
  await page.fill('#pgn-input', '[Variant "Two Move Chess"]\n\n1. e4 Nf6,e5 2. Nc3,Nf3 d5,Nc6 *');
  await page.click('#pgn-load');
  await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 7);
  assert.match(await page.textContent('#tree'), /1\. e4/);
  await page.click('#prev');
  assert.match(await page.inputValue('#fen'), / Hd5$/);
  // a variation: another second move
  await page.waitForSelector('#engine-lines .line', { timeout: 15000 });
  await page.click('#eval-graph');
  await page.waitForFunction(() => /5\/5 positions/.test(document.querySelector('#graph-info')?.textContent ?? ''), null, { timeout: 30000 });
  await page.click('#tree .mturn >> nth=4');
  await page.waitForSelector('#engine-lines .line', { timeout: 15000 });
  await screenshot(page, 'analysis.png');
  await page.close();
});
