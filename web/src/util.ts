// Small DOM helpers and board conversions (the browser has no rules engine: legality comes from the server).
import type { Key, Dests, Role } from '@lichess-org/chessground/types';
import type { Legal, Turn } from './api';

type Child = Node | string | null | undefined | false;
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Record<string, any>, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Record<string, any>, ...children: (Child | Child[])[]): HTMLElement;
export function h(tag: string, attrs: Record<string, any> = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k in el && typeof v !== 'string') (el as any)[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

export function toDests(m: Record<string, string[]> | undefined): Dests {
  const d: Dests = new Map();
  for (const [k, v] of Object.entries(m ?? {})) d.set(k as Key, v as Key[]);
  return d;
}
export function mergeDests(...ms: (Record<string, string[]> | undefined)[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of ms)
    for (const [k, v] of Object.entries(m ?? {})) out[k] = [...new Set([...(out[k] ?? []), ...v])];
  return out;
}
export const boardFen = (fen: string): string => fen.split(' ')[0];
export const needsPromotion = (legal: Legal | undefined, orig: string, dest: string): boolean =>
  !!legal?.promotions.includes(orig + dest);

export function lastMoveOf(moves: string[]): Key[] | undefined {
  const m = moves[moves.length - 1];
  return m ? [m.slice(0, 2) as Key, m.slice(2, 4) as Key] : undefined;
}

export function fmtClock(ms: number): string {
  const neg = ms < 0;
  ms = Math.max(0, ms);
  const t = Math.floor(ms / 1000);
  const hh = Math.floor(t / 3600), mm = Math.floor((t % 3600) / 60), ss = t % 60;
  const base = hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}` : `${mm}:${String(ss).padStart(2, '0')}`;
  return (neg ? '-' : '') + (ms < 10000 ? `${base}.${Math.floor((ms % 1000) / 100)}` : base);
}

export const KIND_MARK: Record<string, string> = { single: '¹', response: 'ʳ', double: '²' };
export const KIND_TITLE: Record<string, string> = {
  single: 'single move turn (check, capture, promotion or en passant allowed)',
  response: 'response move turn',
  double: 'two-move turn (Double Move)',
};

/** The legend of the move list's turn marks for a variant (none for orthodox chess). */
export function markLegend(variant: string): HTMLElement | null {
  const marks: [string, string][] =
    variant === 'two-move'
      ? [['¹', 'one-move turn: a check, capture, promotion or en-passant chance ended it'], ['ʳ', 'response move: the one-move answer']]
      : variant === 'double-move'
        ? [['²', 'Double Move: two moves in one turn']]
        : variant === 'twinmove'
          ? [['²', 'two-move turn: a pawn move, then a piece move']]
          : [];
  if (!marks.length) return null;
  return h(
    'div',
    { class: 'mark-legend', id: 'mark-legend' },
    ...marks.map(([m, text]) => h('span', {}, h('sup', { class: 'kind' }, m), ' ', text)),
    h('span', {}, h('code', {}, ',…'), ' turn half played'),
  );
}

/** A move list: numbered rows with white's and black's turn, clickable when `onClick` is given. */
export function moveList(turns: Turn[], current: number, onClick?: (i: number) => void): HTMLElement {
  const rows: HTMLElement[] = [];
  let row: HTMLElement | null = null;
  turns.forEach((t, i) => {
    if (t.color === 'white' || !row) {
      row = h('div', { class: 'mrow' }, h('span', { class: 'mnum' }, `${t.fullmove}.`));
      if (t.color === 'black') row.append(h('span', { class: 'mturn empty' }, '…'));
      rows.push(row);
    }
    // A turn still in progress has no kind yet (the server says `normal`): no mark until it is whole.
    const kind = t.kind && t.kind !== 'normal' && !(t.complete === false && t.kind === 'single') ? t.kind : null;
    const cell = h(
      'span',
      {
        class: `mturn${i === current ? ' current' : ''}${onClick ? ' link' : ''}`,
        title: kind ? KIND_TITLE[kind] : undefined,
        'data-ply': String(i),
        onclick: onClick ? () => onClick(i) : undefined,
      },
      t.san + (t.complete === false ? ',…' : ''),
      kind ? h('sup', { class: `kind ${kind}` }, KIND_MARK[kind]) : null,
    );
    row!.append(cell);
  });
  return h('div', { class: 'moves' }, rows.length ? rows : h('div', { class: 'muted' }, 'No moves yet.'));
}

export const ROLE_LETTER: Record<string, string> = { queen: 'q', rook: 'r', bishop: 'b', knight: 'n' };

/** Asks for a promotion piece (a modal over the board); resolves null when cancelled. */
export function askPromotion(color: 'white' | 'black'): Promise<string | null> {
  return new Promise(resolve => {
    const roles: Role[] = ['queen', 'knight', 'rook', 'bishop'];
    const close = (v: string | null) => {
      overlay.remove();
      resolve(v);
    };
    const overlay = h(
      'div',
      { class: 'promo-overlay', onclick: () => close(null) },
      h(
        'div',
        { class: 'promo cg-wrap', onclick: (e: Event) => e.stopPropagation() },
        h('div', { class: 'promo-title' }, 'Promote to'),
        roles.map(r =>
          h('button', { class: 'promo-choice', 'data-role': r, title: r, onclick: () => close(ROLE_LETTER[r]) },
            h('piece', { class: `${r} ${color}` })),
        ),
      ),
    );
    document.body.append(overlay);
  });
}

export function scoreText(s: { cp?: number; mate?: number } | undefined): string {
  if (!s) return '';
  if (s.mate !== undefined) return `#${s.mate}`;
  const cp = (s.cp ?? 0) / 100;
  return (cp > 0 ? '+' : '') + cp.toFixed(2);
}

/**
 * Keeps chessground's board bounds fresh. Chessground measures the board once and forgets the
 * measurement only on a scroll, a window resize or a change of the board's own size; content that
 * arrives above the board later (the account links in the header, the players by the clocks, a
 * message) moves the board without any of those, and the first taps then land a row off. Forgetting
 * the measurement as each press begins (before chessground reads it) makes every press measure anew.
 */
export function freshBounds(cg: { state: { dom: { bounds: { clear(): void } } } }, wrap: HTMLElement): void {
  const clear = () => cg.state.dom.bounds.clear();
  for (const ev of ['mousedown', 'touchstart', 'pointerdown']) wrap.addEventListener(ev, clear, { capture: true, passive: true });
}


