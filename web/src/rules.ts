// Rules pages, one per variant: /variant/two-move, /variant/double-move, /variant/twinmove. The rules in
// plain words (after shared/seeds, shared/RULINGS.md and docs/rules.md) with static mini-boards of the key
// cases. Every example carries its record in data-* attributes (variant, FEN, PGN movetext, the turns in UCI,
// a line the rules refuse, the expected result), and web/tests/rules-pages.test.mjs replays each one through
// POST /api/pgn/import, so an example the server does not accept fails the test.
import { Chessground } from '@lichess-org/chessground';
import type { Key } from '@lichess-org/chessground/types';
import type { DrawShape } from '@lichess-org/chessground/draw';
import type { Variant } from './api';
import { h } from './util';

export type RulesVariant = 'two-move' | 'double-move' | 'twinmove';
export const RULES_VARIANTS: RulesVariant[] = ['two-move', 'double-move', 'twinmove'];
/** The rules page of a variant, or null for orthodox chess (it has none). */
export const rulesHref = (v: Variant | string): string | null =>
  (RULES_VARIANTS as string[]).includes(v) ? `/variant/${v}` : null;

/** The variant names of PGN's Variant tag (as the server reads them). */
export const PGN_NAMES: Record<RulesVariant, string> = {
  'two-move': 'Two Move Chess',
  'double-move': 'Double Move Chess',
  twinmove: 'Twinmove Chess (uncompelled)',
};

interface Example {
  title: string;
  /** What happens, in a sentence or three. */
  text: string;
  /** The position on the mini-board (with the variant's 7th field). */
  fen: string;
  /** The movetext replayed from `fen` (shown under the board). */
  pgn: string;
  /** The same turns in UCI, one string per turn (`e7e5,b8c6`): the arrows, numbered in order. */
  turns: string[];
  /** A line from `fen` the rules refuse, and why (shown as "Not allowed"). */
  refused?: [string, string];
  /** The result the record ends with, when the game ends. */
  result?: string;
}

interface Page {
  title: string;
  intro: string;
  basics: string[];
  examples: Example[];
  rulings: string[];
  extra?: () => HTMLElement;
}

