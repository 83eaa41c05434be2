// The game page: live board over the game WebSocket, clocks (or a correspondence deadline), players with
// ratings, move list, turn status, Double Move, offers, chat, rematch, tab title and notifications.
import { Chessground } from '@lichess-org/chessground';
import type { Api } from '@lichess-org/chessground/api';
import type { Key } from '@lichess-org/chessground/types';
import { api, myGame, saveGame, variantTitle, wsUrl, type Color, type GameState } from './api';
import { account } from './auth';
import { chatPanel } from './chat';
import { playerLabel, resultWords, untilText } from './forms';
import { opponentText } from './lobby';
import { askPromotion, boardFen, fmtClock, freshBounds, h, lastMoveOf, moveList, needsPromotion, toDests } from './util';

const other = (c: Color): Color => (c === 'white' ? 'black' : 'white');

export async function joinPage(app: HTMLElement, id: string, invite: string): Promise<void> {
  const mine = myGame(id);
  if (!mine) {
    try {
      const r = await api<{ id: string; token: string; color: Color; game: GameState }>('POST', `/api/games/${id}/join`, { invite });
      saveGame({ id, token: r.token, color: r.color, variant: r.game.variant, opponent: opponentText(r.game, r.color), created: Date.now() });
    } catch (e: any) {
      app.append(h('div', { class: 'panel error', id: 'join-error' }, `Could not join: ${e.message}. Watching instead.`));
    }
  }
  history.replaceState(null, '', `/game/${id}`);
  gamePage(app, id);
}

export function statusText(g: GameState, me: Color | undefined): string {
  if (g.status === 'waiting') return 'Waiting for the opponent to join';
  if (g.status === 'aborted') return 'Game aborted';
  if (g.status === 'finished') return g.reason_text ?? `Game over: ${g.result}`;
  const side = g.turn === 'white' ? 'White' : 'Black';
  const what =
    g.phase === 'response' ? 'response move'
    : g.phase === 'second' ? (g.variant === 'double-move' ? 'Double Move: second half' : 'second move')
    : 'move';
  if (me && g.turn === me) {
    if (g.phase === 'second' && g.variant === 'double-move') return 'Double Move: second half';
    return g.phase === 'response' ? 'Your response move' : g.phase === 'second' ? 'Your second move' : 'Your move';
  }
  if (g[g.turn].kind === 'engine') return `Engine is thinking (${side}'s ${what})`;
  return me ? `Waiting for the opponent (${side}'s ${what})` : `${side} to play: ${what}`;
}


/** A `#token=…` fragment (the "continue on another device" link): keep the seat token, drop it from the URL. */
async function adoptFragmentToken(id: string): Promise<string | null> {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (!m) return null;
  const token = decodeURIComponent(m[1]);
  history.replaceState(null, '', location.pathname + location.search);
  try {
    const s = await api<GameState>('GET', `/api/games/${id}`, undefined, token);
    if (!s.you) return 'This link does not give a seat in this game (it may be out of date). Watching instead.';
    saveGame({ id, token, color: s.you, variant: s.variant, opponent: opponentText(s, s.you), created: Date.now() });
    return null;
  } catch (e: any) {
    return `Could not use the link: ${e.message}`;
  }
}

export function gamePage(app: HTMLElement, id: string): void {
  if (/^#token=/.test(location.hash)) {
    app.append(h('div', { class: 'muted' }, 'Loading…'));
    adoptFragmentToken(id).then(err => {
      app.replaceChildren();
      if (err) app.append(h('div', { class: 'panel error', id: 'token-error' }, err));
      showGame(app, id);
    });
  } else showGame(app, id);
}

let notifyAsked = false;

