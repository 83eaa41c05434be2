// The game page of issue 11 ("Seeing the game", the turn's rule in the status line, sounds): at 1280×860,
// and at 390×844 where the layout matters. Games are made through the API; the page takes a seat with the
// `#token=…` link, the opponent plays through the API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoose, DESKTOP as DESK, SIZES, move, waitGame } from './helpers.mjs';

let env;
const errors = [];
before(async () => {
  env = await startLoose();
});
after(async () => {
  await env?.stop();
  assert.deepEqual(errors, [], 'no page errors');
});

const call = (...a) => env.call(...a);
/** A started person-vs-person game: [white seat, black seat]. */
async function startedGame(variant, fen = null, clock = { limit: 600, increment: 5 }) {
  const a = await call('POST', '/api/games', { variant, fen, opponent: 'human', color: 'white', clock });
  const b = await call('POST', `/api/games/${a.id}/join`, { invite: a.invite });
  return [a, b];
}
const play = (seat, body) => call('POST', `/api/games/${seat.id}/move`, body, seat.token);
/** The page in a seat (the private `#token=` link); `init` runs in the page before its own scripts. */
async function seatPage(seat, viewport = DESK, init = null) {
  const page = await env.page(viewport, errors);
  if (init) await page.addInitScript(init);
  await page.goto(`${env.base}/game/${seat.id}#token=${encodeURIComponent(seat.token)}`);
  await waitGame(page, g => g.you === seat.color, 'the seat');
  return page;
}
const rule = page => page.textContent('#turn-rule');
const shown = page => page.evaluate(() => window.__boardFen());
const count = (page, sel) => page.locator(sel).count();
/**
 * Board squares with a class that chessground shows (it hides the ones it no longer needs). Chessground
 * draws on an animation frame after the state arrives, so this waits up to 3 s for `expected` squares
 * and returns the count it sees then (the caller asserts it).
 */
async function marked(page, cls, expected) {
  const now = () => page.evaluate(c => [...document.querySelectorAll(`cg-board square.${c}`)].filter(s => s.style.display !== 'none').length, cls);
  const end = Date.now() + 3000;
  let n = await now();
  while (n !== expected && Date.now() < end) {
    await page.waitForTimeout(50);
    n = await now();
  }
  return n;
}
/**
 * Runs in the page before its own scripts: every WebAudio tone started goes into `window.__tones` as
 * `{tone: "<wave> <Hz>", audible, clock}` — audible when a chain of connections with a gain above zero
 * leads to the speakers (the context's destination), clock the player's clock as shown then — and the
 * page's AudioContext is kept in `window.__audio`.
 */
function listenToSounds() {
  const tones = (window.__tones = []);
  const AC = window.AudioContext;
  window.AudioContext = class extends AC {
    constructor(...a) {
      super(...a);
      window.__audio = this;
    }
  };
  const connect = AudioNode.prototype.connect;
  AudioNode.prototype.connect = function (to, ...rest) {
    (this.__to ??= []).push(to);
    return connect.call(this, to, ...rest);
  };
  const setValueAtTime = AudioParam.prototype.setValueAtTime;
  AudioParam.prototype.setValueAtTime = function (v, ...rest) {
    this.__peak = Math.max(this.__peak ?? 0, v);
    return setValueAtTime.call(this, v, ...rest);
  };
  const start = OscillatorNode.prototype.start;
  OscillatorNode.prototype.start = function (...a) {
    const dest = this.context.destination;
    const loud = n => !(n instanceof GainNode) || (n.gain.__peak ?? n.gain.value) > 0;
    const reaches = (n, depth) => n === dest || (depth < 6 && loud(n) && (n.__to ?? []).some(m => reaches(m, depth + 1)));
    tones.push({ tone: `${this.type} ${Math.round(this.frequency.value)}`, audible: reaches(this, 0), clock: document.querySelector('#clock-bottom .time')?.textContent ?? '' });
    return start.apply(this, a);
  };
}
/** The tones of each sound (sound.ts), as `listenToSounds` writes them. */
const TONES = {
  move: ['triangle 520'],
  capture: ['square 330', 'square 220'],
  check: ['sawtooth 880', 'sawtooth 660'],
  end: ['sine 523', 'sine 659', 'sine 784'],
  'low-time': ['square 1000', 'square 1000'],
};
/**
 * Expects the page to play `name` next: waits until its tones are heard and checks that everything
 * heard so far is exactly `heard` plus these, all audible. Returns the tones.
 */