const PAGES: Record<RulesVariant, Page> = {
  'two-move': {
    title: 'Two Move Chess',
    intro: 'Ordinary chess pieces and board, but a turn is usually two moves. That evens out White\'s first-move edge: ' +
      'each side starts its turn one move behind and ends it one move ahead.',
    basics: [
      'White opens the game with a single move. After that, a normal turn is two moves by two different pieces.',
      'If the first move of a turn gives check, captures something, promotes a pawn or gives the opponent an en passant capture, the turn stops right there (a single move turn).',
      'After a single move turn the opponent gets exactly one move, the response move. Then play goes back to normal two-move turns, whatever the response did.',
      'Every move must be legal chess in the position where it is played: if you are in check, your first move must deal with it.',
      'The second move of a normal turn may do anything a legal move can: check, capture, promote, push a pawn two squares.',
    ],
    examples: [
      {
        title: 'The first turns',
        text: 'White starts with one move. Black answers with a full two-move turn: two moves by two different pieces.',
        fen: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R',
        pgn: '1.e4 e5,Nc6 *',
        turns: ['e2e4', 'e7e5,b8c6'],
        refused: ['1.e4 Nf6,Ng4 *', 'the same knight may not move twice in one turn'],
      },
      {
        title: 'A check ends the turn',
        text: '`Bb5+` is the first move of White\'s turn and gives check, so White\'s turn is over. Black gets one response move and blocks with `c6`.',
        fen: 'rnbqkbnr/ppp2ppp/8/3pp3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3 T',
        pgn: '3.Bb5+ c6 *',
        turns: ['f1b5', 'c7c6'],
      },
      {
        title: '…or check with the second move',
        text: 'The same check as the second move of a normal turn: `Nc3` first, then `Bb5+`. Black then has a full turn, but its first move must get out of check (`c6`), and `Nf6` follows.',
        fen: 'rnbqkbnr/ppp2ppp/8/3pp3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 0 3 T',
        pgn: '3.Nc3,Bb5+ c6,Nf6 *',
        turns: ['b1c3,f1b5', 'c7c6,g8f6'],
      },
      {
        title: 'A capture ends the turn',
        text: '`exd5` captures, so it is a single move turn. Black\'s response `Qxd5` captures too, but a response never earns a response: White plays a normal two-move turn next.',
        fen: 'rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2 T',
        pgn: '2.exd5 Qxd5 3.Nc3,Nf3 *',
        turns: ['e4d5', 'd8d5', 'b1c3,g1f3'],
      },
      {
        title: 'A promotion ends the turn',
        text: '`a8=Q` promotes, so White\'s turn ends with it. Black\'s king makes its response move.',
        fen: '8/P6k/8/8/8/8/8/4K3 w - - 0 1 T',
        pgn: '1.a8=Q Kg6 *',
        turns: ['a7a8q', 'h7g6'],
      },
      {
        title: 'An en passant chance ends the turn',
        text: '`e4` lets Black\'s d-pawn capture en passant, so the turn ends at once and Black can use the chance as its response: `dxe3`. White may not hide it by adding a second move.',
        fen: '4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1 T',
        pgn: '1.e4 dxe3 *',
        turns: ['e2e4', 'd4e3'],
        refused: ['1.e4,Kd2 *', '`e4` gives an en passant chance, so it ends the turn'],
      },
      {
        title: 'A lone king is stuck',
        text: 'White has only a king and it is the start of a normal turn. One piece cannot make two moves, and the king has nothing to capture: White has no legal turn and is not in check, so it is stalemate.',
        fen: '1r5k/8/8/8/8/8/8/K7 w - - 0 1 T',
        pgn: '*',
        turns: [],
        result: '1/2-1/2',
      },
    ],
    rulings: [
      'White\'s first turn counts as a response move turn: exactly one move.',
      'An en passant chance only ends the turn when the capture would really be legal for the opponent.',
      'After castling on the first move, neither the king nor that rook may make the second move.',
      'A quiet first move is only allowed if some other piece can then make a legal second move.',
      'A player who cannot complete any legal turn loses if in check (as if checkmated) and is stalemated otherwise.',
      'Repetition counts every position, half-way ones included; positions only match if the turn phase (normal turn, response, half way) and the pieces that may not move again match too. Threefold may be claimed, fivefold ends the game.',
      'The fifty-move rule counts turns: 100 turns without a capture or pawn move may be claimed, 150 end the game.',
      'Only bare kings are a dead draw: a lone king cannot complete a normal turn, so even a single knight or bishop can still win.',
      'In FEN a 7th field gives the phase: `R` (response move), `T` (start of a normal turn), `H` plus the square(s) of the piece(s) that already moved (half way).',
    ],
  },
  'double-move': {
    title: 'Double Move Chess',
    intro: 'Orthodox chess, with one extra weapon: each side may once per game make two moves in a row.',
    basics: [
      'The goal is checkmate, and all the usual rules apply: castling, en passant, promotion, stalemate.',
      'White and Black each have one Double Move. You decide to use it before your first move of a turn; then you make that move and one more, with any piece (the same one too), and the turn passes.',
      'Both moves must be legal: neither may leave your own king in check. The first one may give check — the opponent does not get to answer in between — and the second may keep, change or lift it, but it may never capture the king.',
      'An unused Double Move does not save you from checkmate: with no legal move there is no first half to start it with.',
      'On the board, press the Double Move button before your move to use it.',
    ],
    examples: [
      {
        title: 'Using the Double Move',
        text: 'White spends its Double Move at once: `e4` and `d4` in one turn. The FEN\'s 7th field goes from `WB` (both sides still have it) to `-B` (only Black has it).',
        fen: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB',
        pgn: '1.e4,d4 e5 2.dxe5 *',
        turns: ['e2e4,d2d4', 'e7e5', 'd4e5'],
      },
      {
        title: 'Quiet, then mate',
        text: '`Qh5` threatens nothing yet, but with the Double Move the queen goes on at once: `Qxf7#`. Black still has its Double Move, but no legal first move to begin it with, so it is checkmate.',
        fen: 'r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR w KQkq - 2 3 WB',
        pgn: '3.Qh5,Qxf7# *',
        turns: ['d1h5,h5f7'],
        result: '1-0',
      },
      {
        title: 'Check in the middle of a turn',
        text: '`Ra8+` gives check with the first half, and White simply goes on: `O-O` completes the turn. Black must then get out of check.',
        fen: '4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1 WB',
        pgn: '1.Ra8+,O-O Kd7 *',
        turns: ['a1a8,e1g1', 'e8d7'],
        refused: ['1.Ra8+,Rxe8 *', 'the second half may never capture the king'],
      },
      {
        title: 'Each half must be legal',
        text: 'White is in check, so the first half must deal with it: `Qe2` blocks, and then the queen takes the rook with check.',
        fen: '4r1k1/8/8/8/8/8/3Q4/4K3 w - - 0 1 WB',
        pgn: '1.Qe2,Qxe8+ Kh7 *',
        turns: ['d2e2,e2e8', 'g8h7'],
        refused: ['1.Qd3,Qe3 *', '`Qd3` leaves the king in check, even though `Qe3` would block afterwards'],
      },
      {
        title: 'Move order and en passant',
        text: '`Kd1` first, then `b4`: the pawn push ends the turn, so Black may take en passant (`cxb3`). Played the other way round, `b4` then `Kd1`, the chance is gone by the time Black moves.',
        fen: '4k3/8/8/8/2p5/8/1P6/4K3 w - - 0 1 WB',
        pgn: '1.Kd1,b4 cxb3 *',
        turns: ['e1d1,b2b4', 'c4b3'],
        refused: ['1.b4,Kd1 cxb3 *', 'after `b4,Kd1` there is no en passant capture'],
      },
    ],
    rulings: [
      'Choosing the Double Move is part of your first move: you can only start one if a legal second move exists afterwards.',
      'En passant is only possible as the first move of a turn, and only if the chance was there when the turn began. A two-square push as the first half gives the opponent no en passant.',
      'Checkmate, stalemate and repetition are only judged when the turn passes; the position between the two halves never ends the game and is not counted.',
      'The fifty-move counter counts every move, both halves of a Double Move included.',
      'With a clock, your time keeps running between the halves; the increment is added once, when the turn passes.',
      'A record (PGN) writes the two halves of a Double Move with a comma: `1.e4,d4`.',
    ],
    extra: () => h('section', { class: 'rules-fen' },
      h('h2', {}, 'The 7th FEN field'),
      h('p', {}, 'Analysis board, editor and game setup accept a normal FEN plus a field saying who still has the Double Move:'),
      h('table', { class: 'rules-table' },
        h('tbody', {}, ...([
          ['WB', 'both sides still have it (the start)'],
          ['W-', 'only White has it'],
          ['-B', 'only Black has it'],
          ['--', 'both have used it'],
          ['-Bm', 'an m at the end: the side to move is between the two halves (its own Double Move is already spent)'],
        ] as [string, string][]).map(([k, t]) => h('tr', {}, h('td', {}, h('code', {}, k)), h('td', {}, t))))),
      h('p', { class: 'muted' }, 'After 1.e4, as the first half of White\'s Double Move: ',
        h('code', { class: 'fen-sample' }, 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1 -Bm'))),
  },
  twinmove: {
    title: 'Twinmove Chess',
    intro: 'Twinmove Chess (uncompelled): a turn can be a pawn move and a piece move together, and the game is won by capturing the king.',
    basics: [
      'A turn is either one piece move, or a pawn move followed by a piece move. Two pawn moves in one turn are never allowed.',
      'After a pawn move a piece move must follow, so a pawn move is only allowed if some piece can move afterwards.',
      'White\'s very first turn must begin with a pawn move. Black\'s first turn is free.',
      'There is no check and no checkmate: your king may stand attacked. If it is still there on the opponent\'s turn, it can be captured, and capturing the king wins at once, on either move of a turn.',
      'There is no en passant.',
      'A pawn that promotes with the first move may make the piece move as its new piece.',
    ],
    examples: [
      {
        title: 'Pawn, then piece',
        text: 'White must open with a pawn move, here `e4`, and adds a piece move, `Nf3`. Black moves a piece only (`Nc6`): that is a whole turn too.',
        fen: 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 T',
        pgn: '1.e4,Nf3 Nc6 *',
        turns: ['e2e4,g1f3', 'b8c6'],
        refused: ['1.e4,d4 *', 'two pawn moves in one turn'],
      },
      {
        title: 'Attacked king: pawn first, then cover',
        text: 'The queen attacks Black\'s king along the e-file. Black may still push a pawn first (`d5`) and then cover with the piece move (`Be7`).',
        fen: 'rnbqkb1r/pppp1ppp/5n2/8/8/5N2/PPPPQPPP/RNB1KB1R b KQkq - 0 4 T',
        pgn: '4...d5,Be7 *',
        turns: ['d7d5,f8e7'],
      },
      {
        title: 'King capture wins',
        text: 'Same position, but Black forgets the king: `d5,Nc6` is allowed, and White simply takes the king with `Qxe8`. Game over.',
        fen: 'rnbqkb1r/pppp1ppp/5n2/8/8/5N2/PPPPQPPP/RNB1KB1R b KQkq - 0 4 T',
        pgn: '4...d5,Nc6 5.Qxe8 *',
        turns: ['d7d5,b8c6', 'e2e8'],
        result: '1-0',
      },
      {
        title: 'Promote, then move the new piece',
        text: '`a8=Q` is the pawn move; the new queen then makes the piece move and captures the king on e8.',
        fen: '4k3/P7/8/8/8/8/8/4K3 w - - 0 1 T',
        pgn: '1.a8=Q,Qxe8 *',
        turns: ['a7a8q,a8e8'],
        result: '1-0',
      },
      {
        title: 'Castling ignores attacks',
        text: 'Castling is a piece move, and attacked squares do not matter: White may castle although the rook on f8 controls f1.',
        fen: '4kr2/8/8/8/8/8/8/4K2R w K - 0 1 T',
        pgn: '1.O-O *',
        turns: ['e1g1'],
      },
    ],
    rulings: [
      'A move that captures the king is always allowed, even a pawn move after which no piece move could follow: the game is over.',
      'The "must begin with a pawn move" rule only applies to White\'s first turn from the usual starting position.',
      'Castling still needs an unmoved king and rook and empty squares between them, but check and attacked squares are ignored.',
      'A player who cannot complete any turn is stalemated, a draw, whether or not the king is attacked.',
      'Repetition, the fifty-move rule (counted in turns) and dead positions work as in orthodox chess, judged between turns.',
      'In a record, `+` marks a move after which the opponent\'s king stands attacked; there is no `#`.',
      'In FEN a 7th field gives the phase: `T` at the start of a turn, `P` after the pawn move (a piece move must follow).',
    ],
  },
};

/** Text with `code` spans (moves, FEN fields) as <code>, so they never break in the middle. */
function rich(text: string): (string | HTMLElement)[] {
  return text.split('`').map((part, i) => (i % 2 ? h('code', {}, part) : part));
}

/** Arrows of an example: White's moves green, Black's blue, numbered in the order they are played. */
function arrows(ex: Example): DrawShape[] {
  let white = ex.fen.split(' ')[1] !== 'b';
  let n = 0;
  const out: DrawShape[] = [];
  for (const turn of ex.turns) {
    for (const uci of turn.split(',').filter(Boolean))
      out.push({ orig: uci.slice(0, 2) as Key, dest: uci.slice(2, 4) as Key, brush: white ? 'green' : 'blue', label: { text: String(++n) } });
    white = !white;
  }
  return out;
}

/** An example's figure; `boards` gets the mini-board's start, run once the figure is in the document (chessground
 * measures the board when it starts, and the arrows need those bounds). */
function exampleFigure(variant: RulesVariant, ex: Example, i: number, boards: (() => void)[]): HTMLElement {
  const board = h('div', { class: 'mini-board', role: 'img', 'aria-label': `${ex.title}: ${ex.pgn.replace(/\s*\*$/, '')}` });
  const fig = h('figure', {
    class: 'rules-example',
    id: `example-${i + 1}`,
    'data-variant': variant,
    'data-fen': ex.fen,
    'data-pgn': ex.pgn,
    'data-turns': ex.turns.join(' '),
  },
  board,
  h('figcaption', {},
    h('h3', {}, ex.title),
    h('p', {}, ...rich(ex.text)),
    ex.pgn !== '*' ? h('p', { class: 'rules-moves' }, h('code', {}, ex.pgn.replace(/\s*\*$/, ''))) : null,
    ex.refused ? h('p', { class: 'rules-refused' }, h('strong', {}, 'Not allowed: '), h('code', {}, ex.refused[0].replace(/\s*\*$/, '')), ' — ', ...rich(ex.refused[1]), '.') : null,
  ));
  if (ex.refused) fig.dataset.refused = ex.refused[0];
  if (ex.result) fig.dataset.result = ex.result;
  boards.push(() => Chessground(board, {
    fen: ex.fen.split(' ')[0],
    orientation: 'white',
    viewOnly: true,
    coordinates: false,
    drawable: { enabled: false, visible: true, autoShapes: arrows(ex) },
  }));
  return fig;
}

export function rulesPage(app: HTMLElement, slug: string): void {
  const variant = slug as RulesVariant;
  const page = PAGES[variant];
  if (!page) {
    // /variant: the list of rules pages (orthodox chess plays by the usual FIDE rules and has none)
    document.title = 'Rules · doublemove';
    app.append(h('div', { class: 'panel rules-page' }, h('h1', {}, 'Rules of the variants'),
      h('p', {}, slug && slug !== 'chess' ? `There is no rules page called "${slug}". ` : '',
        'Orthodox chess follows the usual FIDE rules. The variants played here:'),
      h('ul', {}, RULES_VARIANTS.map(v => h('li', {}, h('a', { href: `/variant/${v}` }, PAGES[v].title))))));
    return;
  }
  document.title = `${page.title} rules · doublemove`;
  const others = RULES_VARIANTS.filter(v => v !== variant);
  const boards: (() => void)[] = [];
  app.append(h('article', { class: 'panel rules-page', id: `rules-${variant}` },
    h('h1', {}, `${page.title}: the rules`),
    h('p', { class: 'rules-intro' }, page.intro),
    h('nav', { class: 'rules-links' },
      h('a', { class: 'button primary', id: 'rules-analysis', href: `/analysis?variant=${variant}` }, `Try it on the analysis board`),
      h('a', { class: 'button', id: 'rules-lobby', href: '/' }, 'Play a game (lobby)'),
      h('span', { class: 'muted' }, 'Other rules: ', ...others.flatMap((v, i) => [i ? ' · ' : '', h('a', { href: `/variant/${v}` }, PAGES[v].title)]))),
    h('section', {}, h('h2', {}, 'In short'), h('ul', {}, page.basics.map(b => h('li', {}, ...rich(b))))),
    h('section', {},
      h('h2', {}, 'Key cases'),
      h('p', { class: 'muted rules-legend' }, 'Arrows: ', h('span', { class: 'key-white' }, 'green'), ' = White\'s moves, ',
        h('span', { class: 'key-black' }, 'blue'), ' = Black\'s, numbered in the order they are played. The board shows the position before them.'),
      h('div', { class: 'rules-examples' }, page.examples.map((ex, i) => exampleFigure(variant, ex, i, boards)))),
    page.extra?.() ?? null,
    h('section', {}, h('h2', {}, 'Our rulings'),
      h('p', { class: 'muted' }, 'Where the original rules leave a question open, this site plays it this way:'),
      h('ul', {}, page.rulings.map(r => h('li', {}, ...rich(r))))),
    h('p', { class: 'muted' }, 'In a PGN record this variant is ', h('code', {}, `[Variant "${PGN_NAMES[variant]}"]`), '.'),
  ));
  boards.forEach(start => start());
}
