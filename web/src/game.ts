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
import { rulesHref } from './rules';
import { playSound, setSoundMuted, soundMuted } from './sound';
import { askPromotion, boardFen, fmtClock, freshBounds, h, markLegend, moveList, needsPromotion, toDests } from './util';

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

/** What the turn allows now, in the words of issue 11 (empty when the game is not running). */
export function turnRule(g: GameState, me: Color | undefined, doubleMode = false): string {
  if (g.status !== 'started') return '';
  const mine = !!me && g.turn === me;
  const side = g.turn === 'white' ? 'White' : 'Black';
  switch (g.variant) {
    case 'two-move':
      if (g.phase === 'start') return '2 moves — a check, capture, promotion or en-passant chance ends it after one';
      if (g.phase === 'response') {
        if (g.check) return mine ? 'You were checked: one response move' : `${side} was checked: one response move`;
        if (!(g.turns ?? []).length) return "White's first turn is a single move: one response move";
        return 'One response move: the last turn ended after one move';
      }
      return 'Second move: another piece';
    case 'double-move':
      if (g.phase === 'second') return 'Double Move: this move ends the turn';
      if (mine && doubleMode) return 'Double Move armed: this move and one more';
      if (g.double_move?.[g.turn]) return mine ? 'One move — or arm your Double Move for two' : `One move (${side} still has the Double Move)`;
      return 'One move (Double Move used)';
    case 'twinmove':
      if (g.phase === 'second') return 'Pawn moved: now a piece move';
      return 'A piece move, or a pawn move then a piece move';
  }
  return '';
}

const sideName = (c: Color) => (c === 'white' ? 'White' : 'Black');

/** The result in words: "White wins — Black's king was captured", "Draw — stalemate". */
export function resultLine(g: GameState): string {
  if (g.status === 'aborted' || g.reason === 'aborted') return 'Game aborted';
  if (g.status !== 'finished') return '';
  const w = g.winner, l = w ? other(w) : null;
  const L = l ? sideName(l) : '';
  const lost: Partial<Record<string, string>> = {
    checkmate: `${L} is checkmated`,
    king_captured: `${L}'s king was captured`,
    resignation: `${L} resigned`,
    timeout: `${L} ran out of time`,
    stalemate: `${L} has no legal turn`,
    dead_position: `${L} cannot win`,
  };
  const drawn: Record<string, string> = {
    stalemate: 'stalemate: no legal turn for the side to move',
    dead_position: 'dead position: neither side can win',
    fivefold_repetition: 'the same position five times',
    seventy_five_move_rule: '75 moves without a capture or a pawn move',
    threefold_repetition: 'threefold repetition claimed',
    fifty_move_rule: '50-move rule claimed',
    agreement: 'agreed',
    timeout_vs_insufficient_material: 'time ran out, but the opponent could not have won',
    timeout: 'time ran out',
    resignation: 'resignation',
    checkmate: 'checkmate',
    king_captured: 'king captured',
  };
  if (w) return `${sideName(w)} wins${g.reason && lost[g.reason] ? ` — ${lost[g.reason]}` : ''}`;
  return `Draw${g.reason && drawn[g.reason] ? ` — ${drawn[g.reason]}` : ''}`;
}