async function hear(page, heard, name) {
  heard.push(...TONES[name]);
  await page.waitForFunction(n => window.__tones.length >= n, heard.length).catch(async e => {
    throw new Error(`${e.message}: waiting for the ${name} sound; heard ${JSON.stringify(await page.evaluate(() => window.__tones.map(t => t.tone)))}`);
  });
  const tones = await page.evaluate(() => window.__tones);
  assert.deepEqual(tones.map(t => t.tone), heard, `the ${name} sound (and nothing else) was played`);
  assert.ok(tones.every(t => t.audible), `every tone reaches the speakers: ${JSON.stringify(tones)}`);
  return tones;
}
/** Seconds shown by a clock ("0:09.4", "1:05"). */
const clockSeconds = text => text.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
async function screenshot(page, name) {
  const dir = join(tmpdir(), 'dm-ui-game-page');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), fullPage: true });
}

// Every item at both sizes of issue 11.
for (const [tag, vp] of SIZES) {
  test(`status line: what a Two Move turn allows (turn start, response after a check) (${tag})`, async () => {
    const [w, b] = await startedGame('two-move');
    const page = await seatPage(w, vp);
    assert.match(await page.textContent('#status'), /your response move/i);
    assert.match(await rule(page), /White's first turn is a single move/);
    await move(page, 'e2e4');
    await waitGame(page, g => g.turn === 'black', 'e4');
    assert.match(await page.title(), /^Black to move — /);
    await play(b, { turn: 'g8f6,b8c6' });
    await waitGame(page, g => g.turn === 'white' && g.phase === 'start', 'the two-move turn');
    assert.equal(await rule(page), '2 moves — a check, capture, promotion or en-passant chance ends it after one');
    assert.match(await page.title(), /^● Your turn/);
    await page.close();

    // Black checks with one move (a single move turn): White has one response move.
    const [w2, b2] = await startedGame('two-move', '4k3/8/8/8/8/r7/8/4K2R b K - 0 1 T');
    const p2 = await seatPage(w2, vp);
    await play(b2, { move: 'a3e3' });
    await waitGame(p2, g => g.turn === 'white' && g.phase === 'response' && g.check, 'the check');
    assert.equal(await rule(p2), 'You were checked: one response move');
    assert.equal(await marked(p2, 'check', 1), 1, 'the king in check is marked');
    await p2.close();
  });

  test(`status line and check in Double Move Chess: armed Double Move, check between the halves (${tag})`, async () => {
    const [w, b] = await startedGame('double-move');
    const page = await seatPage(w, vp);
    assert.match(await rule(page), /One move — or arm your Double Move/);
    await move(page, 'e2e4');
    await waitGame(page, g => g.turn === 'black', 'e4');
    await play(b, { move: 'f7f6' });
    await waitGame(page, g => g.turn === 'white', 'f6');
    await page.click('#double-toggle');
    assert.equal(await rule(page), 'Double Move armed: this move and one more');
    await move(page, 'd1h5');
    const g = await waitGame(page, g => g.phase === 'second', 'the first half (Qh5+)');
    assert.equal(g.check, false, 'the state says only the side to move is not in check');
    assert.match(await page.textContent('#status'), /Double Move: second half/);
    // Black's king is in check between the halves: marked from the SAN's "+".
    assert.equal(await marked(page, 'check', 1), 1, 'the checked king is marked between the halves');
    await screenshot(page, `double-move-check-between-halves-${tag}.png`);
    await page.close();
  });

  test(`Twinmove status and both moves of the last turn highlighted (${tag})`, async () => {
    const [w, b] = await startedGame('twinmove');
    const page = await seatPage(w, vp);
    assert.equal(await rule(page), 'A piece move, or a pawn move then a piece move');
    await move(page, 'e2e4');
    await waitGame(page, g => g.phase === 'second', 'the pawn half');
    assert.equal(await rule(page), 'Pawn moved: now a piece move');
    await move(page, 'g1f3');
    await waitGame(page, g => g.turn === 'black', 'the piece half');
    // White's own turn: both halves highlighted (the first in its own style).
    assert.equal(await marked(page, 'first-half', 2), 2, 'the first half: e2 and e4');
    assert.equal(await marked(page, 'last-move', 2), 2, 'the second half: g1 and f3');
    await play(b, { turn: 'e7e5,g8f6' });
    await waitGame(page, g => g.turn === 'white' && g.moves.length === 4, 'the opponent turn');
    assert.equal(await marked(page, 'first-half', 2), 2, "the opponent's first half: e7 and e5");
    assert.equal(await marked(page, 'last-move', 2), 2, "the opponent's second half: g8 and f6");
    const colours = await page.evaluate(() => [...document.querySelectorAll('cg-board square.first-half, cg-board square.last-move')].filter(s => s.style.display !== 'none').map(s => getComputedStyle(s).backgroundColor));
    assert.ok(new Set(colours).size >= 2, `the first half has its own colour (${colours})`);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= vp.width, `no horizontal scrolling (${width})`);
    await screenshot(page, `twinmove-last-turn-${tag}.png`);
    await page.close();
  });

  test(`move list: click a move to view it, ←/→/Home/End, back to the game, flip (${tag})`, async () => {
    const [w, b] = await startedGame('chess');
    const page = await seatPage(w, vp);
    const live0 = await shown(page);
    for (const [side, mv] of [[w, 'e2e4'], [b, 'e7e5'], [w, 'g1f3'], [b, 'b8c6']]) await play(side, { move: mv });
    const g = await waitGame(page, g => g.moves.length === 4, 'four moves');
    const live = await shown(page);
    assert.equal(live, g.fen.split(' ')[0]);
    await page.click('#moves .mturn >> nth=0'); // 1.e4
    await page.waitForSelector('#history-bar:not([hidden])');
    assert.equal(await shown(page), 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR');
    assert.match(await page.textContent('#history-where'), /move 1 of 4/);
    assert.equal(await count(page, '#moves .mturn.current'), 1);
    // read-only while viewing: a click on a piece does not move it
    await move(page, 'd2d4');
    await page.waitForTimeout(300);
    assert.equal((await waitGame(page, () => true, 'state')).moves.length, 4, 'no move from the history view');
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => window.__boardFen() === 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(f => window.__boardFen() === f, live0);
    await page.keyboard.press('End');
    await page.waitForSelector('#history-bar', { state: 'hidden' });
    assert.equal(await shown(page), live);
    await page.keyboard.press('Home');
    await page.waitForFunction(f => window.__boardFen() === f, live0);
    await page.click('#back-to-game');
    await page.waitForSelector('#history-bar', { state: 'hidden' });
    assert.equal(await shown(page), live);
    assert.equal(await count(page, '.cg-wrap.orientation-white'), 1);
    assert.equal(await page.textContent('#clock-bottom .who'), 'White (you)');
    await page.click('#flip');
    assert.equal(await count(page, '.cg-wrap.orientation-black'), 1, 'flipped');
    assert.match(await page.textContent('#clock-bottom .who'), /Black/);
    await page.click('#nav-prev');
    await page.waitForSelector('#history-bar:not([hidden])');
    await screenshot(page, `history-flipped-${tag}.png`);
    await page.close();
  });

  test(`game over after resigning: result in words, Rematch, New game, Analyse, title (${tag})`, async () => {
    const [w, b] = await startedGame('two-move');
    const page = await seatPage(b, vp);
    await play(w, { move: 'e2e4' });
    await waitGame(page, g => g.turn === 'black', 'e4');
    await page.click('#resign');
    await page.click('#resign');
    await waitGame(page, g => g.status === 'finished', 'the resignation');
    assert.equal(await page.textContent('#result-line'), 'White wins — Black resigned');
    assert.match(await page.textContent('#status'), /Game over — Lost by resignation/);
    assert.equal(await count(page, '#game-over #rematch'), 1);
    assert.equal(await page.getAttribute('#game-over #new-game', 'href'), '/#new-game');
    assert.equal(await page.getAttribute('#game-over #analyse', 'href'), `/analysis?game=${b.id}`);
    assert.match(await page.title(), /^White wins — Black resigned — /);
    for (const sel of ['#rematch', '#new-game', '#analyse']) {
      const box = await page.locator(sel).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= vp.width, `${sel} on screen`);
    }
    await screenshot(page, `game-over-${tag}.png`);
    await page.click('#new-game');
    await page.waitForSelector('#new-game form, #new-game select[name=variant]');
    await page.close();
  });

  test(`sounds through WebAudio: move, capture, check, end (${tag})`, async () => {
    const [w, b] = await startedGame('chess');
    const page = await seatPage(w, vp, listenToSounds);
    assert.equal(await page.getAttribute('#sound-toggle', 'aria-pressed'), 'true', 'sound is on by default');
    const heard = [];
    await move(page, 'e2e4'); // the player's own move (a click: from now on the page may play audio)
    await hear(page, heard, 'move');
    await page.waitForFunction(() => window.__audio?.state === 'running');
    await play(b, { move: 'd7d5' });
    await hear(page, heard, 'move');
    await move(page, 'e4d5');
    await hear(page, heard, 'capture');
    await play(b, { move: 'd8d5' });
    await hear(page, heard, 'capture');
    await move(page, 'b1c3');
    await hear(page, heard, 'move');
    await play(b, { move: 'd5e5' }); // Qe5+ checks the player
    await hear(page, heard, 'check');
    await move(page, 'f1e2');
    await hear(page, heard, 'move');
    await call('POST', `/api/games/${b.id}/resign`, undefined, b.token);
    await hear(page, heard, 'end');
    await page.close();
  });

  test(`sounds: a low-time warning once as the player's own clock passes 10 s (${tag})`, async () => {
    const [w, b] = await startedGame('chess', null, { limit: 12, increment: 0 });
    const page = await seatPage(w, vp, listenToSounds);
    const heard = [];
    await move(page, 'e2e4');
    await hear(page, heard, 'move');
    // Black's first turn; then White's clock runs from 12 s (each clock starts after its side's first turn).
    await play(b, { move: 'e7e5' });
    await hear(page, heard, 'move');
    const tones = await hear(page, heard, 'low-time');
    const at = clockSeconds(tones.at(-1).clock);
    assert.ok(at < 10 && at > 8, `the warning came as the clock passed 10 s (it showed ${tones.at(-1).clock})`);
    // once: not again while the clock runs on below 10 s
    await page.waitForFunction(() => Number(document.querySelector('#clock-bottom .time').textContent.split(':')[1]) < 8.5);
    assert.equal(await page.evaluate(() => window.__tones.length), heard.length, 'one warning');
    // the opponent's clock running low is not warned about
    await move(page, 'g1f3');
    await hear(page, heard, 'move');
    await page.waitForFunction(() => Number(document.querySelector('#clock-top .time').textContent.split(':')[1]) < 9.5);
    await play(b, { move: 'b8c6' });
    await hear(page, heard, 'move');
    await call('POST', `/api/games/${b.id}/resign`, undefined, b.token);
    await hear(page, heard, 'end');
    await page.close();
  });

  test(`sounds: the mute switch silences every sound, low time included, and is remembered (${tag})`, async () => {
    const [w, b] = await startedGame('chess', null, { limit: 15, increment: 0 });
    const page = await seatPage(w, vp, listenToSounds);
    try {
      await page.click('#sound-toggle');
      assert.equal(await page.getAttribute('#sound-toggle', 'aria-pressed'), 'false');
      assert.match(await page.textContent('#sound-toggle'), /off/i);
      assert.equal(await page.evaluate(() => localStorage.getItem('doublemove.sound')), 'off');
      await page.reload();
      await waitGame(page, g => g.you === 'white', 'the reload');
      assert.match(await page.textContent('#sound-toggle'), /off/i, 'muted after a reload');
      // The same events as above, and the low-time warning: the page notices each (its own list of the
      // sounds it would play), and not one tone is started.
      const events = async (n, what) => {
        await page.waitForFunction(k => (window.__sounds ?? []).length >= k, n);
        assert.deepEqual(await page.evaluate(() => window.__sounds.map(s => s.name)), what);
      };
      await move(page, 'e2e4');
      await events(1, ['move']);
      await play(b, { move: 'd7d5' });
      await events(2, ['move', 'move']);
      await move(page, 'e4d5');
      await events(3, ['move', 'move', 'capture']);
      await play(b, { move: 'd8d5' });
      await events(4, ['move', 'move', 'capture', 'capture']);
      await move(page, 'b1c3');
      await events(5, ['move', 'move', 'capture', 'capture', 'move']);
      await play(b, { move: 'd5e5' });
      await events(6, ['move', 'move', 'capture', 'capture', 'move', 'check']);
      await events(7, ['move', 'move', 'capture', 'capture', 'move', 'check', 'low-time']);
      await call('POST', `/api/games/${b.id}/resign`, undefined, b.token);
      await events(8, ['move', 'move', 'capture', 'capture', 'move', 'check', 'low-time', 'end']);
      assert.ok(await page.evaluate(() => window.__sounds.every(s => s.muted)));
      assert.deepEqual(await page.evaluate(() => window.__tones), [], 'no tone while muted');
      await page.click('#sound-toggle');
      assert.equal(await page.getAttribute('#sound-toggle', 'aria-pressed'), 'true');
      assert.equal(await page.evaluate(() => localStorage.getItem('doublemove.sound')), 'on');
    } finally {
      // the setting is the browser's: back on for the other tests
      await page.evaluate(() => localStorage.setItem('doublemove.sound', 'on'));
      await page.close();
    }
  });

  test(`Twinmove: the risky-move question with the keyboard alone — focus inside, Tab cycles, Escape and Cancel keep the position, Enter on Play plays (${tag})`, async () => {
    const [w, b] = await startedGame('twinmove');
    await play(w, { turn: 'f2f3,g1h3' });
    await play(b, { turn: 'e7e5,d8h4' }); // the queen attacks White's king through f2
    const page = await seatPage(w, vp);
    await waitGame(page, g => g.turn === 'white' && g.moves.length === 4, 'White to move');
    const before = await shown(page);
    const dialog = page.locator('#confirm-risky');
    /** What has the focus: the dialog's element, or where it is outside. */
    const focus = () => page.evaluate(() => {
      const a = document.activeElement;
      const d = document.querySelector('#confirm-risky');
      return { inDialog: !!d && d.contains(a), id: a?.id ?? '', tag: a?.tagName ?? '', cls: a?.className ?? '' };
    });
    const ask = async () => {
      await move(page, 'b1c3'); // the move itself is made on the board (with the mouse or a finger)
      await dialog.waitFor();
      assert.equal(await page.evaluate(() => document.querySelector('#confirm-risky').matches(':modal')), true, 'a modal dialog');
      const f = await focus();
      assert.ok(f.inDialog, `the focus is inside the dialog: ${JSON.stringify(f)}`);
      assert.equal(f.id, 'confirm-risky-cancel', 'the safe answer has the focus');
    };
    const backOnBoard = async what => {
      await dialog.waitFor({ state: 'detached' });
      const f = await focus();
      assert.match(f.cls, /cg-board-wrap/, `${what}: the focus returns to the board (${JSON.stringify(f)})`);
    };
    const movesOnServer = async () => (await call('GET', `/api/games/${w.id}`)).moves.length;

    // Escape: nothing played, the piece back on b1.
    await ask();
    await page.keyboard.press('Escape');
    await backOnBoard('Escape');
    assert.equal(await shown(page), before, 'the position is kept');
    assert.equal(await movesOnServer(), 4, 'nothing was played');

    // Tab and Shift+Tab go round the dialog's two buttons, never out of it; Enter on Cancel keeps the position.
    await ask();
    const seen = [];
    for (const key of ['Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab', 'Shift+Tab']) {
      await page.keyboard.press(key);
      const f = await focus();
      assert.ok(f.inDialog, `after ${key} the focus is still inside the dialog: ${JSON.stringify(f)}`);
      seen.push(f.id);
    }
    await screenshot(page, `risky-move-question-${tag}.png`);
    assert.deepEqual(seen, ['confirm-risky-play', 'confirm-risky-cancel', 'confirm-risky-play', 'confirm-risky-cancel', 'confirm-risky-play', 'confirm-risky-cancel']);
    assert.equal((await focus()).id, 'confirm-risky-cancel');
    await page.keyboard.press('Enter');
    await backOnBoard('Cancel');
    assert.equal(await shown(page), before, 'the position is kept');
    assert.equal(await movesOnServer(), 4, 'nothing was played');

    // Tab to "Play it" and Enter: the move is played.
    await ask();
    await page.keyboard.press('Tab');
    assert.equal((await focus()).id, 'confirm-risky-play');
    await page.keyboard.press('Enter');
    await backOnBoard('Play it');
    const g = await waitGame(page, g => g.moves.length === 5, 'Nc3 played');
    assert.equal(g.moves[4], 'b1c3');
    assert.equal(g.turn, 'black');
    // the keyboard still works on the page: ← shows the position before Nc3
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction(f => window.__boardFen() === f, before);
    await page.close();
  });
}

