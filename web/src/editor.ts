// Board editor: pieces from a palette (click a square to place; drag pieces; drag off the board or use
// the eraser to remove), side to move, castling, en passant, the variant's turn state, FEN both ways,
// validation by the server (POST /api/fen/validate), then play from here or analyse.
import { Chessground } from '@lichess-org/chessground';
import type { Api } from '@lichess-org/chessground/api';
import type { Key, Piece, Role, Color as CgColor } from '@lichess-org/chessground/types';
import { api, VARIANTS, type Variant } from './api';
import { START } from './analysis';
import { createForm } from './lobby';
import { freshBounds, h } from './util';

const ROLES: Role[] = ['king', 'queen', 'rook', 'bishop', 'knight', 'pawn'];
type Tool = { piece: Piece } | 'move' | 'erase';

export function editorPage(app: HTMLElement, params: URLSearchParams): void {
  let variant: Variant = (params.get('variant') as Variant) || 'double-move';
  if (!START[variant]) variant = 'double-move';
  let tool: Tool = 'move';
  let timer: number | undefined;

  const boardEl = h('div', { class: 'board-wrap' });
  const variantSel = h('select', { id: 'ed-variant', onchange: () => { variant = variantSel.value as Variant; turnStateUi(); sync(); } },
    VARIANTS.map(([k, t]) => h('option', { value: k, selected: k === variant }, t)));
  const side = h('select', { id: 'ed-side', onchange: () => sync() }, h('option', { value: 'w' }, 'White'), h('option', { value: 'b' }, 'Black'));
  const castle: Record<string, HTMLInputElement> = {};
  for (const c of 'KQkq') castle[c] = h('input', { type: 'checkbox', id: `ed-castle-${c}`, checked: true, onchange: () => sync() });
  const ep = h('input', { type: 'text', id: 'ed-ep', placeholder: '-', size: 3, oninput: () => sync() });
  const halfmove = h('input', { type: 'text', id: 'ed-half', value: '0', size: 3, oninput: () => sync() });
  const fullmove = h('input', { type: 'text', id: 'ed-full', value: '1', size: 3, oninput: () => sync() });
  // turn state controls
  const dmW = h('input', { type: 'checkbox', id: 'ed-dm-w', checked: true, onchange: () => sync() });
  const dmB = h('input', { type: 'checkbox', id: 'ed-dm-b', checked: true, onchange: () => sync() });
  const dmM = h('input', { type: 'checkbox', id: 'ed-dm-m', onchange: () => sync() });
  const tmPhase = h('select', { id: 'ed-tm-phase', onchange: () => { tmSquares.hidden = tmPhase.value !== 'H'; sync(); } },
    h('option', { value: 'R' }, 'R: response move turn'), h('option', { value: 'T' }, 'T: start of a normal turn'), h('option', { value: 'H' }, 'H: half way (squares of the moved piece)'));
  const tmSquares = h('input', { type: 'text', id: 'ed-tm-squares', placeholder: 'f3 (or g1f1 after O-O)', size: 10, hidden: true, oninput: () => sync() });
  const twPhase = h('select', { id: 'ed-tw-phase', onchange: () => sync() }, h('option', { value: 'T' }, 'T: start of a turn'), h('option', { value: 'P' }, 'P: after the pawn move'));
  const turnState = h('div', { class: 'wide', id: 'ed-turn-state' });
  const fenInput = h('input', { type: 'text', id: 'ed-fen', style: 'width:100%', oninput: () => fromFen(fenInput.value, false) });
  const verdict = h('div', { id: 'ed-validation' });
  const playBox = h('div', { id: 'ed-play' });

  function turnStateUi(): void {
    turnState.replaceChildren();
    if (variant === 'double-move')
      turnState.append(h('div', {}, 'Double Move: ', h('label', { class: 'inline' }, dmW, 'White has it'), h('label', { class: 'inline' }, dmB, 'Black has it'), h('label', { class: 'inline' }, dmM, 'side to move is between the halves (m)')));
    else if (variant === 'two-move') turnState.append(h('div', { class: 'row' }, 'Two Move phase: ', tmPhase, tmSquares));
    else if (variant === 'twinmove') turnState.append(h('div', { class: 'row' }, 'Twinmove phase: ', twPhase));
    else turnState.append(h('div', { class: 'muted' }, 'Orthodox chess has no turn state.'));
  }

  const palette = h('div', { class: 'palette', id: 'palette' });
  const tools: [Tool, HTMLElement][] = [];
  const addTool = (t: Tool, el: HTMLElement) => {
    tools.push([t, el]);
    el.addEventListener('click', () => {
      tool = t;
      tools.forEach(([x, e]) => e.classList.toggle('sel', x === t));
      cg.set({ movable: { color: 'both' } });
    });
    palette.append(el);
  };
  addTool('move', h('button', { title: 'move pieces', id: 'tool-move', class: 'sel' }, '✥'));
  for (const color of ['white', 'black'] as CgColor[])
    for (const role of ROLES) addTool({ piece: { role, color } }, h('button', { class: 'cg-wrap', id: `tool-${color}-${role}`, title: `${color} ${role}` }, h('piece', { class: `${role} ${color}` })));
  addTool('erase', h('button', { title: 'remove pieces', id: 'tool-erase' }, 'Erase'));

  app.append(h('div', { class: 'editor-page' },
    h('div', { class: 'board-col' }, boardEl, palette,
      h('div', { class: 'row' },
        h('button', { id: 'ed-start', onclick: () => fromFen(START[variant], true) }, 'Start position'),
        h('button', { id: 'ed-clear', onclick: () => { cg.set({ fen: '8/8/8/8/8/8/8/8' }); sync(); } }, 'Clear board'),
        h('button', { onclick: () => cg.toggleOrientation() }, 'Flip'))),
    h('div', { class: 'side-col panel' },
      h('h2', {}, 'Board editor'),
      h('div', { class: 'editor-form' },
        h('label', {}, 'Variant', variantSel),
        h('label', {}, 'Side to move', side),
        h('div', {}, 'Castling ', ...'KQkq'.split('').map(c => h('label', { class: 'inline' }, castle[c], c))),
        h('label', {}, 'En passant square', ep),
        h('label', {}, 'Halfmove clock', halfmove),
        h('label', {}, 'Fullmove number', fullmove),
        turnState,
        h('label', { class: 'wide' }, 'FEN', fenInput)),
      verdict,
      h('div', { class: 'row' },
        h('button', { id: 'ed-analyse', class: 'primary', onclick: () => (location.href = `/analysis?variant=${variant}&fen=${encodeURIComponent(fenInput.value)}`) }, 'Analyse'),
        h('button', { id: 'ed-play-btn', onclick: () => { playBox.replaceChildren(h('h2', {}, 'Play from here'), createForm({ fen: fenInput.value, variant })); } }, 'Play from here…')),
      playBox)));

  const cg: Api = Chessground(boardEl, {
    fen: START[variant].split(' ')[0],
    coordinates: true,
    movable: { free: true, color: 'both', showDests: false },
    premovable: { enabled: false },
    draggable: { enabled: true, deleteOnDropOff: true },
    animation: { enabled: false },
    events: {
      change: () => sync(),
      select: (key: Key) => {
        if (tool === 'move') return;
        const diff = new Map();
        diff.set(key, tool === 'erase' ? undefined : { ...tool.piece });
        cg.setPieces(diff);
        cg.selectSquare(null);
        sync();
      },
    },
  });
  freshBounds(cg, boardEl);

  function compose(): string {
    let cas = 'KQkq'.split('').filter(c => castle[c].checked).join('') || '-';
    let st = '';
    if (variant === 'double-move') st = (dmW.checked ? 'W' : '-') + (dmB.checked ? 'B' : '-') + (dmM.checked ? 'm' : '');
    else if (variant === 'two-move') st = tmPhase.value === 'H' ? 'H' + tmSquares.value.trim() : tmPhase.value;
    else if (variant === 'twinmove') st = twPhase.value;
    return [cg.getFen(), side.value, cas, ep.value.trim() || '-', halfmove.value.trim() || '0', fullmove.value.trim() || '1', st].filter(x => x !== '').join(' ');
  }
  function sync(): void {
    fenInput.value = compose();
    validate();
  }
  function fromFen(fen: string, rewrite: boolean): void {
    const f = fen.trim().split(/\s+/);
    try { cg.set({ fen: f[0] }); } catch { /* an unreadable placement: the server explains */ }
    side.value = f[1] === 'b' ? 'b' : 'w';
    for (const c of 'KQkq') castle[c].checked = (f[2] ?? 'KQkq').includes(c);
    ep.value = f[3] && f[3] !== '-' ? f[3] : '';
    halfmove.value = f[4] ?? '0';
    fullmove.value = f[5] ?? '1';
    const st = f[6] ?? '';
    if (variant === 'double-move') { dmW.checked = !st || st[0] === 'W'; dmB.checked = !st || st[1] === 'B'; dmM.checked = st.endsWith('m'); }
    if (variant === 'two-move') { tmPhase.value = st ? st[0] : 'T'; tmSquares.value = st.startsWith('H') ? st.slice(1) : ''; tmSquares.hidden = tmPhase.value !== 'H'; }
    if (variant === 'twinmove') twPhase.value = st === 'P' ? 'P' : 'T';
    if (rewrite) fenInput.value = compose();
    validate();
  }
  function validate(): void {
    clearTimeout(timer);
    timer = window.setTimeout(async () => {
      const fen = fenInput.value;
      try {
        const r = await api<any>('POST', '/api/fen/validate', { variant, fen });
        if (fen !== fenInput.value) return;
        verdict.className = r.ok ? 'ok' : 'error';
        verdict.textContent = r.ok ? `Valid: ${r.turn} to play (${r.phase}). ${r.fen !== fen ? `Normalised: ${r.fen}` : ''}` : r.error;
      } catch (e: any) {
        verdict.className = 'error';
        verdict.textContent = e.message;
      }
    }, 150);
  }
  turnStateUi();
  fromFen(params.get('fen') || START[variant], true);
}
