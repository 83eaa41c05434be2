// Form pieces shared by the seek, challenge and create-game forms, and small renderers of players and
// games (names with ratings, results in words, deadlines, the "your turn" list).
import { DAYS, VARIANTS, ratingText, tcLabel, variantTitle, type ClockSpec, type Color, type GameState, type Playing, type PlayerRef } from './api';
import { customClock } from './timecontrol';
import { h } from './util';

export const CLOCK_PRESETS: [string, string][] = [
  ['60+0', '1+0'], ['180+0', '3+0'], ['180+2', '3+2'], ['300+0', '5+0'], ['300+3', '5+3'],
  ['600+0', '10+0'], ['600+5', '10+5'], ['900+10', '15+10'], ['1800+0', '30+0'],
];

export function variantSelect(name = 'variant', selected = 'double-move'): HTMLSelectElement {
  return h('select', { name }, VARIANTS.map(([k, t]) => h('option', { value: k, selected: k === selected }, t)));
}
export function colorSelect(name = 'color'): HTMLSelectElement {
  return h('select', { name },
    h('option', { value: 'random', selected: true }, 'Random'), h('option', { value: 'white' }, 'White'), h('option', { value: 'black' }, 'Black'));
}

export type TimeControl = { clock: ClockSpec } | { days: number };

/**
 * Time control: presets, a custom base (minutes) + increment (seconds) (the shared `customClock`, its
 * ids prefixed with `id`), or correspondence days per turn.
 */
export function timeControlFields(def: string, id: string): { fields: HTMLElement[]; read(): TimeControl | string } {
  const preset = h('select', { name: 'tc' },
    h('optgroup', { label: 'Real time' }, CLOCK_PRESETS.map(([v, t]) => h('option', { value: v, selected: v === def }, t)),
      h('option', { value: 'custom' }, 'Custom…')),
    h('optgroup', { label: 'Correspondence' }, h('option', { value: 'days', selected: def === 'days' }, 'Days per move')));
  const custom = customClock(id, 'Days per move');
  const days = h('select', { name: 'days' }, DAYS.map(d => h('option', { value: String(d), selected: d === 3 }, `${d} day${d === 1 ? '' : 's'}`)));
  const daysRow = h('label', {}, 'Days per move ', days);
  const sync = () => {
    custom.el.hidden = preset.value !== 'custom';
    daysRow.hidden = preset.value !== 'days';
  };
  preset.addEventListener('change', sync);
  sync();
  return {
    fields: [h('label', {}, 'Time control ', preset), custom.el, daysRow],
    read() {
      if (preset.value === 'days') return { days: Number(days.value) };
      if (preset.value === 'custom') {
        const c = custom.read();
        return typeof c === 'string' ? c : { clock: c };
      }
      const [l, i] = preset.value.split('+').map(Number);
      return { clock: { limit: l, increment: i } };
    },
  };
}

export const playerLink = (name: string): HTMLAnchorElement =>
  h('a', { href: `/@/${encodeURIComponent(name)}`, class: 'user-link' }, name);

/** "alice (1500?)" with a link, "Engine level 3", "Anonymous", or the rating change after a rated game. */
export function playerLabel(g: GameState, c: Color, opts: { diff?: boolean; you?: boolean } = {}): HTMLElement {
  const p = g.players?.[c];
  const seat = g[c];
  if (p) {
    const diff = opts.diff && p.rating_diff !== null && p.rating_diff !== undefined ? ratingDiff(p.rating_diff) : null;
    return h('span', { class: 'player', 'data-color': c },
      p.bot ? h('span', { class: 'bot-tag' }, 'BOT') : null,
      playerLink(p.username),
      p.rating !== null ? h('span', { class: 'rating' }, ` ${ratingText(p)}`) : null,
      diff ? [' ', diff] : null);
  }
  if (seat.kind === 'engine') return h('span', { class: 'player engine', 'data-color': c }, `Engine level ${seat.level}`);
  return h('span', { class: 'player anon muted', 'data-color': c }, seat.joined === false ? '(open seat)' : opts.you ? 'You' : 'Anonymous');
}

export function ratingDiff(d: number): HTMLElement {
  return h('span', { class: `rdiff ${d > 0 ? 'up' : d < 0 ? 'down' : ''}` }, d > 0 ? `+${d}` : d < 0 ? `−${-d}` : '±0');
}

const REASON: Record<string, string> = {
  checkmate: 'checkmate', king_captured: 'king captured', resignation: 'resignation', timeout: 'time out',
  stalemate: 'stalemate', dead_position: 'dead position', fivefold_repetition: 'fivefold repetition',
  seventy_five_move_rule: '75-move rule', threefold_repetition: 'threefold repetition', fifty_move_rule: '50-move rule',
  agreement: 'agreement', timeout_vs_insufficient_material: 'time out vs insufficient material', aborted: 'aborted',
};
/** The result in words from one side's point of view ("Won by resignation"), or neutral without a side. */
export function resultWords(g: GameState, me?: Color | null): string {
  if (g.status === 'waiting') return 'Waiting for a player';
  if (g.status === 'started') return 'Playing';
  if (g.status === 'aborted') return 'Aborted';
  const why = g.reason ? REASON[g.reason] ?? g.reason.replace(/_/g, ' ') : '';
  const by = why ? (g.reason === 'timeout' ? ' on time' : ` by ${why}`) : '';
  if (!g.winner) return `Draw${by}`;
  if (!me) return `${g.winner === 'white' ? 'White' : 'Black'} won${by}`;
  return `${g.winner === me ? 'Won' : 'Lost'}${by}`;
}

/** Time left until an epoch-ms deadline: "2 days 4 h", "3 h 12 min", "4:05". */
export function untilText(deadline: number, now = Date.now()): string {
  const ms = deadline - now;
  if (ms <= 0) return 'time is up';
  const s = Math.floor(ms / 1000), m = Math.floor(s / 60), hr = Math.floor(m / 60), d = Math.floor(hr / 24);
  if (d >= 1) return `${d} day${d === 1 ? '' : 's'} ${hr % 24} h`;
  if (hr >= 1) return `${hr} h ${m % 60} min`;
  return `${m}:${String(s % 60).padStart(2, '0')}`;
}

const opponentName = (o: PlayerRef | null): Node | string =>
  o ? h('span', {}, playerLink(o.username), o.rating !== null ? ` ${ratingText(o)}` : '') : 'Anonymous / engine';

/** The account's started games: my turn first, then by deadline (the server's order). */
export function playingList(games: Playing[]): HTMLElement {
  if (!games.length) return h('div', { class: 'muted' }, 'No games in progress.');
  return h('ul', { class: 'playing' }, games.map(p =>
    h('li', { class: p.my_turn ? 'my-turn' : '', 'data-id': p.id },
      h('a', { href: `/game/${p.id}`, class: 'go' }, p.my_turn ? 'Your turn' : 'Waiting'),
      ' vs ', opponentName(p.opponent),
      h('span', { class: 'muted' }, ` · ${variantTitle(p.variant)} · ${tcLabel({ clock: p.clock ? { limit: p.clock.limit_ms / 1000, increment: p.clock.increment_ms / 1000 } : null, days: p.days })} · ${p.color}`),
      p.deadline_ms ? h('span', { class: 'deadline', 'data-deadline': String(p.deadline_ms) }, ` · ${untilText(p.deadline_ms)} left`) : null,
    )));
}