test("game over in words: a captured king (never the code king_captured)", async () => {
  const [w] = await startedGame('twinmove', '4k3/8/8/8/8/8/8/4R1K1 w - - 0 1 T');
  const page = await seatPage(w);
  await move(page, 'e1e8');
  await waitGame(page, g => g.status === 'finished', 'the king capture');
  assert.equal(await page.textContent('#result-line'), "White wins — Black's king was captured");
  assert.doesNotMatch(await page.textContent('.side-col'), /king_captured/);
  await page.close();
});

test('the move list explains its turn marks for the variant (none in orthodox chess)', async () => {
  const want = { 'two-move': ['¹', 'ʳ', 'response move'], 'double-move': ['²', 'Double Move'], twinmove: ['²', 'a pawn move, then a piece move'] };
  for (const [variant, parts] of Object.entries(want)) {
    const [seat] = await startedGame(variant);
    const page = await seatPage(seat);
    const legend = page.locator('#mark-legend');
    await legend.waitFor();
    const text = await legend.textContent();
    for (const p of parts) assert.ok(text.includes(p), `${variant}: ${text}`);
    await page.close();
  }
  const page = await seatPage((await startedGame('chess'))[0]);
  await page.locator('#turn-rule, .status').first().waitFor();
  assert.equal(await page.locator('#mark-legend').count(), 0);
  await page.close();
});

