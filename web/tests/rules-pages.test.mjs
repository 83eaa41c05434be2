// Rules pages (/variant/two-move, /variant/double-move, /variant/twinmove), issue 11 "Learning the variants":
// headings and mini-boards at 1280×860 and 390×844 without horizontal scrolling; the "Rules" links of the
// lobby's create form and of the analysis board lead to the selected variant's page; every example on the
// pages replays legally through POST /api/pgn/import (and every "Not allowed" line is refused).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { startServer, startBrowser, shots } from './helpers.mjs';

const DESK = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
const PAGES = { 'two-move': 'Two Move Chess', 'double-move': 'Double Move Chess', twinmove: 'Twinmove Chess' };
const PGN_NAMES = { 'two-move': 'Two Move Chess', 'double-move': 'Double Move Chess', twinmove: 'Twinmove Chess (uncompelled)' };
let server, browser;
const errors = [];
before(async () => {
  server = await startServer({ args: ['--request-burst', '1000'] });
  browser = await startBrowser({ viewport: DESK });
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function open(path, viewport = DESK) {
  const page = await browser.ctx.newPage();
  await page.setViewportSize(viewport);
  page.on('pageerror', e => errors.push(`${path}: ${e.message}`));
  await page.goto(server.base + path);
  return page;
}
const noHorizontalScroll = page => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

async function pgnImport(variant, fen, movetext) {
  const pgn = `[Variant "${PGN_NAMES[variant]}"]\n[SetUp "1"]\n[FEN "${fen}"]\n\n${movetext}`;
  const r = await fetch(server.base + '/api/pgn/import', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ pgn, variant }) });
  return { status: r.status, body: await r.json().catch(() => null) };
}

for (const [variant, title] of Object.entries(PAGES)) {
  for (const [size, viewport] of [['desktop', DESK], ['phone', PHONE]]) {
    test(`${title} rules page renders its heading and mini-boards (${size})`, async () => {
      const page = await open(`/variant/${variant}`, viewport);
      await page.getByRole('heading', { level: 1, name: `${title}: the rules` }).waitFor();
      for (const h of ['In short', 'Key cases', 'Our rulings']) await page.getByRole('heading', { level: 2, name: h }).waitFor();
      const figures = page.locator('figure.rules-example');
      const n = await figures.count();
      assert.ok(n >= 4, `${variant}: ${n} examples`);
      await page.waitForFunction(k => document.querySelectorAll('figure.rules-example .mini-board cg-board piece').length > 0 &&
        document.querySelectorAll('figure.rules-example .mini-board cg-board').length === k, n);
      for (let i = 0; i < n; i++) {
        const fig = figures.nth(i);
        const box = await fig.locator('.mini-board').boundingBox();
        assert.ok(box.width >= 200 && Math.abs(box.width - box.height) < 2, `${variant} example ${i + 1}: board ${box.width}×${box.height}`);
        assert.ok(box.x >= 0 && box.x + box.width <= viewport.width, `${variant} example ${i + 1}: board inside the window`);
        // one arrow per move of the example, drawn from square to square (an arrow drawn before the board
        // had its size collapses to a point)
        const moves = (await fig.getAttribute('data-turns')).split(/[ ,]/).filter(Boolean).length;
        await page.waitForFunction(([el, k]) => el.querySelectorAll('svg.cg-shapes line').length === k, [await fig.elementHandle(), moves]);
        const lengths = await fig.locator('svg.cg-shapes line').evaluateAll(ls => ls.map(l =>
          Math.hypot(+l.getAttribute('x2') - +l.getAttribute('x1'), +l.getAttribute('y2') - +l.getAttribute('y1'))));
        for (const len of lengths) assert.ok(Number.isFinite(len) && len > 0.3, `${variant} example ${i + 1}: an arrow of length ${len}`);
      }
      assert.ok(await noHorizontalScroll(page), `${variant} (${size}) scrolls sideways`);
      // the page's links: the analysis board with this variant, and the lobby
      assert.equal(await page.locator('#rules-analysis').getAttribute('href'), `/analysis?variant=${variant}`);
      assert.equal(await page.locator('#rules-lobby').getAttribute('href'), '/');
      mkdirSync(shots, { recursive: true });
      // the phone's screenshot shows the first examples
      if (size === 'phone') await page.getByRole('heading', { level: 2, name: 'Key cases' }).evaluate(e => e.scrollIntoView());
      await page.screenshot({ path: join(shots, `rules-${variant}${size === 'phone' ? '-phone' : ''}.png`), fullPage: size === 'desktop' });
      if (size === 'desktop') {
        await Promise.all([page.waitForURL(/\/analysis\?variant=/), page.click('#rules-analysis')]);
        assert.equal(await page.locator('select[name=variant]').inputValue(), variant);
      }
      await page.close();
    });
  }

  test(`${title}: every example replays legally through /api/pgn/import`, async () => {
    const page = await open(`/variant/${variant}`);
    await page.locator('figure.rules-example').first().waitFor();
    const examples = await page.$$eval('figure.rules-example', els => els.map(e => ({ id: e.id, title: e.querySelector('h3').textContent, ...e.dataset })));
    await page.close();
    assert.ok(examples.length >= 4);
    for (const ex of examples) {
      assert.equal(ex.variant, variant);
      const r = await pgnImport(variant, ex.fen, ex.pgn);
      assert.equal(r.status, 200, `${ex.title}: ${ex.pgn} from ${ex.fen}: ${JSON.stringify(r.body)}`);
      // the arrows are the moves the server played
      assert.equal(r.body.turns.map(t => t.uci).join(' '), ex.turns, `${ex.title}: arrows ≠ moves`);
      assert.equal(r.body.result, ex.result ?? '*', `${ex.title}: result`);
      if (ex.refused) {
        const bad = await pgnImport(variant, ex.fen, ex.refused);
        assert.equal(bad.status, 400, `${ex.title}: "${ex.refused}" should be refused, got ${JSON.stringify(bad.body)}`);
      }
    }
  });
}

