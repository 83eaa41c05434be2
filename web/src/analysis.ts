// Analysis board: any variant and extended FEN, a clickable move tree, engine lines (multi-PV) from the
// analysis WebSocket, PGN import, and an evaluation graph of a loaded game.
// The browser has no rules engine: a move played on the board is checked and applied by the server
// through POST /api/pgn/import (a one-move record from the current FEN); dests come from the server.
import { Chessground } from '@lichess-org/chessground';
import type { Api } from '@lichess-org/chessground/api';
import type { Key } from '@lichess-org/chessground/types';
import { api, variantTitle, VARIANTS, wsUrl, type Legal, type Variant } from './api';
import { rulesHref } from './rules';
import { askPromotion, boardFen, freshBounds, h, needsPromotion, scoreText, toDests } from './util';

export const START: Record<Variant, string> = {
  chess: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1',
  'two-move': 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R',
  'double-move': 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB',
  twinmove: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T',
};

interface Node {
  fen: string;
  uci: string | null;
  san: string;
  parent: Node | null;
  children: Node[];
  legal?: Legal;
  /** The king in check (the server's `check`), known once `legal` is. */
  check?: 'white' | 'black' | null;
  /** The position's own result (`1-0`, `0-1`, `1/2-1/2`) and why, from the server. */
  result?: string | null;
  reasonText?: string | null;
}
interface Import {
  variant: Variant;
  initial_fen: string;
  fen: string;
  positions: string[];
  moves: string[];
  turns: { color: string; fullmove: number; uci: string; san: string }[];
  result: string | null;
  reason_text: string | null;
  legal: Legal;
  check: 'white' | 'black' | null;
  tags: [string, string][];
}
interface Line { multipv: number; score: { cp?: number; mate?: number }; pv: string; san?: string }

/** One move of an engine line: its UCI (from `pv`), its SAN (from `san`), and where it sits. */
interface LineMove { uci: string; san: string; turn: number; index: number; last: boolean }
/**
 * The moves of an engine line, turn by turn: `pv` has UCI turns separated by spaces and the moves of a turn
 * by commas; `san` the same in SAN with move numbers (`1.e4,Nf3 d5,Nc6`, `3...e5`, `3…,Nf3` from mid-turn).
 */
export function lineMoves(l: Line): { num: string; moves: LineMove[] }[] {
  const uTurns = l.pv.trim().split(/\s+/).filter(Boolean);
  const sTurns = (l.san ?? '').trim().split(/\s+/).filter(Boolean);
  return uTurns.map((ut, t) => {
    const st = sTurns[t] ?? '';
    const m = /^(\d+(?:\.\.\.|…|\.)?,?)?(.*)$/.exec(st)!;
    const num = m[1] ?? '';
    const sans = m[2] ? m[2].split(',') : [];
    const ucis = ut.split(',');
    return { num, moves: ucis.map((u, i) => ({ uci: u, san: sans[i] || u, turn: t, index: i, last: i === ucis.length - 1 })) };
  });
}
/** White's share (0–1) of a score from the side to move's view: centipawns on a logistic curve, mate as all. */
export function whiteShare(score: { cp?: number; mate?: number }, toMove: 'white' | 'black'): number {
  const sign = toMove === 'white' ? 1 : -1;
  if (score.mate !== undefined) return (score.mate > 0 ? 1 : score.mate < 0 ? -1 : 0) * sign > 0 ? 1 : 0;
  const cp = (score.cp ?? 0) * sign;
  return 1 / (1 + Math.exp(-0.00368208 * cp));
}

const sideToMove = (fen: string) => (fen.split(' ')[1] === 'b' ? 'black' : 'white');
/** Whether a position is at the start of a turn (so a move from it begins a new turn). */
function turnStart(variant: Variant, fen: string): boolean {
  const st = fen.split(' ')[6] ?? '';
  if (variant === 'two-move') return !st.startsWith('H');
  if (variant === 'double-move') return !st.endsWith('m');
  if (variant === 'twinmove') return st !== 'P';
  return true;
}
const fullmove = (fen: string) => Number(fen.split(' ')[5] ?? '1') || 1;