test('Twinmove: a move that leaves the king capturable asks first; the question can be switched off', async () => {
  const [w, b] = await startedGame('twinmove');
  await play(w, { turn: 'f2f3,g1h3' });
  await play(b, { turn: 'e7e5,d8h4' }); // the queen now attacks White's king through f2
  const page = await seatPage(w);
  await waitGame(page, g => g.turn === 'white' && g.moves.length === 4, 'White to move');
  // Nc3 ignores the attack: the page asks, and "Choose another move" sends nothing.
  await move(page, 'b1c3');
  const dialog = page.locator('#confirm-risky');
  await dialog.waitFor();
  assert.match(await dialog.textContent(), /Nc3 leaves your king capturable/);
  await page.click('#confirm-risky-cancel');
  await dialog.waitFor({ state: 'detached' });
  const state = await call('GET', `/api/games/${w.id}`);
  assert.equal(state.moves.length, 4, 'nothing was played');
  // A move that shields the king (g3, then a piece move) is not questioned.
  await move(page, 'g2g3');
  await waitGame(page, g => g.moves.length === 5, 'the pawn half played');
  assert.equal(await page.locator('#confirm-risky').count(), 0);
  // Switched off (remembered), a risky move goes straight through.
  await page.click('#risky-toggle');
  assert.equal(await page.evaluate(() => localStorage.getItem('doublemove.confirmRisky')), 'off');
  await page.reload();
  await waitGame(page, g => g.moves.length === 5, 'reloaded');
  assert.match(await page.textContent('#risky-toggle'), /off/);
  await page.close();
});
