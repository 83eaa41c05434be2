// Players: two browsers sign up, a seek in the lobby accepted live, a rated game with chat, resignation,
// ratings on the player pages, rematch with colours swapped, a correspondence game across a server
// restart, a device link for an anonymous seat, and phone-sized lobby and player pages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, startBrowser, move, waitGame, screenshot } from './helpers.mjs';

const VIEW = { width: 1280, height: 860 };
let server, A, B;
const errors = [];
before(async () => {
  // Every browser here is the same client to the server (127.0.0.1): a larger request burst than one
  // person's default, or two lobbies opening at once meet the per-client limit (429).
  server = await startServer({ args: ['--request-burst', '1000'] });
  A = await startBrowser({ viewport: VIEW });
  B = await startBrowser({ viewport: VIEW });
});
after(async () => {
  await A?.close();
  await B?.close();
  await server?.stop();
});

async function open(ctx, path) {
  const page = await ctx.newPage();
  page.on('pageerror', e => errors.push(e.message));
  await page.goto(server.base + path);
  return page;
}
async function signup(ctx, name) {
  const page = await open(ctx, '/signup');
  await page.fill('#username', name);
  await page.fill('#password', 'secret-' + name);
  await Promise.all([page.waitForURL(server.base + '/'), page.click('#auth-submit')]);
  await page.waitForSelector(`#me-link:text("${name}")`);
  return page;
}
const gameId = page => new URL(page.url()).pathname.split('/').pop();
/** Creates a seek from the lobby's form; the other page sees it live and accepts; both land on the game. */
async function seekAndAccept(seeker, taker, { variant, tc, days, color }) {
  await seeker.selectOption('#create-seek select[name=variant]', variant);
  await seeker.selectOption('#create-seek select[name=tc]', tc);
  if (days) await seeker.selectOption('#create-seek select[name=days]', String(days));
  await seeker.selectOption('#create-seek select[name=color]', color);
  await seeker.click('#create-seek-btn');
  await seeker.waitForSelector('#lobby-seeks tr.seek.own');
  const row = taker.locator('#lobby-seeks tr.seek[data-user=alice]');
  await row.waitFor();
  return row;
}
const rating = page => page.textContent('#perfs tr[data-variant=chess] td.rating');