function showGame(app: HTMLElement, id: string): void {
  const mine = myGame(id);
  const token = mine?.token;
  // The seat: the server's `you` (account or token), else this browser's stored token seat.
  let me: Color | undefined = mine?.color;
  let g: GameState | null = null;
  let receivedAt = performance.now();
  let doubleMode = false;
  let ws: WebSocket | null = null;
  let closed = false;
  let resignArmed = false;
  let wasMyTurn = false;
  let backoff = 1000;
  let rematchMsg = '';
  let rematchBusy = false;
  let leaving = false;
  let signedIn: string | null = null;
  // A public game waiting for its second player: the invite from the open-games list (undefined: not
  // looked up yet; null: not listed).
  let openInvite: string | null | undefined;

  const boardEl = h('div', { class: 'cg-board-wrap' });
  const title = h('div', { class: 'game-title', id: 'game-title' }, 'Loading…');
  const status = h('div', { class: 'status', id: 'status' });
  const error = h('div', { class: 'error', id: 'game-error' });
  const whoTop = h('span', { class: 'who' }), timeTop = h('span', { class: 'time' });
  const whoBottom = h('span', { class: 'who' }), timeBottom = h('span', { class: 'time' });
  const clockTop = h('div', { class: 'clock top', id: 'clock-top' }, whoTop, timeTop);
  const clockBottom = h('div', { class: 'clock bottom', id: 'clock-bottom' }, whoBottom, timeBottom);
  const moves = h('div', { id: 'moves' });
  const dm = h('div', { class: 'dm', id: 'double-move' });
  const offers = h('div', { class: 'offers', id: 'offers' });
  const actions = h('div', { class: 'actions', id: 'actions' });
  const over = h('div', { class: 'game-over', id: 'game-over' });
  const extra = h('div', { class: 'extra' });
  const device = h('div', { id: 'device' });
  const chatCol = h('div', { class: 'chat-col panel', hidden: true });
  const chat = chatPanel(msg => {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  });
  chatCol.append(chat.el);
  app.append(
    h('div', { class: 'game-page' },
      h('div', { class: 'board-col' }, clockTop, boardEl, clockBottom),
      h('div', { class: 'side-col panel' }, title, status, over, dm, offers, actions, error, moves, extra, device),
      chatCol,
    ),
  );

  const send = (msg: object) => {
    error.textContent = '';
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    else error.textContent = 'Not connected; reconnecting…';
  };

  const cg: Api = Chessground(boardEl, {
    orientation: me ?? 'white',
    coordinates: true,
    animation: { enabled: true, duration: 150 },
    movable: {
      free: false,
      showDests: true,
      events: {
        after: async (orig: Key, dest: Key) => {
          if (!g) return;
          let uci = orig + dest;
          if (needsPromotion(g.legal, orig, dest)) {
            const letter = await askPromotion(me ?? 'white');
            if (!letter) return render();
            uci += letter;
          }
          const msg: any = { type: 'move', move: uci };
          if (doubleMode) msg.double = true;
          doubleMode = false;
          cg.set({ movable: { dests: new Map() } });
          send(msg);
        },
      },
    },
    premovable: { enabled: true, showDests: true, castle: true },
    draggable: { enabled: true, showGhost: true },
  });
  freshBounds(cg, boardEl);

  /** This viewer plays `me`: with the seat token, or as the account the server recognised. */
  const isPlayer = (): boolean => !!g && !!me && (!!token || g.you === me);
  function myTurn(): boolean {
    return !!g && isPlayer() && g.status === 'started' && g.turn === me;
  }
  const nameOf = (c: Color) => g?.players?.[c]?.username ?? (g?.[c].kind === 'engine' ? `Engine ${g[c].level}` : c === 'white' ? 'White' : 'Black');

  function setSeat(s: GameState): void {
    if (s.you !== undefined) {
      const seat = s.you ?? (token ? mine?.color : undefined);
      if (seat !== me) {
        me = seat;
        cg.set({ orientation: me ?? 'white' });
      }
    }
  }

  function updateTitle(): void {
    if (!g) return;
    const base = `${nameOf('white')} vs ${nameOf('black')} · ${variantTitle(g.variant)} · doublemove`;
    const mine = myTurn();
    document.title = mine ? `● Your turn — ${base}` : base;
    if (mine && !wasMyTurn && document.hidden && 'Notification' in window && Notification.permission === 'granted') {
      try {
        new Notification('Your turn', { body: `${nameOf(other(me!))} · ${variantTitle(g.variant)}${g.days ? ' (correspondence)' : ''}`, tag: `dm-${g.id}` });
      } catch {}
    }
    wasMyTurn = mine;
  }

  function render(): void {
    if (!g) return;
    const live = g.status === 'started' && isPlayer();
    const canDouble = myTurn() && g.variant === 'double-move' && g.phase === 'start' && !!g.double_move?.[me!] && Object.keys(g.legal?.double_dests ?? {}).length > 0;
    if (!canDouble) doubleMode = false;
    cg.set({
      fen: boardFen(g.fen),
      turnColor: g.turn,
      check: g.check ? g.turn : false,
      lastMove: lastMoveOf(g.moves),
      viewOnly: !live,
      movable: {
        color: live ? me : undefined,
        dests: myTurn() ? toDests(doubleMode ? g.legal?.double_dests : g.legal?.dests) : new Map(),
      },
      premovable: { enabled: live },
    });
    if (myTurn()) setTimeout(() => cg.playPremove(), 0);
    else if (!live) cg.cancelPremove();

    const mode = g.rated ? 'Rated' : 'Casual';
    const tc = g.days ? `${g.days} day${g.days === 1 ? '' : 's'} per move` : g.clock ? `${Math.round((g.clock.limit_ms / 60000) * 10) / 10}+${g.clock.increment_ms / 1000}` : 'Unlimited';
    title.replaceChildren(
      h('div', {}, h('strong', {}, variantTitle(g.variant)), ' · ', h('span', { id: 'game-mode' }, `${mode} · ${tc}`)),
      h('div', { class: 'versus' }, playerLabel(g, 'white', { diff: true, you: isPlayer() && me === 'white' }), h('span', { class: 'muted' }, ' vs '), playerLabel(g, 'black', { diff: true, you: isPlayer() && me === 'black' })),
      isPlayer() ? h('span', { class: 'muted', id: 'you-play' }, `you play ${me}`) : h('span', { class: 'muted', id: 'watching' }, 'watching (read-only)'),
    );
    status.textContent = statusText(g, isPlayer() ? me : undefined);
    status.className = `status${myTurn() ? ' mine' : ''}${g.status === 'finished' || g.status === 'aborted' ? ' over' : ''}`;

    // Players by the clocks: name (link) and rating, and the rating change once a rated game ended.
    const top: Color = other(me ?? 'white'), bottom: Color = me ?? 'white';
    for (const [el, c] of [[whoTop, top], [whoBottom, bottom]] as [HTMLElement, Color][]) {
      const you = isPlayer() && c === me;
      el.replaceChildren(
        h('span', { class: `side-dot ${c}`, title: c }),
        g.players?.[c] ? playerLabel(g, c, { diff: true })
          : `${c === 'white' ? 'White' : 'Black'}${g[c].kind === 'engine' ? ` (engine ${g[c].level})` : ''}`,
        you ? h('span', { class: 'muted' }, ' (you)') : '');
    }

    // Double Move: both sides' abilities and the toggle for this player.
    dm.replaceChildren();
    if (g.variant === 'double-move' && g.double_move) {
      const ab = (c: Color) => h('span', { class: `ability ${g!.double_move![c] ? 'yes' : 'no'}`, id: `dm-${c}` },
        `${c === 'white' ? 'White' : 'Black'}: ${g!.double_move![c] ? 'Double Move available' : 'Double Move used'}`);
      dm.append(ab('white'), ab('black'));
      if (isPlayer() && g.status === 'started') {
        dm.append(h('button', {
          id: 'double-toggle',
          class: `toggle${doubleMode ? ' on' : ''}`,
          disabled: !canDouble,
          'aria-pressed': doubleMode ? 'true' : 'false',
          title: 'play this move as the first half of your Double Move',
          onclick: () => { doubleMode = !doubleMode; render(); },
        }, doubleMode ? 'Double Move: ON — play the first half' : 'Double Move'));
      }
    }

    // Offers and invite link.
    offers.replaceChildren();
    if (g.status === 'waiting' && mine?.invite_url) {
      const url = location.origin + mine.invite_url;
      offers.append(h('div', { class: 'invite' }, 'Invite link for your opponent: ', h('input', { readOnly: true, value: url, id: 'invite-url', onclick: (e: Event) => (e.target as HTMLInputElement).select() })));
    }
    if (g.status === 'waiting' && !isPlayer()) {
      if (openInvite === undefined) {
        openInvite = null;
        api<{ games: GameState[] }>('GET', '/api/games?status=open&limit=500')
          .then(r => { openInvite = r.games.find(x => x.id === id)?.invite ?? null; if (openInvite) render(); })
          .catch(() => {});
      } else if (openInvite) {
        const url = `/join/${id}?invite=${encodeURIComponent(openInvite)}`;
        offers.append(h('div', { class: 'offer join-open' }, 'This game is open: anyone may take the free seat. ',
          h('a', { class: 'button primary', id: 'join-game', href: url }, 'Join this game')));
      }
    }
    if (g.status === 'started') {
      for (const kind of ['draw', 'takeback'] as const) {
        const by = g.offers[kind];
        if (!by) continue;
        const label = kind === 'draw' ? 'a draw' : 'a takeback';
        if (isPlayer() && by !== me)
          offers.append(h('div', { class: 'offer', id: `offer-${kind}` }, `${by === 'white' ? 'White' : 'Black'} offers ${label}. `,
            h('button', { onclick: () => send({ type: kind, action: 'accept' }) }, 'Accept'),
            h('button', { onclick: () => send({ type: kind, action: 'decline' }) }, 'Decline')));
        else offers.append(h('div', { class: 'offer', id: `offer-${kind}` }, `${by === 'white' ? 'White' : 'Black'} offers ${label}.`));
      }
    }

    actions.replaceChildren();
    if (live) {
      const completeTurns = (g.turns ?? []).filter(t => t.complete !== false).length;
      const b = (id: string, label: string, msg: object, opts: any = {}) =>
        h('button', { id, onclick: () => send(msg), ...opts }, label);
      actions.append(...[
        b('takeback', 'Takeback', { type: 'takeback', action: 'propose' }, { disabled: (g.turns ?? []).length === 0 || g.offers.takeback === me }),
        b('draw-offer', 'Offer draw', { type: 'draw', action: 'offer' }, { disabled: g.offers.draw === me }),
        b('draw-claim', 'Claim draw', { type: 'draw', action: 'claim' }, { disabled: !(g.claimable_draw && g.turn === me), title: g.claimable_draw ?? 'nothing to claim' }),
        completeTurns < 2 ? b('abort', 'Abort', { type: 'abort' }) : null,
        h('button', {
          id: 'resign', class: resignArmed ? 'danger' : '',
          onclick: () => { if (resignArmed) { resignArmed = false; send({ type: 'resign' }); } else { resignArmed = true; render(); setTimeout(() => { resignArmed = false; render(); }, 4000); } },
        }, resignArmed ? 'Really resign?' : 'Resign'),
      ].filter((x): x is HTMLButtonElement => !!x));
    }
    renderOver();
    moves.replaceChildren(moveList(g.turns ?? [], (g.turns ?? []).length - 1));
    const mv = moves.querySelector('.moves');
    if (mv) mv.scrollTop = mv.scrollHeight;
    extra.replaceChildren(...[
      h('a', { href: `/api/games/${g.id}/pgn`, id: 'pgn-link', download: `doublemove_${g.variant}_${g.id}.pgn`, title: 'download the game as PGN' }, 'PGN'), ' · ',
      h('a', { href: `/analysis?game=${g.id}`, id: 'analyse-link' }, g.status === 'finished' ? 'Analyse / replay this game' : 'Analysis board'),
      isPlayer() && g.status !== 'finished' && g.status !== 'aborted' && 'Notification' in window && Notification.permission === 'default' && !notifyAsked
        ? [' · ', h('button', {
          class: 'link', id: 'notify-btn', title: 'a browser notification when it is your turn while this tab is in the background',
          onclick: async () => { notifyAsked = true; try { await Notification.requestPermission(); } catch {} render(); },
        }, 'Notify me when it is my turn')]
        : [],
    ].flat());
    // Anonymous seat: a private link to continue on another device.
    device.replaceChildren();
    if (token && isPlayer() && !g.players?.[me!] && g.status !== 'finished' && g.status !== 'aborted') {
      const url = `${location.origin}/game/${g.id}#token=${encodeURIComponent(token)}`;
      device.append(h('details', { class: 'device', id: 'other-device' },
        h('summary', {}, 'Continue on another device'),
        h('div', { class: 'muted' }, 'Open this private link on the other device. Anyone with it can play your side: do not share it.'),
        h('input', { readOnly: true, value: url, id: 'device-url', onclick: (e: Event) => (e.target as HTMLInputElement).select() })));
    }
    // No chat against the engine (nobody to talk to).
    const noChat = g.white.kind === 'engine' || g.black.kind === 'engine';
    if (chatCol.hidden !== noChat) {
      chatCol.hidden = noChat;
      cg.redrawAll(); // the board moved: chessground must measure it again
    }
    chat.setWritable(room => {
      if (room === 'player') return isPlayer() || 'Only the players write here';
      if (signedIn || !g?.rated) return true;
      return 'Sign in to chat in rated games';
    });
    updateTitle();
    tick();
  }

  function renderOver(): void {
    over.replaceChildren();
    if (!g || (g.status !== 'finished' && g.status !== 'aborted')) return;
    const rm = g.rematch ?? null;
    if (rm?.game_id) {
      // Not while our own rematch request runs: leaving the page would cancel it on the server
      // before the new game is created (we follow its answer instead).
      if (isPlayer() && !leaving && !rematchBusy) {
        leaving = true;
        location.href = `/game/${rm.game_id}`;
      }
      over.append(h('a', { class: 'button primary', id: 'rematch-link', href: `/game/${rm.game_id}` }, 'Rematch game →'));
      return;
    }
    const res = h('div', { class: 'result-words', id: 'result-words' }, resultWords(g, isPlayer() ? me : undefined));
    over.append(res);
    if (!isPlayer()) return;
    const opp = other(me!);
    const row = h('div', { class: 'row' });
    if (rm?.offer === opp) {
      row.append(
        h('span', {}, `${nameOf(opp)} offers a rematch. `),
        h('button', { class: 'primary', id: 'rematch-accept', disabled: rematchBusy, onclick: () => rematch() }, 'Accept rematch'),
        h('button', { id: 'rematch-decline', onclick: () => declineRematch() }, 'Decline'));
    } else if (rm?.offer === me) {
      row.append(h('span', { class: 'ok', id: 'rematch-offered' }, 'Rematch offered'),
        h('button', { class: 'small', id: 'rematch-cancel', title: 'withdraw the rematch offer', onclick: () => declineRematch() }, 'Cancel'));
    } else {
      row.append(h('button', { class: 'primary', id: 'rematch', disabled: rematchBusy, onclick: () => rematch() }, 'Rematch'));
    }
    over.append(row);
    if (rematchMsg) over.append(h('div', { class: 'error', id: 'rematch-error' }, rematchMsg));
  }

  async function rematch(): Promise<void> {
    rematchMsg = '';
    rematchBusy = true;
    render();
    try {
      const r = await api<any>('POST', `/api/games/${id}/rematch`, undefined, token);
      if (r?.id && r?.token) {
        saveGame({ id: r.id, token: r.token, color: r.color, variant: r.game?.variant ?? g!.variant, opponent: r.game ? opponentText(r.game, r.color) : '', created: Date.now(), invite_url: r.invite_url });
        leaving = true;
        location.href = `/game/${r.id}`;
        return;
      }
      if (r?.game_id) {
        leaving = true;
        location.href = `/game/${r.game_id}`;
        return;
      }
      if (r?.offered && g && !g.rematch?.game_id) g = { ...g, rematch: { offer: me!, game_id: null } };
    } catch (e: any) {
      rematchMsg = e.message;
    } finally {
      rematchBusy = false;
    }
    render();
  }
  async function declineRematch(): Promise<void> {
    rematchMsg = '';
    try {
      await api('POST', `/api/games/${id}/rematch/decline`, undefined, token);
      if (g) g = { ...g, rematch: { offer: null, game_id: null } };
    } catch (e: any) {
      rematchMsg = e.message;
    }
    render();
  }

  function tick(): void {
    if (!g) return;
    const top: Color = other(me ?? 'white');
    const bottom: Color = me ?? 'white';
    for (const [el, time, c] of [[clockTop, timeTop, top], [clockBottom, timeBottom, bottom]] as [HTMLElement, HTMLElement, Color][]) {
      if (g.days) {
        const toMove = g.status === 'started' && g.turn === c;
        time.textContent = toMove && g.deadline_ms ? untilText(g.deadline_ms) : `${g.days}d`;
        time.title = toMove && g.deadline_ms ? `must move by ${new Date(g.deadline_ms).toLocaleString()}` : `${g.days} day${g.days === 1 ? '' : 's'} per move`;
        el.classList.add('corr');
        el.classList.toggle('running', toMove);
        el.classList.toggle('low', toMove && !!g.deadline_ms && g.deadline_ms - Date.now() < 3600_000);
        continue;
      }
      if (!g.clock) {
        time.textContent = '∞';
        el.classList.toggle('running', g.status === 'started' && g.turn === c);
        continue;
      }
      let ms = c === 'white' ? g.clock.white_ms : g.clock.black_ms;
      const running = g.status === 'started' && g.clock.running === c;
      if (running) ms -= performance.now() - receivedAt;
      time.textContent = fmtClock(ms);
      el.classList.toggle('running', running);
      el.classList.toggle('low', ms < 20000);
    }
  }
  const timer = setInterval(tick, 100);

  function accept(s: GameState): void {
    setSeat(s);
    g = s;
    receivedAt = performance.now();
    (window as any).__game = g;
    render();
  }

  function connect(): void {
    const sock = new WebSocket(wsUrl(`/api/games/${id}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`));
    ws = sock;
    sock.onopen = () => (backoff = 1000);
    sock.onmessage = ev => {
      let msg: any;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === 'gameFull' || msg.type === 'gameState') {
        // `you` comes with the first message (and GET); later states keep the seat we know.
        if (msg.you === undefined && g?.you !== undefined) msg.you = g.you;
        accept(msg as GameState);
      } else if (msg.type === 'chat_history') {
        chat.history(msg.room, msg.lines ?? []);
      } else if (msg.type === 'chat') {
        chat.line(msg.room, msg.line);
      } else if (msg.type === 'error') {
        if (chat.pending() && /chat|message|too many|text/i.test(msg.error)) chat.error(msg.error);
        else {
          error.textContent = msg.error;
          render();
        }
      }
    };
    sock.onclose = () => {
      if (closed || leaving) return;
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 15000);
    };
  }
  // A rematch's id may be announced a moment before its game exists: retry a missing game briefly.
  const load = (tries: number): void => {
    api<GameState>('GET', `/api/games/${id}`, undefined, token)
      .then(s => { if (!g) accept(s); else if (s.you !== undefined && g.you === undefined) accept({ ...g, you: s.you }); })
      .catch(e => {
        if (e.status === 404 && tries > 0 && !g) return void setTimeout(() => load(tries - 1), 500);
        if (g) return;
        title.textContent = e.message;
        closed = true;
        clearInterval(timer);
      });
  };
  load(10);
  account().then(a => { signedIn = a?.username ?? null; render(); });
  connect();
  window.addEventListener('pagehide', () => { closed = true; ws?.close(); clearInterval(timer); });
}