/** Every move of the game with its turn: UCI, SAN, mover, the turn's index and the half (0, 1). */
export interface Ply { uci: string; san: string; color: Color; turn: number; half: number }
export function pliesOf(turns: GameState['turns']): Ply[] {
  const out: Ply[] = [];
  (turns ?? []).forEach((t, i) => {
    const u = t.uci.split(','), s = t.san.split(',');
    u.forEach((uci, k) => out.push({ uci, san: s[k] ?? '', color: t.color, turn: i, half: k }));
  });
  return out;
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
  // Viewing history: the number of moves played in the shown position (null: the live position).
  let viewPly: number | null = null;
  let flipped = false;
  // The FEN after every move (index 0: the start), replayed by the server once per list of moves.
  let positions: { key: string; fens: string[] } | null = null;
  let positionsLoading: Promise<string[] | null> | null = null;
  let lowWarned = false;

  // Focusable from script only (tabindex -1): the focus returns here after the risky-move question.
  const boardEl = h('div', { class: 'cg-board-wrap', tabindex: '-1' });
  const title = h('div', { class: 'game-title', id: 'game-title' }, 'Loading…');
  const status = h('div', { class: 'status', id: 'status', role: 'status' });
  const historyBar = h('div', { class: 'history-bar', id: 'history-bar', hidden: true });
  const nav = h('div', { class: 'move-nav', id: 'move-nav' });
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
      h('div', { class: 'side-col panel' }, title, status, over, dm, offers, actions, error, historyBar, moves, nav, extra, device),
      chatCol,
    ),
  );

  const send = (msg: object) => {
    error.textContent = '';
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
    else error.textContent = 'Not connected; reconnecting…';
  };

  const bottomColor = (): Color => (flipped ? other(me ?? 'white') : me ?? 'white');
  const cg: Api = Chessground(boardEl, {
    orientation: bottomColor(),
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
          if (g.variant === 'twinmove' && confirmRisky() && me && !(await kingSafeAfter(g.fen, uci, me))) return render();
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
      if (seat !== me) me = seat;
    }
    orient();
  }
  function orient(): void {
    if (cg.state.orientation !== bottomColor()) cg.toggleOrientation();
  }

  const movesKey = (s: GameState) => `${s.initial_fen}|${s.moves.join(' ')}`;
  /** The FENs after each move of the game, from the server's replay of its PGN (cached per move list). */
  function ensurePositions(): Promise<string[] | null> {
    if (!g) return Promise.resolve(null);
    const key = movesKey(g);
    if (positions?.key === key) return Promise.resolve(positions.fens);
    if (positionsLoading) return positionsLoading;
    positionsLoading = (async () => {
      try {
        const pgn = await (await fetch(`/api/games/${id}/pgn`)).text();
        const r = await api<{ positions: string[] }>('POST', '/api/pgn/import', { pgn });
        positions = { key, fens: r.positions };
        return r.positions;
      } catch (e: any) {
        error.textContent = `Could not load the positions: ${e.message}`;
        return null;
      } finally {
        positionsLoading = null;
      }
    })();
    return positionsLoading;
  }
  /** Shows the position after `ply` moves (the live position at the end). */
  async function go(ply: number): Promise<void> {
    if (!g) return;
    const n = g.moves.length;
    ply = Math.max(0, Math.min(n, ply));
    if (ply === n) {
      viewPly = null;
      return render();
    }
    const fens = await ensurePositions();
    if (!fens || !g) return;
    viewPly = Math.min(ply, g.moves.length);
    if (viewPly === g.moves.length) viewPly = null;
    render();
  }
  const shownPly = (): number => viewPly ?? g?.moves.length ?? 0;

  document.addEventListener('keydown', (e: KeyboardEvent) => {
    if (!g || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target as HTMLElement | null;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const cur = shownPly();
    const to = e.key === 'ArrowLeft' ? cur - 1 : e.key === 'ArrowRight' ? cur + 1 : e.key === 'Home' ? 0 : e.key === 'End' ? g.moves.length : null;
    if (to === null) return;
    e.preventDefault();
    void go(to);
  });

  /** Twinmove: ask before a move that ends the turn with the mover's king capturable (a setting). */
  const RISKY_KEY = 'doublemove.confirmRisky';
  const confirmRisky = () => localStorage.getItem(RISKY_KEY) !== 'off';
  function toggleRisky(): void {
    localStorage.setItem(RISKY_KEY, confirmRisky() ? 'off' : 'on');
    render();
  }
  /** Whether to play `uci`: true unless it hands the opponent the king and the player says no. */
  async function kingSafeAfter(fen: string, uci: string, mine: Color): Promise<boolean> {
    let r: any;
    try {
      r = await api<any>('POST', '/api/position/move', { variant: 'twinmove', fen, move: uci });
    } catch {
      return true; // the server judges the move itself
    }
    if (!r.turn_passed || r.result || !r.attacked?.[mine]) return true;
    return new Promise(resolve => {
      const dialog = h('dialog', { class: 'confirm-risky', id: 'confirm-risky', 'aria-labelledby': 'confirm-risky-title' },
        h('p', { id: 'confirm-risky-title' }, h('strong', {}, `${r.san} leaves your king capturable.`), ' Your opponent can take it and win. Play it anyway?'),
        h('div', { class: 'over-buttons' },
          h('button', { class: 'danger', id: 'confirm-risky-play', onclick: () => done(true) }, 'Play it'),
          h('button', { id: 'confirm-risky-cancel', onclick: () => done(false) }, 'Choose another move')),
      ) as HTMLDialogElement;
      const done = (ok: boolean) => {
        dialog.close();
        dialog.remove();
        // back to the board, where the move was made (the page's keys, ←/→, go on from there)
        boardEl.focus({ preventScroll: true });
        resolve(ok);
      };
      dialog.addEventListener('cancel', () => done(false));
      // Tab and Shift+Tab go round the dialog's buttons (the browser would let the focus leave the page).
      dialog.addEventListener('keydown', (e: KeyboardEvent) => {
        if (e.key !== 'Tab') return;
        const stops = [...dialog.querySelectorAll<HTMLElement>('button:not([disabled])')];
        const at = stops.indexOf(document.activeElement as HTMLElement);
        e.preventDefault();
        stops[(at + (e.shiftKey ? -1 : 1) + stops.length) % stops.length]?.focus();
      });
      document.body.append(dialog);
      dialog.showModal();
      (dialog.querySelector('#confirm-risky-cancel') as HTMLButtonElement).focus();
    });
  }

  function toggleSound(): void {
    setSoundMuted(!soundMuted());
    render();
  }
  function flip(): void {
    flipped = !flipped;
    orient();
    render();
  }

  /** Sounds for a new state: a move (capture, check), the end of the game. */
  function sounds(prev: GameState | null, s: GameState): void {
    if (!prev || prev.id !== s.id) return;
    if (prev.status === 'started' && (s.status === 'finished' || s.status === 'aborted')) return playSound('end');
    if (s.moves.length > prev.moves.length) {
      const last = pliesOf(s.turns).pop();
      playSound(last && /[+#]$/.test(last.san) ? 'check' : last && /x/.test(last.san) ? 'capture' : 'move');
    }
  }

  function updateTitle(): void {
    if (!g) return;
    const base = `${nameOf('white')} vs ${nameOf('black')} · ${variantTitle(g.variant)} · doublemove`;
    const mine = myTurn();
    const lead = mine ? '● Your turn'
      : g.status === 'started' ? `${sideName(g.turn)} to move`
      : g.status === 'finished' || g.status === 'aborted' ? resultLine(g)
      : 'Waiting for a player';
    document.title = `${lead} — ${base}`;
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
    // The shown position: live, or a position of the game's history (read-only).
    const plies = pliesOf(g.turns);
    if (viewPly !== null && (viewPly >= g.moves.length || positions?.key !== movesKey(g))) {
      // The game moved on (or a takeback): keep the view if the cached positions still hold it.
      if (viewPly >= g.moves.length || !positions || positions.fens.length <= viewPly) viewPly = null;
    }
    const viewing = viewPly !== null;
    const ply = viewing ? viewPly! : g.moves.length;
    const lastPly = plies[ply - 1];
    // The whole last turn: its first half in its own style, the move just played as chessground's last move.
    const custom = new Map<Key, string>();
    let lastMove: Key[] | undefined;
    if (lastPly) {
      lastMove = [lastPly.uci.slice(0, 2) as Key, lastPly.uci.slice(2, 4) as Key];
      const first = lastPly.half === 1 ? plies[ply - 2] : null;
      if (first) for (const sq of [first.uci.slice(0, 2), first.uci.slice(2, 4)] as Key[]) custom.set(sq, 'first-half');
    }
    // Check: the side to move's from the server; otherwise (between the halves of a turn, or in history)
    // the king of the side that did not make the last move, when its SAN says check.
    const sanCheck = lastPly && /[+#]$/.test(lastPly.san) ? other(lastPly.color) : false;
    const check: Color | false = viewing ? sanCheck : g.check ? g.turn : sanCheck;
    const canMove = live && !viewing;
    cg.set({
      fen: viewing ? boardFen(positions!.fens[ply]) : boardFen(g.fen),
      turnColor: viewing ? (lastPly ? (lastPly.half === 0 && plies[ply]?.turn === lastPly.turn ? lastPly.color : other(lastPly.color)) : g.turns?.[0]?.color ?? g.turn) : g.turn,
      check,
      lastMove,
      highlight: { lastMove: true, check: true, custom },
      viewOnly: !canMove,
      movable: {
        color: canMove ? me : undefined,
        dests: myTurn() && !viewing ? toDests(doubleMode ? g.legal?.double_dests : g.legal?.dests) : new Map(),
      },
      premovable: { enabled: canMove },
    });
    boardEl.classList.toggle('viewing-history', viewing);
    if (myTurn() && !viewing) setTimeout(() => cg.playPremove(), 0);
    else if (!canMove) cg.cancelPremove();

    const mode = g.rated ? 'Rated' : 'Casual';
    const tc = g.days ? `${g.days} day${g.days === 1 ? '' : 's'} per move` : g.clock ? `${Math.round((g.clock.limit_ms / 60000) * 10) / 10}+${g.clock.increment_ms / 1000}` : 'Unlimited';
    const rules = rulesHref(g.variant);
    title.replaceChildren(
      h('div', {}, h('strong', {}, variantTitle(g.variant)), ' · ', h('span', { id: 'game-mode' }, `${mode} · ${tc}`),
        ...(rules ? [' · ', h('a', { href: rules, class: 'rules-link', id: 'game-rules' }, 'Rules')] : [])),
      h('div', { class: 'versus' }, playerLabel(g, 'white', { diff: true, you: isPlayer() && me === 'white' }), h('span', { class: 'muted' }, ' vs '), playerLabel(g, 'black', { diff: true, you: isPlayer() && me === 'black' })),
      isPlayer() ? h('span', { class: 'muted', id: 'you-play' }, `you play ${me}`) : h('span', { class: 'muted', id: 'watching' }, 'watching (read-only)'),
    );
    const rule = turnRule(g, isPlayer() ? me : undefined, doubleMode);
    status.replaceChildren(h('span', { class: 'status-main' }, g.status === 'finished' ? `Game over — ${resultWords(g, isPlayer() ? me : undefined)}` : statusText(g, isPlayer() ? me : undefined)));
    if (rule) status.append(h('span', { class: 'turn-rule', id: 'turn-rule' }, rule));
    status.className = `status${myTurn() ? ' mine' : ''}${g.status === 'finished' || g.status === 'aborted' ? ' over' : ''}`;

    // Players by the clocks: name (link) and rating, and the rating change once a rated game ended.
    const top: Color = other(bottomColor()), bottom: Color = bottomColor();
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
    // Move list: click a turn to see the position after it; the shown turn is marked.
    const turns = g.turns ?? [];
    const turnEnd = (i: number) => plies.filter(p => p.turn <= i).length;
    const legend = markLegend(g.variant);
    moves.replaceChildren(moveList(turns, lastPly ? lastPly.turn : -1, i => void go(turnEnd(i))), ...(legend ? [legend] : []));
    const mv = moves.querySelector('.moves');
    if (mv && !viewing) mv.scrollTop = mv.scrollHeight;
    else moves.querySelector('.mturn.current')?.scrollIntoView({ block: 'nearest' });
    historyBar.hidden = !viewing;
    historyBar.replaceChildren();
    if (viewing) {
      historyBar.append(
        h('span', { id: 'history-where' }, ply === 0 ? 'Viewing the start position' : `Viewing move ${ply} of ${g.moves.length}: ${lastPly?.san ?? ''}`),
        h('button', { class: 'primary', id: 'back-to-game', onclick: () => void go(g!.moves.length) }, 'Back to the game'));
    }
    const n = g.moves.length;
    const navBtn = (bid: string, label: string, title: string, to: number, disabled: boolean) =>
      h('button', { id: bid, class: 'small', title, 'aria-label': title, disabled, onclick: () => void go(to) }, label);
    nav.replaceChildren(
      navBtn('nav-first', '«', 'first position (Home)', 0, ply === 0),
      navBtn('nav-prev', '‹', 'previous move (←)', ply - 1, ply === 0),
      navBtn('nav-next', '›', 'next move (→)', ply + 1, ply >= n),
      navBtn('nav-last', '»', 'live position (End)', n, ply >= n),
      h('button', { id: 'flip', class: 'small', title: 'flip the board', onclick: flip }, 'Flip board'),
      h('button', { id: 'sound-toggle', class: 'small', 'aria-pressed': soundMuted() ? 'false' : 'true', title: 'game sounds on or off', onclick: toggleSound },
        soundMuted() ? 'Sound: off' : 'Sound: on'),
      ...(g.variant === 'twinmove'
        ? [h('button', { id: 'risky-toggle', class: 'small', 'aria-pressed': confirmRisky() ? 'true' : 'false', title: 'ask before a move that leaves your king capturable', onclick: toggleRisky },
            confirmRisky() ? 'Confirm risky moves: on' : 'Confirm risky moves: off')]
        : []));
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
    over.append(
      h('div', { class: 'result-line', id: 'result-line' }, resultLine(g)),
      h('div', { class: 'result-words', id: 'result-words' }, resultWords(g, isPlayer() ? me : undefined)));
    const row = h('div', { class: 'row over-buttons' });
    over.append(row);
    const links = [
      h('a', { class: 'button', id: 'new-game', href: '/#new-game', title: 'the lobby’s create-game form' }, 'New game'),
      h('a', { class: 'button', id: 'analyse', href: `/analysis?game=${g.id}`, title: 'replay and analyse this game' }, 'Analyse'),
    ];
    if (!isPlayer()) return void row.append(...links);
    const opp = other(me!);
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
    row.append(...links);
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
    const top: Color = other(bottomColor());
    const bottom: Color = bottomColor();
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
      // One warning as the player's own clock runs low (again after it is back above 15 s).
      if (isPlayer() && c === me && running) {
        if (ms < 10000 && ms > 0 && !lowWarned) { lowWarned = true; playSound('low-time'); }
        else if (ms > 15000) lowWarned = false;
      }
    }
  }
  const timer = setInterval(tick, 100);

  function accept(s: GameState): void {
    setSeat(s);
    sounds(g, s);
    g = s;
    receivedAt = performance.now();
    (window as any).__game = g;
    (window as any).__boardFen = () => cg.getFen(); // the shown placement (for the browser tests)
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