test('sign up, a live seek, a rated game with chat, ratings, rematch', async () => {
  const a = await signup(A.ctx, 'alice');
  const b = await signup(B.ctx, 'bob');
  assert.equal(await a.locator('#signout').count(), 1);

  // the server's error text on a taken name (case-insensitive) and a wrong password
  const dup = await open(B.ctx, '/signup');
  await dup.fill('#username', 'ALICE');
  await dup.fill('#password', 'whatever1');
  await dup.click('#auth-submit');
  await dup.waitForFunction(() => document.querySelector('#auth-error')?.textContent.trim().length > 0);
  assert.match(await dup.textContent('#auth-error'), /taken|exists|already/i);
  await dup.goto(server.base + '/login');
  await dup.fill('#username', 'alice');
  await dup.fill('#password', 'wrong-password');
  await dup.click('#auth-submit');
  await dup.waitForFunction(() => document.querySelector('#auth-error')?.textContent.trim().length > 0);
  await dup.close();

  // alice seeks, bob sees it live (his lobby was already open) and accepts it
  const row = await seekAndAccept(a, b, { variant: 'chess', tc: '600+5', color: 'white' });
  assert.match(await row.textContent(), /1500\?/);
  assert.match(await row.textContent(), /Rated/);
  await screenshot(b, 'lobby-seeks.png');
  await Promise.all([a.waitForURL(/\/game\//), b.waitForURL(/\/game\//), row.locator('td').nth(2).click()]);
  assert.equal(gameId(a), gameId(b));
  let g = await waitGame(a, g => g.status === 'started' && g.you === 'white', 'alice to play white');
  await waitGame(b, g => g.status === 'started' && g.you === 'black', 'bob to play black');
  assert.equal(g.rated, true);
  assert.equal(g.players.white.username, 'alice');
  const head = await a.textContent('#game-title');
  assert.match(head, /alice/);
  assert.match(head, /bob/);
  assert.match(head, /1500\?/);
  assert.match(head, /Rated/);
  assert.equal(await a.getAttribute('#game-title a[href="/@/bob"]', 'href'), '/@/bob');

  // a few moves; the tab title says whose turn it is
  await a.waitForFunction(() => document.title.startsWith('● Your turn'));
  await move(a, 'e2e4');
  await waitGame(b, g => g.moves.length === 1, 'e4 at bob');
  await b.waitForFunction(() => document.title.startsWith('● Your turn'));
  assert.ok(!(await a.title()).startsWith('●'));
  await move(b, 'e7e5', 'black');
  await waitGame(a, g => g.moves.length === 2, 'e5 at alice');
  await move(a, 'g1f3');
  await waitGame(b, g => g.moves.length === 3, 'Nf3 at bob');
  await move(b, 'b8c6', 'black');
  await waitGame(a, g => g.moves.length === 4, 'Nc6 at alice');

  // chat: plain text only, a counter, both players see both lines
  await a.fill('#chat-input', '<b>x</b>');
  assert.equal(await a.textContent('#chat-count'), '8/140');
  await a.press('#chat-input', 'Enter');
  await b.waitForSelector('#chat-lines .chat-text:text("<b>x</b>")');
  assert.equal(await b.locator('#chat-lines b').count(), 0, 'chat text is not HTML');
  await b.fill('#chat-input', 'good luck!');
  await b.press('#chat-input', 'Enter');
  await a.waitForSelector('#chat-lines .chat-text:text("good luck!")');
  assert.match(await a.textContent('#chat-lines'), /alice.*<b>x<\/b>/s);
  await screenshot(a, 'game-chat.png');
  // the chat switch is remembered
  await b.uncheck('#chat-toggle');
  await b.reload();
  await waitGame(b, g => g.moves.length === 4, 'the game after reload');
  assert.equal(await b.isVisible('#chat-lines'), false);
  await b.check('#chat-toggle');
  assert.equal(await b.isVisible('#chat-lines'), true);

  // an anonymous spectator reads the spectators' room only, and may not write in a rated game
  const spectator = await startBrowser({ viewport: VIEW });
  try {
    const sp = await spectator.ctx.newPage();
    await sp.goto(`${server.base}/game/${gameId(a)}`);
    await waitGame(sp, g => g.moves.length === 4, 'the game at the spectator');
    await sp.waitForSelector('#watching');
    await sp.waitForSelector('#chat-lines .muted:text("No messages yet.")');
    assert.equal(await sp.locator('#chat-lines .chat-text').count(), 0, 'the players\' room is private');
    assert.equal(await sp.isDisabled('#chat-input'), true);
    assert.equal(await sp.locator('#resign').count(), 0);
  } finally {
    await spectator.close();
  }

  // alice resigns; the rating changes show on the game page
  await a.click('#resign');
  await a.click('#resign');
  g = await waitGame(a, g => g.status === 'finished' && g.players?.white?.rating_diff != null, 'the rated result');
  assert.equal(g.winner, 'black');
  assert.ok(g.players.white.rating_diff < 0 && g.players.black.rating_diff > 0);
  await a.waitForSelector('#game-title .rdiff.down');
  assert.match(await a.textContent('#result-words'), /Lost by resignation/);
  await waitGame(b, g => g.status === 'finished', 'the result at bob');
  assert.match(await b.textContent('#result-words'), /Won by resignation/);
  const firstGame = gameId(a);

  // both player pages show the new provisional ratings
  for (const [ctx, name] of [[A.ctx, 'alice'], [B.ctx, 'bob']]) {
    const p = await open(ctx, `/@/${name}`);
    await p.waitForSelector('#perfs tr[data-variant=chess]');
    const r = await rating(p);
    assert.match(r, /^\d+\?$/, `${name}: provisional rating`);
    assert.notEqual(r, '1500?', `${name}: rating changed`);
    await p.waitForSelector('#user-games tr[data-id]');
    assert.match(await p.textContent('#user-games tbody'), name === 'alice' ? /Lost by resignation/ : /Won by resignation/);
    await p.waitForSelector('#rating-history svg.rating-graph');
    assert.equal(await p.getAttribute('#pgn-all', 'href'), `/api/games/user/${name}`);
    if (name === 'alice') {
      assert.equal(await p.locator('#challenge-open').count(), 0, 'no challenge button on your own page');
      await p.waitForSelector('#your-turn');
      await screenshot(p, 'player.png');
    }
    await p.close();
  }
  // bob's page seen by alice has a challenge button
  const pb = await open(A.ctx, '/@/bob');
  await pb.waitForSelector('#challenge-open');
  await pb.close();

  // rematch: alice offers, bob accepts, both follow with colours swapped
  await a.click('#rematch');
  await a.waitForSelector('#rematch-offered');
  await b.waitForSelector('#rematch-accept');
  await Promise.all([a.waitForURL(u => !u.pathname.endsWith(firstGame)), b.waitForURL(u => !u.pathname.endsWith(firstGame)), b.click('#rematch-accept')]);
  assert.equal(gameId(a), gameId(b));
  await waitGame(a, g => g.status === 'started' && g.you === 'black', 'alice plays black in the rematch');
  await waitGame(b, g => g.status === 'started' && g.you === 'white', 'bob plays white in the rematch');
  await a.close();
  await b.close();
  assert.deepEqual(errors, []);
});

test('challenges from a player page: declined with a reason, then accepted', async () => {
  const b = await open(B.ctx, '/');
  await b.waitForSelector('#challenges');
  const a = await open(A.ctx, '/@/bob');
  const send = async () => {
    await a.click('#challenge-open');
    await a.selectOption('#challenge select[name=variant]', 'twinmove');
    await a.selectOption('#challenge select[name=tc]', '300+3');
    await a.uncheck('#challenge input[name=rated]');
    await a.click('#challenge-send');
    await a.waitForSelector('#challenge-sent');
  };
  await send();
  const row = b.locator('#challenges .challenge.in');
  await row.waitFor();
  assert.match(await row.textContent(), /alice challenges you: Twinmove Chess · 5\+3 · casual/);
  await row.locator('select[name=decline-reason]').selectOption('later');
  await row.locator('.challenge-decline').click();
  await a.waitForSelector('#challenge-declined');
  assert.match(await a.textContent('#challenge-declined'), /bob declined the challenge: “Not now, later”/);
  await b.waitForSelector('#challenges .challenge.in', { state: 'detached' });
  await a.reload();
  await send();
  await b.locator('#challenges .challenge.in').waitFor();
  await Promise.all([a.waitForURL(/\/game\//), b.waitForURL(/\/game\//), b.click('#challenges .challenge-accept')]);
  assert.equal(gameId(a), gameId(b));
  const g = await waitGame(a, g => g.status === 'started', 'the challenge game');
  assert.equal(g.variant, 'twinmove');
  assert.equal(g.rated, false);
  assert.match(await a.textContent('#game-mode'), /Casual · 5\+3/);
  await a.close();
  await b.close();
  assert.deepEqual(errors, []);
});

test('quick pairing: the second player takes the first one\'s seek', async () => {
  const b = await open(B.ctx, '/');
  const a = await open(A.ctx, '/');
  await b.waitForSelector('#create-seek form');
  await b.selectOption('#quick-pairing select', 'chess');
  await b.click('#quick-5-3');
  await b.waitForSelector('#quick-error.ok');
  await a.waitForSelector('#lobby-seeks tr.seek[data-user=bob]');
  await a.selectOption('#quick-pairing select', 'chess');
  await Promise.all([a.waitForURL(/\/game\//), b.waitForURL(/\/game\//), a.click('#quick-5-3')]);
  assert.equal(gameId(a), gameId(b));
  const g = await waitGame(a, g => g.status === 'started', 'the quick game');
  assert.equal(g.rated, true);
  assert.deepEqual(g.clock && [g.clock.limit_ms, g.clock.increment_ms], [300000, 3000]);
  // abort it (nobody moved) so that it does not count
  await waitGame(b, g => g.status === 'started', 'the quick game at bob');
  const me = (await waitGame(a, g => !!g.you, 'alice\'s seat')).you;
  const first = me === 'white' ? a : b;
  await first.click('#abort');
  await waitGame(a, g => g.status === 'aborted', 'the abort');
  await a.close();
  await b.close();
  assert.deepEqual(errors, []);
});

test('a correspondence game goes on after a server restart', async () => {
  const a = await open(A.ctx, '/');
  const b = await open(B.ctx, '/');
  await a.waitForSelector('#create-seek form');
  await b.waitForSelector('#lobby-seeks');
  const row = await seekAndAccept(a, b, { variant: 'double-move', tc: 'days', days: 3, color: 'white' });
  assert.match(await row.textContent(), /3 days/);
  await Promise.all([a.waitForURL(/\/game\//), b.waitForURL(/\/game\//), row.locator('td').nth(2).click()]);
  let g = await waitGame(a, g => g.status === 'started' && g.you === 'white', 'the correspondence game');
  assert.equal(g.days, 3);
  assert.ok(g.deadline_ms > Date.now());
  assert.match(await a.textContent('#game-mode'), /3 days per move/);
  assert.match(await a.textContent('#clock-bottom .time'), /days? \d+ h/);
  await move(a, 'e2e4');
  await waitGame(b, g => g.moves.length === 1, 'e4 at bob');
  const id = gameId(a);

  // alice's lobby lists the game under "Your turn" as waiting, bob's as his turn
  const lb = await open(B.ctx, '/');
  await lb.waitForSelector(`#your-turn li.my-turn[data-id="${id}"]`);
  await lb.close();

  await server.restart();
  await a.reload();
  await b.reload();
  g = await waitGame(b, g => g.status === 'started' && g.you === 'black' && g.moves.length === 1, 'the game after the restart');
  await move(b, 'e7e5', 'black');
  await waitGame(a, g => g.moves.length === 2 && g.turn === 'white', 'e5 at alice after the restart');
  await a.close();
  await b.close();
  assert.deepEqual(errors, []);
});

test('an anonymous seat continues on another device through its #token= link', async () => {
  const anon = await startBrowser({ viewport: VIEW });
  try {
    const page = await anon.ctx.newPage();
    await page.goto(server.base + '/');
    await page.selectOption('#new-game select[name=opponent]', 'engine');
    await page.selectOption('#new-game select[name=color]', 'white');
    await Promise.all([page.waitForURL(/\/game\//), page.click('#create-game')]);
    await waitGame(page, g => g.status === 'started', 'the engine game');
    await page.click('#other-device summary');
    const url = await page.inputValue('#device-url');
    assert.match(url, /#token=/);
    const other = await startBrowser({ viewport: VIEW });
    try {
      const p2 = await other.ctx.newPage();
      await p2.goto(url);
      await waitGame(p2, g => g.status === 'started', 'the game on the other device');
      assert.equal(new URL(p2.url()).hash, '', 'the token leaves the address bar');
      await p2.waitForSelector('#you-play');
      assert.ok(await p2.evaluate(id => JSON.parse(localStorage.getItem('doublemove.games')).some(g => g.id === id), url.split('/game/')[1].split('#')[0]));
      await move(p2, 'e2e4');
      await waitGame(page, g => g.moves.length >= 1, 'the move seen on the first device');
    } finally {
      await other.close();
    }
  } finally {
    await anon.close();
  }
});

test('leaderboard, and phone-sized lobby and player pages', async () => {
  const lb = await open(A.ctx, '/leaderboard');
  await lb.waitForSelector('#leaderboard table, #leaderboard .muted:not(:text("Loading"))');
  await lb.click('.tabs [data-variant=chess]');
  await lb.waitForSelector('.tabs [data-variant=chess].active');
  await lb.close();
  for (const [path, name, sel] of [['/', 'lobby-phone.png', '#lobby-seeks'], ['/@/alice', 'player-phone.png', '#rating-history svg']]) {
    const p = await A.ctx.newPage();
    p.on('pageerror', e => errors.push(e.message));
    await p.setViewportSize({ width: 390, height: 844 });
    await p.goto(server.base + path);
    await p.waitForSelector(sel);
    const width = await p.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `${path}: no horizontal scrolling (width ${width})`);
    await screenshot(p, name);
    await p.close();
  }
  assert.deepEqual(errors, []);
});

test('the seek and challenge forms use the create form\'s custom time control (one component)', async () => {
  const C = await startBrowser({ viewport: VIEW });
  try {
    const page = await signup(C.ctx, 'carol');
    page.on('pageerror', e => errors.push(e.message));
    await page.selectOption('#create-seek select[name=tc]', 'custom');
    assert.ok(await page.isVisible('#seek-tc-base'));
    assert.equal(await page.textContent('label:has(#seek-tc-base)'), 'Base (minutes) ');
    assert.equal(await page.textContent('label:has(#seek-tc-increment)'), 'Increment (seconds) ');
    assert.equal(await page.locator('#tc-base').count(), 1, "the create form's own fields, ids unique on the page");
    // its check: a 0+0 clock is refused with the form's message, the field marked
    await page.fill('#seek-tc-base', '0');
    await page.fill('#seek-tc-increment', '0');
    await page.click('#create-seek-btn');
    await page.waitForFunction(() => /0\+0 has no time.*Days per move/.test(document.querySelector('#seek-form-msg')?.textContent ?? ''));
    assert.equal(await page.getAttribute('#seek-tc-base', 'aria-invalid'), 'true');
    // 7+4: the seek has that clock
    await page.fill('#seek-tc-base', '7');
    await page.fill('#seek-tc-increment', '4');
    await page.click('#create-seek-btn');
    const own = page.locator('#lobby-seeks tr.seek.own');
    await own.waitFor();
    assert.match(await own.textContent(), /7\+4/);
    assert.equal(await page.getAttribute('#seek-tc-base', 'aria-invalid'), null);
    const { seeks } = await (await fetch(server.base + '/api/seeks')).json();
    assert.deepEqual(seeks.find(s => s.username === 'carol')?.clock, { limit: 420, increment: 4 });
    await own.locator('.seek-cancel').click();
    await own.waitFor({ state: 'detached' });
    // the challenge form on a player page: 2.5+1
    await page.goto(server.base + '/@/bob');
    await page.click('#challenge-open');
    await page.selectOption('#challenge select[name=tc]', 'custom');
    await page.fill('#challenge-tc-base', '2.5');
    await page.fill('#challenge-tc-increment', '1');
    await page.click('#challenge-send');
    await page.waitForSelector('#challenge-sent');
    assert.match(await page.textContent('#challenge-sent'), /2\.5\+1/);
    await page.click('#challenge-cancel');
    await page.waitForSelector('#challenge-out :text("Challenge cancelled.")');
    // and only cancelled: the Cancel button does not submit the form again (a new challenge)
    const out = await page.evaluate(async () => (await (await fetch('/api/challenges')).json()).out);
    assert.deepEqual(out, [], 'no challenge left open');
    assert.deepEqual(errors, []);
  } finally {
    await C.close();
  }
});