export function analysisPage(app: HTMLElement, params: URLSearchParams): void {
  let variant: Variant = (params.get('variant') as Variant) || 'double-move';
  if (!START[variant]) variant = 'double-move';
  let root: Node = { fen: params.get('fen') || START[variant], uci: null, san: '', parent: null, children: [] };
  let cur: Node = root;
  let doubleMode = false;
  let engineOn = params.get('engine') !== '0';
  let sent = 0, started = 0;
  let startFen = '';
  let lines: Line[] = [];
  let depthInfo = '';
  let gameInfo = '';
  // The result of an imported game (`1-0`, `0-1`, `1/2-1/2`), for the end of its main line.
  let gameResult: string | null = null;
  let gameEnd: Node | null = null;
  // The positions of the evaluation graph, in its order (empty without a graph).
  let graphNodes: Node[] = [];

  const boardEl = h('div', { class: 'board-wrap' });
  const title = h('div', { class: 'game-title' });
  const status = h('div', { class: 'status', id: 'status' });
  const error = h('div', { class: 'error', id: 'analysis-error' });
  const variantSel = h('select', { name: 'variant', 'aria-label': 'Variant', onchange: () => { variant = variantSel.value as Variant; setRoot(START[variant]); syncRules(); } },
    VARIANTS.map(([k, t]) => h('option', { value: k, selected: k === variant }, t)));
  // "Rules" next to the variant select: the selected variant's rules page (orthodox chess has none).
  const rulesLink = h('a', { class: 'rules-link', id: 'analysis-rules', href: '/' }, 'Rules');
  const syncRules = () => {
    const href = rulesHref(variantSel.value);
    rulesLink.hidden = !href;
    if (href) rulesLink.href = href;
    rulesLink.title = `The rules of ${variantTitle(variantSel.value)}`;
  };
  syncRules();
  const fenInput = h('input', { type: 'text', id: 'fen', class: 'fen', 'aria-label': 'Position (extended FEN)', style: 'flex:1; min-width: 12em' });
  const engineBox = h('input', { type: 'checkbox', id: 'engine-on', checked: engineOn, onchange: () => { engineOn = engineBox.checked; analyse(); } });
  const multipv = h('select', { id: 'multipv', 'aria-label': 'Engine lines', onchange: () => analyse() }, [1, 2, 3, 4, 5].map(n => h('option', { value: String(n), selected: n === 3 }, `${n} line${n > 1 ? 's' : ''}`)));
  const movetime = h('select', { id: 'movetime', 'aria-label': 'Thinking time', onchange: () => analyse() }, [[1000, '1 s'], [3000, '3 s'], [10000, '10 s'], [30000, '30 s']].map(([v, t]) => h('option', { value: String(v), selected: v === 3000 }, String(t))));
  const dmBtn = h('button', { id: 'double-toggle', class: 'toggle', onclick: () => { doubleMode = !doubleMode; render(); } }, 'Double Move');
  const linesEl = h('div', { class: 'lines', id: 'engine-lines' });
  const tree = h('div', { class: 'tree', id: 'tree' });
  // Evaluation bar: White's share of the best line's score (vertical beside the board, a strip on a phone).
  const evalFill = h('div', { class: 'eval-fill' });
  const evalText = h('div', { class: 'eval-text' });
  const evalBar = h('div', { class: 'eval-bar', id: 'eval-bar', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '50',
    'aria-label': "Evaluation: White's share", title: "Evaluation (White's share)" }, evalFill, evalText);
  const pgnText = h('textarea', { id: 'pgn-input', rows: 5, placeholder: '[Variant "Double Move Chess"]\n\n1. e4,d4 …' });
  const graph = h('div', { id: 'graph' });
  const graphBtn = h('button', { id: 'eval-graph', onclick: () => evalGraph() }, 'Evaluation graph');

  app.append(h('div', { class: 'analysis-page' },
    h('div', { class: 'board-col' }, h('div', { class: 'board-eval' }, evalBar, boardEl),
      h('div', { class: 'row' }, h('button', { onclick: () => go(root), title: 'start' }, '|◀'), h('button', { id: 'prev', onclick: () => cur.parent && go(cur.parent) }, '◀'),
        h('button', { id: 'next', onclick: () => cur.children[0] && go(cur.children[0]) }, '▶'), h('button', { onclick: () => { let n = cur; while (n.children[0]) n = n.children[0]; go(n); }, title: 'end' }, '▶|'),
        h('button', { onclick: () => { cg.toggleOrientation(); evalBar.classList.toggle('flipped', cg.state.orientation === 'black'); } }, 'Flip'), dmBtn)),
    h('div', { class: 'side-col panel' }, title, status,
      h('div', { class: 'row' }, 'Variant', variantSel, rulesLink),
      h('div', { class: 'row' }, fenInput, h('button', { onclick: () => setRoot(fenInput.value.trim()) }, 'Load FEN')),
      h('div', { class: 'row' }, h('label', {}, engineBox, ' Engine'), multipv, movetime),
      linesEl, error, tree,
      h('details', { id: 'pgn-import', open: !params.get('game') }, h('summary', {}, 'Import PGN'), pgnText, h('button', { id: 'pgn-load', onclick: () => importPgn(pgnText.value) }, 'Import')),
      h('div', { class: 'row' }, graphBtn, h('span', { class: 'muted' }, 'evaluates each turn of the main line briefly')), graph,
    ),
  ));

  const cg: Api = Chessground(boardEl, {
    coordinates: true,
    movable: { free: false, showDests: true, events: { after: (o: Key, d: Key) => played(o, d) } },
    draggable: { enabled: true },
    premovable: { enabled: false },
  });
  freshBounds(cg, boardEl);

  // Engine WebSocket (one search at a time: a new request stops the last one).
  let ws: WebSocket | null = null;
  let wsReady: Promise<void> | null = null;
  function socket(): Promise<void> {
    if (ws && ws.readyState <= 1 && wsReady) return wsReady;
    ws = new WebSocket(wsUrl('/api/analysis/ws'));
    sent = started = 0;
    startFen = '';
    wsReady = new Promise(ok => (ws!.onopen = () => ok()));
    ws.onmessage = ev => {
      const m = JSON.parse(ev.data);
      if (m.type === 'error') return void (error.textContent = m.error);
      if (m.type === 'start') {
        started++;
        startFen = m.fen;
      }
      // Only the latest request's messages: counted by its `start`, or (when a queued request was stopped
      // before it started, so its `start` never came) by the position the `start` names.
      if (started !== sent && startFen !== cur.fen) return;
      if (m.type === 'info') {
        lines = m.lines;
        depthInfo = `depth ${m.depth}${m.seldepth ? `/${m.seldepth}` : ''} · ${m.nodes} nodes · ${(m.time_ms / 1000).toFixed(1)} s`;
        renderLines(false);
      } else if (m.type === 'bestmove') {
        // the best turn in SAN (from the best line), else as the server names it
        const t = lines[0] ? lineMoves(lines[0])[0] : undefined;
        depthInfo += ` · best ${t ? t.moves.map(x => x.san).join(',') : m.turn}`;
        renderLines(true);
      }
    };
    ws.onclose = () => { ws = null; };
    return wsReady;
  }
  async function analyse(): Promise<void> {
    lines = [];
    depthInfo = '';
    renderLines(false);
    if (!engineOn) {
      if (ws && ws.readyState === 1) ws.send(JSON.stringify({ type: 'stop' }));
      return;
    }
    await socket();
    sent++;
    ws!.send(JSON.stringify({ variant, fen: cur.fen, multipv: Number(multipv.value), movetime: Number(movetime.value) }));
  }
  function renderLines(done: boolean): void {
    if (!engineOn) return void linesEl.replaceChildren(h('div', { class: 'muted' }, 'Engine off.'));
    const who = sideToMove(cur.fen);
    linesEl.replaceChildren(
      h('div', { class: 'muted' }, lines.length ? `${done ? 'done' : 'thinking'} · ${depthInfo} · scores for ${who}` : 'Engine thinking…'),
      ...lines.map(l => h('div', { class: 'line', 'data-multipv': String(l.multipv) }, h('span', { class: 'score' }, scoreText(l.score)),
        h('span', { class: 'pv' }, lineMoves(l).flatMap((t, ti) => [ti ? ' ' : '', t.num,
          ...t.moves.flatMap((m, i) => [i ? ',' : '', h('button', { type: 'button', class: 'pv-move', 'data-uci': m.uci, 'data-turn': String(ti), 'data-index': String(i), title: 'play the line up to this move',
            onclick: () => playLine(l, m) }, m.san)])])))),
    );
    if (lines[0]) setEval(lines[0].score, who);
    const best = lines[0]?.pv.split(/[ ,]/)[0];
    cg.setAutoShapes(best ? [{ orig: best.slice(0, 2) as Key, dest: best.slice(2, 4) as Key, brush: 'paleBlue' }] : []);
  }

  function setEval(score: { cp?: number; mate?: number }, who: 'white' | 'black'): void {
    const share = whiteShare(score, who);
    const pct = Math.round(share * 1000) / 10;
    // the score from White's view
    const w = who === 'white' ? score : { cp: score.cp === undefined ? undefined : -score.cp, mate: score.mate === undefined ? undefined : -score.mate };
    const text = scoreText(w);
    showEval(pct, text);
  }
  function showEval(pct: number, text: string): void {
    evalFill.style.setProperty('--share', `${pct}%`);
    evalText.textContent = text;
    evalText.classList.toggle('black-side', pct < 50);
    evalBar.setAttribute('aria-valuenow', String(pct));
    evalBar.setAttribute('aria-valuetext', `${text} (White ${Math.round(pct)}%)`);
    evalBar.dataset.share = String(pct);
  }

  /** Plays an engine line up to (and with) one of its moves into the tree, through the server's PGN import. */
  async function playLine(l: Line, upTo: LineMove): Promise<void> {
    const from = cur;
    const turns = lineMoves(l);
    const chosen: LineMove[] = [];
    const parts: string[] = [];
    turns.slice(0, upTo.turn + 1).forEach((t, ti) => {
      const ms = ti === upTo.turn ? t.moves.slice(0, upTo.index + 1) : t.moves;
      chosen.push(...ms);
      // an unfinished turn ends with a comma
      parts.push(ms.map(m => m.uci).join(',') + (ti === upTo.turn && !upTo.last ? ',' : ''));
    });
    error.textContent = '';
    try {
      const r = await api<Import>('POST', '/api/pgn/import', { variant, pgn: pgnFrom(from.fen, parts.join(' ')) });
      let n = from;
      chosen.forEach((m, k) => {
        // the first half of a two-move turn of Double Move Chess is a Double Move (marked * in the tree)
        const key = m.uci + (variant === 'double-move' && turns[m.turn].moves.length > 1 && m.index === 0 ? '*' : '');
        let c = n.children.find(x => x.uci === key);
        if (!c) {
          c = { fen: r.positions[k + 1] ?? r.fen, uci: key, san: m.san, parent: n, children: [] };
          n.children.push(c);
        }
        n = c;
      });
      if (!n.legal) {
        n.legal = r.legal;
        n.check = r.check;
      }
      go(n);
    } catch (e: any) {
      error.textContent = e.message;
    }
  }

  async function legalOf(n: Node): Promise<Legal | undefined> {
    if (n.legal) return n.legal;
    const r = await api<any>('POST', '/api/fen/validate', { variant, fen: n.fen });
    if (!r.ok) {
      error.textContent = r.error;
      return undefined;
    }
    n.fen = r.fen;
    n.legal = r.legal;
    n.check = r.check;
    n.result = r.result;
    n.reasonText = r.reason_text;
    return n.legal;
  }

  const pgnFrom = (fen: string, movetext: string) => `[SetUp "1"]\n[FEN "${fen}"]\n\n${movetext}`;

  async function played(orig: Key, dest: Key): Promise<void> {
    let uci = orig + dest;
    if (needsPromotion(cur.legal, orig, dest)) {
      const l = await askPromotion(sideToMove(cur.fen));
      if (!l) return render();
      uci += l;
    }
    const dbl = doubleMode;
    doubleMode = false;
    const key = uci + (dbl ? '*' : '');
    const known = cur.children.find(c => c.uci === key);
    if (known) return go(known);
    try {
      const r = await api<Import>('POST', '/api/pgn/import', { variant, pgn: pgnFrom(cur.fen, uci + (dbl ? ',' : '')) });
      const n: Node = { fen: r.fen, uci: key, san: r.turns[0]?.san.replace(/,$/, '') ?? uci, parent: cur, children: [], legal: r.legal, check: r.check };
      cur.children.push(n);
      go(n);
    } catch (e: any) {
      error.textContent = e.message;
      render();
    }
  }

  function go(n: Node): void {
    cur = n;
    error.textContent = '';
    doubleMode = false;
    render();
    legalOf(n).then(() => {
      if (cur !== n) return;
      render();
      // a finished position: the bar shows its result
      if (n.result === '1-0' || n.result === '0-1' || n.result === '1/2-1/2') showEval(n.result === '1-0' ? 100 : n.result === '0-1' ? 0 : 50, n.result === '1/2-1/2' ? '½-½' : n.result);
    });
    analyse();
  }

  function render(): void {
    const turn = sideToMove(cur.fen);
    const legal = cur.legal;
    const canDouble = variant === 'double-move' && !!legal?.double_dests && Object.keys(legal.double_dests).length > 0;
    if (!canDouble) doubleMode = false;
    dmBtn.hidden = variant !== 'double-move';
    dmBtn.disabled = !canDouble;
    dmBtn.classList.toggle('on', doubleMode);
    dmBtn.setAttribute('aria-pressed', String(doubleMode));
    dmBtn.textContent = doubleMode ? 'Double Move: ON' : 'Double Move';
    // Check as the server says: the side to move's king, else (between the halves of a turn) the other.
    const checked = cur.check ?? false;
    cg.set({
      fen: boardFen(cur.fen),
      turnColor: turn,
      check: checked,
      lastMove: cur.uci ? [cur.uci.slice(0, 2) as Key, cur.uci.slice(2, 4) as Key] : undefined,
      movable: { color: turn, dests: toDests(doubleMode ? legal?.double_dests : legal?.dests) },
    });
    fenInput.value = cur.fen;
    title.replaceChildren(h('strong', {}, `Analysis · ${variantTitle(variant)}`), gameInfo ? h('span', { class: 'muted' }, ` · ${gameInfo}`) : '');
    const st = cur.fen.split(' ')[6] ?? '';
    const phase = variant === 'two-move' ? (st === 'R' ? 'response move' : st.startsWith('H') ? 'second move' : 'move')
      : variant === 'double-move' ? (st.endsWith('m') ? 'Double Move: second half' : 'move')
      : variant === 'twinmove' ? (st === 'P' ? 'piece move after the pawn move' : 'move') : 'move';
    const none = legal && Object.keys(legal.dests).length === 0 && Object.keys(legal.double_dests ?? {}).length === 0;
    status.textContent = none ? 'No legal moves (game over)' : `${turn === 'white' ? 'White' : 'Black'} to play: ${phase}`;
    renderTree();
    markGraph();
  }

  function renderTree(): void {
    const el = h('div', {});
    const label = (n: Node, force: boolean) => {
      const p = n.parent!;
      const starts = turnStart(variant, p.fen);
      const num = starts ? (sideToMove(p.fen) === 'white' ? `${fullmove(p.fen)}. ` : force ? `${fullmove(p.fen)}… ` : '') : '';
      return h('span', {}, starts ? ' ' : ',',
        h('span', { class: `mturn link${n === cur ? ' current' : ''}`, 'data-uci': n.uci, onclick: () => go(n) },
          num + n.san + (n.uci?.endsWith('*') ? '²' : '')));
    };
    const line = (start: Node, into: HTMLElement, force: boolean) => {
      let n: Node | undefined = start;
      let f = force;
      while (n) {
        into.append(label(n, f));
        f = false;
        const parent: Node = n.parent!;
        const alts = parent.children.slice(1);
        if (n === parent.children[0] && alts.length) {
          for (const a of alts) {
            const v = h('span', { class: 'var' }, ' (');
            line(a, v, true);
            v.append(') ');
            into.append(v);
          }
          f = true;
        }
        n = n.children[0];
      }
    };
    if (root.children[0]) line(root.children[0], el, true);
    tree.replaceChildren(root.children.length ? el : h('div', { class: 'muted' }, 'Play moves on the board, or import a PGN.'));
  }

  async function setRoot(fen: string): Promise<void> {
    const r = await api<any>('POST', '/api/fen/validate', { variant, fen });
    if (!r.ok) {
      error.textContent = r.error;
      return;
    }
    root = { fen: r.fen, uci: null, san: '', parent: null, children: [], legal: r.legal, check: r.check, result: r.result, reasonText: r.reason_text };
    gameInfo = '';
    gameResult = null;
    gameEnd = null;
    graph.replaceChildren();
    graphNodes = [];
    history.replaceState(null, '', `/analysis?variant=${variant}&fen=${encodeURIComponent(r.fen)}`);
    go(root);
  }

  function loadImport(r: Import, info: string): void {
    variant = r.variant;
    variantSel.value = variant;
    syncRules();
    root = { fen: r.initial_fen, uci: null, san: '', parent: null, children: [] };
    let n = root;
    let k = 0;
    r.turns.forEach(t => {
      const ucis = t.uci.split(','), sans = t.san.split(',');
      ucis.forEach((u, i) => {
        const double = variant === 'double-move' && ucis.length === 2 && i === 0;
        const fen = r.positions[++k];
        const c: Node = { fen, uci: u + (double ? '*' : ''), san: sans[i] ?? u, parent: n, children: [] };
        n.children.push(c);
        n = c;
      });
    });
    n.legal = r.legal;
    n.check = r.check;
    gameResult = r.reason_text ? r.result : null; // decided by the rules (not a resignation)
    gameEnd = n;
    graph.replaceChildren();
    graphNodes = [];
    gameInfo = info + (r.result && r.result !== '*' ? ` · ${r.result}` : '') + (r.reason_text ? ` · ${r.reason_text}` : '');
    go(n);
  }

  async function importPgn(text: string, info = 'imported PGN'): Promise<void> {
    error.textContent = '';
    try {
      loadImport(await api<Import>('POST', '/api/pgn/import', { pgn: text }), info);
    } catch (e: any) {
      error.textContent = e.message;
    }
  }

  /**
   * The score of a position whose game is over, from White's view: ±1000 for a win, 0 for a draw (the
   * engine has no move to search there, and 0.0 would read as an even game). Null while the game goes on.
   */
  async function decided(n: Node): Promise<{ score: number; text: string } | null> {
    const win = (w: boolean, why: string) => ({ score: w ? 1000 : -1000, text: `${w ? '1-0' : '0-1'} · ${w ? 'White' : 'Black'} won (${why})` });
    const scored = (result: string | null | undefined, why: string) =>
      result === '1-0' ? win(true, why) : result === '0-1' ? win(false, why) : result === '1/2-1/2' ? { score: 0, text: `½-½ · ${why}` } : null;
    if (n === gameEnd && gameResult && gameResult !== '*') return scored(gameResult, 'game over');
    // A position with a move after it is not over.
    if (n.children.length) return null;
    // The position's own result (checkmate, a captured king, stalemate…) as the rules crate decides it.
    if (n.result === undefined) await legalOf(n);
    return scored(n.result, n.reasonText ?? 'game over');
  }

  // Evaluation graph: each position of the main line at a turn start, analysed briefly on its own socket.
  async function evalGraph(): Promise<void> {
    const nodes: Node[] = [];
    for (let n: Node | undefined = root; n; n = n.children[0]) if (turnStart(variant, n.fen) || !n.children[0]) nodes.push(n);
    if (nodes.length < 2) return void graph.replaceChildren(h('div', { class: 'muted' }, 'Load a game or play some turns first.'));
    graphBtn.disabled = true;
    const evals: Point[] = [];
    const sock = new WebSocket(wsUrl('/api/analysis/ws'));
    await new Promise(ok => (sock.onopen = ok));
    const perMove = Math.max(50, Math.min(300, Math.floor(20000 / nodes.length)));
    for (const n of nodes) {
      const over = await decided(n);
      if (over) {
        evals.push(over);
        drawGraph(evals, nodes);
        continue;
      }
      const score = await new Promise<number | null>(ok => {
        let last: Line | undefined;
        sock.onmessage = ev => {
          const m = JSON.parse(ev.data);
          if (m.type === 'info') last = m.lines[0];
          if (m.type === 'bestmove' || m.type === 'error') {
            if (!last) return ok(null);
            const s = last.score.mate !== undefined ? Math.sign(last.score.mate) * 1000 : Math.max(-1000, Math.min(1000, last.score.cp ?? 0));
            ok(sideToMove(n.fen) === 'white' ? s : -s);
          }
        };
        sock.send(JSON.stringify({ variant, fen: n.fen, multipv: 1, movetime: perMove }));
      });
      evals.push(score === null ? null : { score, text: (score > 0 ? '+' : '') + (score / 100).toFixed(2) });
      drawGraph(evals, nodes);
    }
    sock.close();
    graphBtn.disabled = false;
  }
  type Point = { score: number; text: string } | null;
  function drawGraph(evals: Point[], nodes: Node[]): void {
    // The plot area inside margins for the axis labels; scores squashed by tanh (±10 pawns near the edge).
    // As wide as its place on the page (at least 300): the labels keep their size on a phone.
    const W = Math.max(300, Math.round(graph.clientWidth || 640)), H = 170, L = 52, R = 8, T = 8, B = 30, n = nodes.length;
    const pw = W - L - R, ph = H - T - B, mid = T + ph / 2;
    const x = (i: number) => L + (n > 1 ? (i * pw) / (n - 1) : 0);
    const y = (v: number) => mid - (Math.tanh(v / 400) * ph) / 2;
    const known = evals.map((p, i) => [i, p] as const).filter((e): e is readonly [number, { score: number; text: string }] => e[1] !== null);
    const pts = known.map(([i, p]) => `${x(i).toFixed(1)},${y(p.score).toFixed(1)}`);
    const ns = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(ns, 'svg');
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    svg.setAttribute('class', 'graph');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', "evaluation of each turn, from White's view");
    const ticks = [300, 100, 0, -100, -300].map(v =>
      `<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="${v ? '#e4e4e4' : '#999'}" stroke-width="1"/>` +
      `<text class="tick" x="${L - 4}" y="${y(v) + 4}" text-anchor="end">${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(v / 100)}</text>`).join('');
    // turn numbers along the bottom: about eight labels whatever the length
    const step = Math.max(1, Math.ceil(n / 8));
    const xt = nodes.map((nd, i) => (i % step === 0 || i === n - 1 ? `<text class="tick" x="${x(i)}" y="${T + ph + 13}" text-anchor="middle">${fullmove(nd.fen)}${sideToMove(nd.fen) === 'black' ? '…' : ''}</text>` : '')).join('');
    svg.innerHTML = `<rect x="${L}" y="${T}" width="${pw}" height="${ph / 2}" fill="#fff"/><rect x="${L}" y="${mid}" width="${pw}" height="${ph / 2}" fill="#ddd"/>` +
      ticks + xt +
      `<line x1="${L}" x2="${L}" y1="${T}" y2="${T + ph}" stroke="#999"/>` +
      `<text class="axis-label" x="${L + 4}" y="${T + 11}">White better ↑</text>` +
      `<text class="axis-label" x="${L + 4}" y="${T + ph - 4}">Black better ↓</text>` +
      `<text class="axis-label" x="${L + pw / 2}" y="${H - 3}" text-anchor="middle">turn (score in pawns, White's view)</text>` +
      `<polyline points="${pts.join(' ')}" fill="none" stroke="#3b7d3b" stroke-width="2"/>` +
      `<line class="cursor" x1="0" x2="0" y1="${T}" y2="${T + ph}" visibility="hidden"/>` +
      known.map(([i, p]) => `<circle cx="${x(i).toFixed(1)}" cy="${y(p.score).toFixed(1)}" r="4" fill="#3b7d3b" data-i="${i}" data-eval="${p.score}"><title>${p.text}</title></circle>`).join('');
    // A click anywhere on the graph goes to the turn nearest to it (a point itself is a small target).
    svg.addEventListener('click', (e: MouseEvent) => {
      const r = svg.getBoundingClientRect();
      if (!r.width || n < 1) return;
      const vx = ((e.clientX - r.left) * W) / r.width;
      const i = n > 1 ? Math.max(0, Math.min(n - 1, Math.round(((vx - L) * (n - 1)) / pw))) : 0;
      go(nodes[i]);
    });
    graphNodes = nodes;
    const missing = evals.filter(e => e === null).length;
    graph.replaceChildren(svg, h('div', { class: 'muted', id: 'graph-info' },
      `${evals.length}/${n} positions · White's view · a finished position counts as its result${missing ? ` · ${missing} without a score` : ''} · click the graph to go to a turn`));
    markGraph();
  }
  /** Marks the shown position on the graph (a line and its point), if it is one of the graph's turns. */
  function markGraph(): void {
    const svg = graph.querySelector('svg');
    if (!svg) return;
    const i = graphNodes.indexOf(cur);
    svg.querySelectorAll('circle').forEach(c => c.classList.toggle('current', Number(c.getAttribute('data-i')) === i));
    const line = svg.querySelector('line.cursor');
    const at = i >= 0 ? svg.querySelector(`circle[data-i="${i}"]`)?.getAttribute('cx') ?? null : null;
    if (line) {
      line.setAttribute('visibility', at === null ? 'hidden' : 'visible');
      if (at !== null) {
        line.setAttribute('x1', at);
        line.setAttribute('x2', at);
      }
    }
  }

  // Start: a server game (?game=id), a PGN, or a FEN.
  const gid = params.get('game');
  if (gid) {
    fetch(`/api/games/${gid}/pgn`).then(r => r.ok ? r.text() : Promise.reject(new Error(`game ${gid}: ${r.status}`)))
      .then(t => { pgnText.value = t; return importPgn(t, `game ${gid}`); })
      .catch(e => (error.textContent = e.message));
  } else {
    setRoot(root.fen);
  }
  renderLines(false);
  render();
}
