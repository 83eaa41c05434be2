// Analysis board (issue 11): engine lines in SAN with comma turns and clickable moves, the evaluation bar;
// the lobby's custom time control. At desktop and phone sizes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoose, SIZES } from './helpers.mjs';

const UCI = /\b[a-h][1-8][a-h][1-8][qrbn]?\b/;
const PIECE = /[NBRQK]x?[a-h]?[1-8]?x?[a-h][1-8]/;

let env, server;
before(async () => {
  env = await startLoose();
  server = env.server;
});
after(async () => {
  await env?.stop();
});

/** Waits until the engine lines have at least `n` moves each and returns their texts. */
async function lineTexts(page, n = 3) {
  await page.waitForFunction(k => {
    const ls = [...document.querySelectorAll('#engine-lines .line')];
    return ls.length >= 2 && ls.every(l => l.querySelectorAll('.pv-move').length >= k);
  }, n, { timeout: 20000 });
  return page.$$eval('#engine-lines .line .pv', ls => ls.map(l => l.textContent));
}

/** Stops the page's engine search before leaving (the server queues only a few searches per client). */
async function leave(page) {
  if (new URL(page.url()).pathname === '/analysis') await page.uncheck('#engine-on');
}

const noHorizontalScroll = page => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

for (const [size, viewport] of SIZES) {
  test(`${size}: engine lines are SAN with comma turns (Two Move, Twinmove, Double Move), no UCI`, async () => {
    const page = await env.page(viewport);
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    let commaTurns = 0, pieces = 0;
    for (const variant of ['two-move', 'twinmove', 'double-move']) {
      await leave(page);
      await page.goto(`${server.base}/analysis?variant=${variant}`);
      await page.selectOption('#movetime', '1000');
      let texts;
      // the lines deepen while the engine thinks: look at them until done
      for (let i = 0; i < 10; i++) {
        texts = await lineTexts(page);
        for (const t of texts) {
          assert.doesNotMatch(t, UCI, `${variant}: a UCI move in ${t}`);
          assert.match(t, /^1\./, `${variant}: a line starts with its move number: ${t}`);
        }
        if (texts.some(t => /\d\.[^ ]*,/.test(t) || / [^ .]+,/.test(t))) commaTurns++;
        if (texts.some(t => PIECE.test(t))) pieces++;
        if (/done/.test(await page.textContent('#engine-lines .muted'))) break;
        await page.waitForTimeout(300);
      }
      if (variant !== 'double-move') assert.ok(texts.some(t => /,/.test(t)), `${variant}: a two-move turn with a comma in ${texts.join(' | ')}`);
    }
    assert.ok(commaTurns > 0 && pieces > 0, 'piece moves and comma turns in the lines');
    assert.ok(await noHorizontalScroll(page), 'no horizontal scrolling');
    await page.screenshot({ path: join(tmpdir(), `dm-analysis-lines-${size}.png`) });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${size}: clicking a move of an engine line plays the line up to it onto the board and into the tree`, async () => {
    const page = await env.page(viewport);
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    await page.goto(`${server.base}/analysis?variant=two-move`);
    await page.selectOption('#movetime', '1000');
    await lineTexts(page, 3);
    await page.waitForFunction(() => /done/.test(document.querySelector('#engine-lines .muted')?.textContent ?? ''), null, { timeout: 15000 });
    const fen0 = await page.inputValue('#fen');
    // the first move of a two-move turn (an unfinished turn): the line is played up to it. Read and
    // clicked in one step: the search started with the page's default time may still replace the
    // lines after the one started by choosing 1 s has reported.
    const { sans, ucis, pick } = await page.evaluate(() => {
      const bs = [...document.querySelectorAll('#engine-lines .line')[0].querySelectorAll('.pv-move')];
      const pick = bs.findIndex((b, i) => b.dataset.index === '0' && bs[i + 1]?.dataset.turn === b.dataset.turn);
      if (pick >= 0) bs[pick].click();
      return { sans: bs.map(b => b.textContent), ucis: bs.map(b => b.dataset.uci), pick };
    });
    assert.ok(pick >= 0, `a two-move turn in ${sans}`);
    await page.waitForFunction(k => document.querySelectorAll('#tree .mturn').length === k, pick + 1);
    const tree = await page.textContent('#tree');
    for (const s of sans.slice(0, pick + 1)) assert.ok(tree.includes(s), `${tree} has ${s}`);
    const fen = await page.inputValue('#fen');
    assert.notEqual(fen, fen0);
    assert.match(await page.textContent('#status'), /to play: second move/);
    // the board shows the last move of the line
    const last = ucis[pick];
    await page.waitForFunction(() => document.querySelectorAll('cg-board square.last-move').length === 2);
    const board = await page.evaluate(() => [...document.querySelectorAll('cg-board piece')].length);
    assert.equal(board, 32 - (tree.match(/x/g) ?? []).length);
    assert.equal(await page.getAttribute('#tree .mturn.current', 'data-uci'), last);
    // the same line again, further: the known moves are reused (no duplicate variation)
    await page.waitForSelector('#engine-lines .line .pv-move', { timeout: 15000 });
    const n = await page.locator('#engine-lines .line >> nth=0').locator('.pv-move').count();
    await page.locator('#engine-lines .line >> nth=0').locator(`.pv-move >> nth=${Math.min(1, n - 1)}`).click();
    await page.waitForFunction(k => document.querySelectorAll('#tree .mturn').length === k, pick + 3);
    assert.equal(await page.locator('#tree .var').count(), 0);
    // a Double Move line: the first half of a two-move turn is a Double Move (²)
    await leave(page);
    await page.goto(`${server.base}/analysis?variant=double-move&fen=${encodeURIComponent('3q3k/6p1/6Pp/8/8/1Q6/8/6K1 w - - 0 1 WB')}`);
    await page.selectOption('#movetime', '1000');
    await page.waitForSelector('#engine-lines .line .pv-move', { timeout: 15000 });
    await page.waitForFunction(() => /done/.test(document.querySelector('#engine-lines .muted')?.textContent ?? ''), null, { timeout: 15000 });
    const dm = await page.textContent('#engine-lines .line >> nth=0');
    const firstTurn = await page.locator('#engine-lines .line >> nth=0 >> .pv-move[data-turn="0"]').count();
    assert.doesNotMatch(await page.textContent('#engine-lines .muted'), UCI, 'the best turn in SAN');
    await page.click('#engine-lines .line >> nth=0 >> .pv-move >> nth=0');
    await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 1);
    // the mate takes a Double Move (Qg8+,Qxd8#): its first half is marked ² and the second half is to come
    assert.ok(firstTurn > 1, `a two-move turn in ${dm}`);
    assert.match(await page.textContent('#tree'), /^\s*1\. Q\S+²$/, `a Double Move first half from ${dm}`);
    assert.match(await page.textContent('#status'), /second half/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${size}: the evaluation bar shows White's share and moves with the position`, async () => {
    const page = await env.page(viewport);
    const frames = [];
    page.on('websocket', ws => {
      ws.on('framesent', f => frames.push(`> ${String(f.payload).slice(0, 120)}`));
      ws.on('framereceived', f => frames.push(`< ${String(f.payload).slice(0, 120)}`));
    });
    const bar = async () => Number(await page.getAttribute('#eval-bar', 'aria-valuenow'));
    const waitBar = (lo, hi) => page.waitForFunction(([lo, hi]) => {
      const v = Number(document.querySelector('#eval-bar')?.getAttribute('aria-valuenow'));
      return !!document.querySelector('#engine-lines .line') && v > lo && v < hi;
    }, [lo, hi], { timeout: 15000 }).catch(async e => {
      throw new Error(`${e.message}: bar ${await bar()}, lines ${await page.textContent('#engine-lines')}, error ${await page.textContent('#analysis-error')}\n${frames.slice(-12).join('\n')}`);
    });
    // White a queen up, White to move, then Black to move: the bar stays on White's side
    for (const fen of ['4k3/8/8/8/8/8/8/3QK3 w - - 0 1', '4k3/8/8/8/8/8/8/3QK3 b - - 0 1']) {
      await leave(page);
      await page.goto(`${server.base}/analysis?variant=chess&fen=${encodeURIComponent(fen)}`);
      await waitBar(80, 101);
      assert.equal(await page.getAttribute('#eval-bar', 'role'), 'meter');
      assert.ok((await page.getAttribute('#eval-bar', 'aria-label')).includes('White'));
      assert.ok((await page.textContent('#eval-bar')).trim().length > 0, 'the score text');
    }
    // Black a queen up: the bar goes to Black's side
    await leave(page);
    await page.goto(`${server.base}/analysis?variant=chess&fen=${encodeURIComponent('3qk3/8/8/8/8/8/8/4K3 w - - 0 1')}`);
    await waitBar(-1, 20);
    assert.ok(await bar() < 20);
    // the start position: about even; then a played move changes it
    await leave(page);
    await page.goto(`${server.base}/analysis?variant=double-move`);
    await waitBar(30, 70);
    const box = await page.locator('#eval-bar').boundingBox();
    const boardBox = await page.locator('cg-board').boundingBox();
    if (size === 'desktop') assert.ok(box.height > box.width * 5 && Math.abs(box.height - boardBox.height) < 12, `a vertical bar beside the board: ${JSON.stringify(box)}`);
    else assert.ok(box.width > box.height * 5, `a horizontal strip on a phone: ${JSON.stringify(box)}`);
    assert.ok(await noHorizontalScroll(page), 'no horizontal scrolling');
    await page.screenshot({ path: join(tmpdir(), `dm-analysis-bar-${size}.png`) });
    await page.close();
  });

  test(`${size}: clicking the evaluation graph shows that position on the board and in the move list`, async () => {
    const page = await env.page(viewport);
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    const pgn = '[Variant "Two Move Chess"]\n\n1. e4 Nf6,e5 2. Nc3,Nf3 d5,Nc6 *';
    // the positions after each move, as the server replays them (index: moves played)
    const { positions } = await env.call('POST', '/api/pgn/import', { pgn });
    await page.goto(`${server.base}/analysis?variant=two-move&engine=0`);
    await page.fill('#pgn-input', pgn);
    await page.click('#pgn-load');
    await page.waitForFunction(() => document.querySelectorAll('#tree .mturn').length === 7);
    await page.click('#eval-graph');
    await page.waitForFunction(() => /5\/5 positions/.test(document.querySelector('#graph-info')?.textContent ?? ''), null, { timeout: 30000 });
    // the graph's points: each turn start (after 0, 1, 3, 5 and 7 moves)
    const plies = [0, 1, 3, 5, 7];
    const placement = fen => fen.split(' ')[0];
    /** The board's pieces as a FEN placement (chessground's DOM), null while pieces are moving. */
    const board = () => page.evaluate(() => {
      if (document.querySelector('cg-board piece.anim')) return null;
      const at = {};
      for (const p of document.querySelectorAll('cg-board piece')) if (!p.classList.contains('ghost') && !p.classList.contains('fading')) at[p.cgKey] = p.className;
      const rows = [];
      for (let r = 8; r >= 1; r--) {
        let row = '', gap = 0;
        for (const f of 'abcdefgh') {
          const c = at[f + r];
          if (!c) { gap++; continue; }
          if (gap) row += gap;
          gap = 0;
          const t = { pawn: 'p', knight: 'n', bishop: 'b', rook: 'r', queen: 'q', king: 'k' }[c.split(' ').find(x => x !== 'white' && x !== 'black')];
          row += c.includes('white') ? t.toUpperCase() : t;
        }
        rows.push(row + (gap ? gap : ''));
      }
      return rows.join('/');
    });
    const shows = async (i, how) => {
      const ply = plies[i];
      await page.waitForFunction(f => document.querySelector('#fen').value === f, positions[ply]).catch(async () => {
        throw new Error(`${how}: the board should show the position after ${ply} moves; the FEN field has ${await page.inputValue('#fen')}`);
      });
      // the pieces on the board once they stand still (polled: chessground animates the change)
      let pieces;
      for (const end = Date.now() + 5000; Date.now() < end; await page.waitForTimeout(50)) if ((pieces = await board()) === placement(positions[ply])) break;
      assert.equal(pieces, placement(positions[ply]), `${how}: the pieces on the board`);
      const cur = page.locator('#tree .mturn.current');
      if (ply === 0) assert.equal(await cur.count(), 0, `${how}: no move marked at the start`);
      else {
        assert.equal(await cur.count(), 1, `${how}: one move marked in the move list`);
        assert.equal(await cur.getAttribute('data-uci'), (await page.locator('#tree .mturn').nth(ply - 1).getAttribute('data-uci')), `${how}: the move list marks move ${ply}`);
        assert.equal(await page.locator('#tree .mturn').nth(ply - 1).evaluate(e => e.classList.contains('current')), true);
      }
      assert.equal(await page.locator(`#graph circle[data-i="${i}"].current`).count(), 1, `${how}: the graph marks its point`);
    };
    // a point itself
    await page.locator('#graph circle[data-i="2"]').click();
    await shows(2, 'the point after 1…Nf6,e5');
    // anywhere in a point's column (away from the point): the nearest turn
    const svg = await page.locator('#graph svg').boundingBox();
    for (const i of [1, 3, 0]) {
      const c = await page.locator(`#graph circle[data-i="${i}"]`).boundingBox();
      const cy = c.y + c.height / 2;
      const y = cy < svg.y + svg.height / 2 ? svg.y + svg.height * 0.7 : svg.y + svg.height * 0.15;
      await page.mouse.click(c.x + c.width / 2 + 2, y);
      await shows(i, `a click in the column of point ${i}`);
    }
    assert.ok(await noHorizontalScroll(page), 'no horizontal scrolling');
    await page.screenshot({ path: join(tmpdir(), `dm-analysis-graph-${size}.png`), fullPage: true });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test(`${size}: create-game form: a custom 7+4 clock, and its messages for bad values`, async () => {
    const page = await env.page(viewport);
    await page.goto(server.base + '/');
    await page.selectOption('form.create select[name=clock]', 'custom');
    assert.ok(await page.isVisible('#tc-base'));
    assert.equal(await page.textContent('label:has(#tc-base)'), 'Base (minutes) ');
    // out of range: the form's own message, nothing created
    await page.fill('#tc-base', '200');
    await page.click('#create-game');
    await page.waitForFunction(() => /0 to 180 minutes/.test(document.querySelector('#create-error')?.textContent ?? ''));
    assert.equal(await page.getAttribute('#tc-base', 'aria-invalid'), 'true');
    await page.fill('#tc-base', '7');
    await page.fill('#tc-increment', '181');
    await page.click('#create-game');
    await page.waitForFunction(() => /0 to 180/.test(document.querySelector('#create-error')?.textContent ?? '') && /Increment/.test(document.querySelector('#create-error').textContent));
    // a value the form lets through but the server refuses (under a second): the server's reason is shown
    await page.fill('#tc-base', '0.005');
    await page.fill('#tc-increment', '0');
    await page.click('#create-game');
    await page.waitForFunction(() => /at least one second/.test(document.querySelector('#create-error')?.textContent ?? ''));
    assert.equal(new URL(page.url()).pathname, '/');
    // 7+4
    await page.fill('#tc-base', '7');
    await page.fill('#tc-increment', '4');
    await Promise.all([page.waitForURL(/\/game\//), page.click('#create-game')]);
    const id = new URL(page.url()).pathname.split('/').pop();
    const g = await (await fetch(`${server.base}/api/games/${id}`)).json();
    assert.equal(g.clock.limit_ms, 420000);
    assert.equal(g.clock.increment_ms, 4000);
    await page.waitForFunction(() => /7:00/.test(document.body.textContent));
    await page.close();
  });
}
