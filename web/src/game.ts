// The game page: live board over the game WebSocket, clocks, move list, turn status, Double Move, offers.
import { Chessground } from '@lichess-org/chessground';
import type { Api } from '@lichess-org/chessground/api';
import type { Key } from '@lichess-org/chessground/types';
import { api, myGame, saveGame, variantTitle, wsUrl, type Color, type GameState } from './api';
import { opponentText } from './lobby';
import { askPromotion, boardFen, fmtClock, h, lastMoveOf, moveList, needsPromotion, toDests } from './util';

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

export function gamePage(app: HTMLElement, id: string): void {
  const mine = myGame(id);
  const me: Color | undefined = mine?.color;
  const token = mine?.token;
  let g: GameState | null = null;
  let receivedAt = performance.now();
  let doubleMode = false;
  let ws: WebSocket | null = null;
  let closed = false;
  let resignArmed = false;

  const boardEl = h('div', { class: 'cg-board-wrap' });
  const title = h('div', { class: 'game-title' }, 'Loading…');
  const status = h('div', { class: 'status', id: 'status' });
  const error = h('div', { class: 'error', id: 'game-error' });
  const clockTop = h('div', { class: 'clock top', id: 'clock-top' });
  const clockBottom = h('div', { class: 'clock bottom', id: 'clock-bottom' });
  const moves = h('div', { id: 'moves' });
  const dm = h('div', { class: 'dm', id: 'double-move' });
  const offers = h('div', { class: 'offers', id: 'offers' });
  const actions = h('div', { class: 'actions', id: 'actions' });
  const extra = h('div', { class: 'extra' });
  app.append(
    h('div', { class: 'game-page' },
      h('div', { class: 'board-col' }, clockTop, boardEl, clockBottom),
      h('div', { class: 'side-col panel' }, title, status, dm, offers, actions, error, moves, extra),
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

  function myTurn(): boolean {
    return !!g && !!me && !!token && g.status === 'started' && g.turn === me;
  }

  function render(): void {
    if (!g) return;
    const live = g.status === 'started' && !!me && !!token;
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

    title.replaceChildren(
      h('strong', {}, variantTitle(g.variant)), ' · ', opponentText(g, me),
      me ? h('span', { class: 'muted' }, ` · you play ${me}`) : h('span', { class: 'muted', id: 'watching' }, ' · watching (read-only)'),
    );
    status.textContent = statusText(g, me);
    status.className = `status${myTurn() ? ' mine' : ''}${g.status === 'finished' || g.status === 'aborted' ? ' over' : ''}`;

    // Double Move: both sides' abilities and the toggle for this player.
    dm.replaceChildren();
    if (g.variant === 'double-move' && g.double_move) {
      const ab = (c: Color) => h('span', { class: `ability ${g!.double_move![c] ? 'yes' : 'no'}`, id: `dm-${c}` },
        `${c === 'white' ? 'White' : 'Black'}: ${g!.double_move![c] ? 'Double Move available' : 'Double Move used'}`);
      dm.append(ab('white'), ab('black'));
      if (me && g.status === 'started') {
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
    if (g.status === 'started') {
      for (const kind of ['draw', 'takeback'] as const) {
        const by = g.offers[kind];
        if (!by) continue;
        const label = kind === 'draw' ? 'a draw' : 'a takeback';
        if (me && by !== me)
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
    moves.replaceChildren(moveList(g.turns ?? [], (g.turns ?? []).length - 1));
    const mv = moves.querySelector('.moves');
    if (mv) mv.scrollTop = mv.scrollHeight;
    extra.replaceChildren(
      h('a', { href: `/api/games/${g.id}/pgn`, target: '_blank' }, 'PGN'), ' · ',
      h('a', { href: `/analysis?game=${g.id}`, id: 'analyse-link' }, g.status === 'finished' ? 'Analyse / replay this game' : 'Analysis board'),
    );
    tick();
  }

  function tick(): void {
    if (!g) return;
    const top: Color = other(me ?? 'white');
    const bottom: Color = me ?? 'white';
    for (const [el, c] of [[clockTop, top], [clockBottom, bottom]] as [HTMLElement, Color][]) {
      const name = `${c === 'white' ? 'White' : 'Black'}${g[c].kind === 'engine' ? ` (engine ${g[c].level})` : c === me ? ' (you)' : ''}`;
      if (!g.clock) {
        el.replaceChildren(h('span', { class: 'who' }, name), h('span', { class: 'time' }, '∞'));
        el.classList.toggle('running', g.status === 'started' && g.turn === c);
        continue;
      }
      let ms = c === 'white' ? g.clock.white_ms : g.clock.black_ms;
      const running = g.status === 'started' && g.clock.running === c;
      if (running) ms -= performance.now() - receivedAt;
      el.replaceChildren(h('span', { class: 'who' }, name), h('span', { class: 'time' }, fmtClock(ms)));
      el.classList.toggle('running', running);
      el.classList.toggle('low', ms < 20000);
    }
  }
  const timer = setInterval(tick, 100);

  function connect(): void {
    ws = new WebSocket(wsUrl(`/api/games/${id}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`));
    ws.onmessage = ev => {
      const msg = JSON.parse(ev.data);
      if (msg.type === 'gameFull' || msg.type === 'gameState') {
        g = msg as GameState;
        receivedAt = performance.now();
        (window as any).__game = g;
        render();
      } else if (msg.type === 'error') {
        error.textContent = msg.error;
        render();
      }
    };
    ws.onclose = () => {
      if (!closed && g?.status !== 'finished' && g?.status !== 'aborted') setTimeout(connect, 1000);
    };
  }
  api<GameState>('GET', `/api/games/${id}`).then(s => { if (!g) { g = s; receivedAt = performance.now(); render(); } })
    .catch(e => { title.textContent = e.message; closed = true; clearInterval(timer); });
  connect();
  window.addEventListener('pagehide', () => { closed = true; ws?.close(); clearInterval(timer); });
}