test('the Double Move page\'s 7th-field sample is the position after 1.e4 as a first half', async () => {
  const page = await open('/variant/double-move');
  const sample = await page.locator('code.fen-sample').textContent();
  await page.close();
  const r = await pgnImport('double-move', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB', '1.e4, *');
  assert.equal(r.status, 200);
  assert.equal(r.body.fen, sample);
});

for (const [size, viewport] of [['desktop', DESK], ['phone', PHONE]]) {
  test(`the lobby's "Rules" link leads to the selected variant's page (${size})`, async () => {
    const page = await open('/', viewport);
    const form = page.locator('form.create');
    const link = form.getByRole('link', { name: 'Rules' });
    await link.waitFor();
    for (const variant of Object.keys(PAGES)) {
      await form.locator('select[name=variant]').selectOption(variant);
      assert.equal(await link.getAttribute('href'), `/variant/${variant}`);
    }
    await form.locator('select[name=variant]').selectOption('chess');
    assert.ok(await link.isHidden(), 'orthodox chess has no rules page');
    await form.locator('select[name=variant]').selectOption('twinmove');
    assert.ok(await noHorizontalScroll(page));
    await Promise.all([page.waitForURL(/\/variant\/twinmove$/), link.click()]);
    await page.getByRole('heading', { level: 1, name: 'Twinmove Chess: the rules' }).waitFor();
    await page.close();
  });

  test(`the analysis board's "Rules" link leads to the selected variant's page (${size})`, async () => {
    const page = await open('/analysis?variant=two-move&engine=0', viewport);
    const link = page.getByRole('link', { name: 'Rules' });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), '/variant/two-move');
    await page.selectOption('select[name=variant]', 'double-move');
    assert.equal(await link.getAttribute('href'), '/variant/double-move');
    await page.selectOption('select[name=variant]', 'chess');
    assert.ok(await link.isHidden(), 'orthodox chess has no rules page');
    await page.selectOption('select[name=variant]', 'twinmove');
    await Promise.all([page.waitForURL(/\/variant\/twinmove$/), link.click()]);
    await page.getByRole('heading', { level: 1, name: 'Twinmove Chess: the rules' }).waitFor();
    await page.close();
  });
}

test(`the game page's "Rules" link leads to its variant's page`, async () => {
  const r = await fetch(server.base + '/api/games', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ variant: 'double-move', opponent: 'engine', level: 1, color: 'white' }),
  });
  const { id } = await r.json();
  const page = await open(`/game/${id}`);
  const link = page.locator('#game-rules');
  await link.waitFor();
  assert.equal(await link.textContent(), 'Rules');
  await Promise.all([page.waitForURL(/\/variant\/double-move$/), link.click()]);
  await page.getByRole('heading', { level: 1, name: 'Double Move Chess: the rules' }).waitFor();
  await page.close();
});

test('/variant lists the three rules pages', async () => {
  const page = await open('/variant');
  await page.getByRole('heading', { level: 1, name: 'Rules of the variants' }).waitFor();
  const hrefs = await page.locator('.rules-page li a').evaluateAll(as => as.map(a => a.getAttribute('href')));
  assert.deepEqual(hrefs, Object.keys(PAGES).map(v => `/variant/${v}`));
  await page.close();
});

test('no page errors', () => assert.deepEqual(errors, []));
