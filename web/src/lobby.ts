// The lobby: create a game, open games to join, this browser's games, finished games archive.
import { rulesHref } from './rules';
import { api, myGames, saveGame, forgetGame, variantTitle, VARIANTS, DAYS, type GameState, type Color } from './api';
import { account } from './auth';
import { seekPanels } from './seeks';
import { resultWords } from './forms';
import { customClock } from './timecontrol';
import { h } from './util';

interface Created {
  id: string;
  token: string;
  color: Color;
  invite: string | null;
  invite_url: string | null;
  game: GameState;
}

const TIME_CONTROLS: [string, string][] = [
  ['', 'Unlimited'],
  ['60+0', '1+0'],
  ['180+2', '3+2'],
  ['300+3', '5+3'],
  ['600+5', '10+5'],
  ['900+10', '15+10'],
  ['1800+0', '30+0'],
];

export function opponentText(g: GameState, me?: Color): string {
  const side = (c: Color) => {
    const s = g[c];
    const p = g.players?.[c];
    return p ? (c === me ? `You (${p.username})` : p.username) : s.kind === 'engine' ? `Engine level ${s.level}` : c === me ? 'You' : s.joined === false ? '(open seat)' : 'Human';
  };
  return `${side('white')} vs ${side('black')}`;
}
const tcText = (g: GameState) =>
  g.days ? `${g.days} day${g.days === 1 ? '' : 's'}` : g.clock ? `${Math.round(g.clock.limit_ms / 60000 * 10) / 10}+${g.clock.increment_ms / 1000}` : 'unlimited';

export function createForm(opts: { fen?: string; variant?: string; onCreated?: (c: Created) => void } = {}): HTMLElement {
  const variant = h('select', { name: 'variant' }, VARIANTS.map(([k, t]) => h('option', { value: k, selected: k === (opts.variant ?? 'double-move') }, t)));
  // "Rules" next to the variant choice: the selected variant's rules page (orthodox chess has none).
  const rules = h('a', { class: 'rules-link', id: 'create-rules', href: '/' }, 'Rules');
  const syncRules = () => {
    const href = rulesHref(variant.value);
    rules.hidden = !href;
    if (href) rules.href = href;
    rules.title = `The rules of ${variantTitle(variant.value)}`;
  };
  variant.addEventListener('change', syncRules);
  syncRules();
  const opponent = h('select', { name: 'opponent' }, h('option', { value: 'engine' }, 'Engine'), h('option', { value: 'human' }, 'A person (invite link)'));
  const level = h('select', { name: 'level' }, [1, 2, 3, 4, 5, 6, 7, 8].map(l => h('option', { value: String(l), selected: l === 3 }, `Level ${l}`)));
  const color = h('select', { name: 'color' }, h('option', { value: 'white' }, 'White'), h('option', { value: 'black' }, 'Black'), h('option', { value: 'random', selected: true }, 'Random'));
  const tc = h('select', { name: 'clock' }, TIME_CONTROLS.map(([v, t]) => h('option', { value: v, selected: v === '300+3' }, t)),
    h('option', { value: 'custom' }, 'Custom…'),
    h('option', { value: 'days' }, 'Correspondence (days per move)'));
  // Custom time control: base 0–180 minutes + increment 0–180 seconds (checked here, and by the server).
  const custom = customClock('tc', 'Unlimited');
  const days = h('select', { name: 'days' }, DAYS.map(d => h('option', { value: String(d), selected: d === 3 }, `${d} day${d === 1 ? '' : 's'}`)));
  const rated = h('input', { type: 'checkbox', name: 'rated' });
  const pub = h('input', { type: 'checkbox', name: 'public', checked: true });
  const fen = h('input', { type: 'text', name: 'fen', placeholder: 'start position', value: opts.fen ?? '' });
  const err = h('div', { class: 'error', id: 'create-error', role: 'alert' });
  const levelRow = h('label', {}, 'Level ', level);
  const daysRow = h('label', {}, 'Days per move ', days);
  const pubRow = h('label', { class: 'check' }, pub, ' list in open games');
  const ratedRow = h('label', { class: 'check', title: 'only another account can join a rated game' }, rated, ' Rated');
  let signedIn = false;
  const sync = () => {
    levelRow.hidden = opponent.value !== 'engine';
    pubRow.hidden = opponent.value === 'engine';
    daysRow.hidden = tc.value !== 'days';
    custom.el.hidden = tc.value !== 'custom';
    ratedRow.hidden = !signedIn || opponent.value !== 'human';
  };
  opponent.addEventListener('change', sync);
  tc.addEventListener('change', sync);
  sync();
  account().then(a => { signedIn = !!a; sync(); });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'create-game' }, 'Create game');
  const form = h(
    'form',
    {
      class: 'create',
      // the form's own message (#create-error) instead of the browser's bubble for the number fields
      noValidate: true,
      onsubmit: async (e: Event) => {
        e.preventDefault();
        err.textContent = '';
        const body: any = {
          variant: variant.value,
          opponent: opponent.value,
          color: color.value,
          fen: fen.value.trim() || null,
        };
        if (tc.value === 'days') body.days = Number(days.value);
        else if (tc.value === 'custom') {
          const c = custom.read();
          if (typeof c === 'string') {
            err.textContent = c;
            return;
          }
          body.clock = c;
        } else {
          const [limit, inc] = tc.value ? tc.value.split('+').map(Number) : [null, null];
          body.clock = limit === null ? null : { limit, increment: inc };
        }
        if (opponent.value === 'engine') body.level = Number(level.value);
        else body.public = pub.checked;
        if (!ratedRow.hidden && rated.checked) body.rated = true;
        submit.disabled = true;
        try {
          const c = await api<Created>('POST', '/api/games', body);
          saveGame({ id: c.id, token: c.token, color: c.color, variant: c.game.variant, opponent: opponentText(c.game, c.color), created: Date.now(), invite_url: c.invite_url });
          if (opts.onCreated) opts.onCreated(c);
          else location.href = `/game/${c.id}`;
        } catch (x: any) {
          err.textContent = x.message;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h('div', { class: 'variant-field' }, h('label', {}, 'Variant ', variant), rules),
    h('label', {}, 'Opponent ', opponent),
    levelRow,
    h('label', {}, 'Your colour ', color),
    h('label', {}, 'Time control ', tc),
    custom.el,
    daysRow,
    ratedRow,
    pubRow,
    h('label', { class: 'wide' }, 'Start FEN ', fen),
    submit,
    err,
  );
  return form;
}

function gameRow(g: GameState, link: string, extra?: Node): HTMLElement {
  const over = g.status === 'finished' || g.status === 'aborted';
  return h('tr', { 'data-id': g.id },
    h('td', {}, h('a', { href: link }, g.id)),
    h('td', {}, variantTitle(g.variant)),
    h('td', {}, opponentText(g)),
    h('td', {}, tcText(g)),
    // the result in words ("Black won by resignation"), never the raw reason code
    h('td', { class: 'result' }, over && g.result && g.result !== '*' ? [h('strong', {}, g.result), ' '] : null, resultWords(g)),
    h('td', { class: 'act' }, extra ?? ''),
  );
}

const PAGE = 10;
/** A table of games with a header and, past ten rows, a pager (Previous / "11–20 of 34" / Next). */
function table(rows: HTMLElement[], empty: string, last = ''): HTMLElement {
  if (!rows.length) return h('div', { class: 'muted' }, empty);
  const body = h('tbody', {});
  const info = h('span', { class: 'muted', 'aria-live': 'polite' });
  const prev = h('button', { class: 'small prev', type: 'button', onclick: () => show(page - 1) }, '← Previous');
  const next = h('button', { class: 'small next', type: 'button', onclick: () => show(page + 1) }, 'Next →');
  const pages = Math.ceil(rows.length / PAGE);
  let page = 0;
  const show = (p: number) => {
    page = Math.max(0, Math.min(pages - 1, p));
    body.replaceChildren(...rows.slice(page * PAGE, page * PAGE + PAGE));
    info.textContent = `${page * PAGE + 1}–${Math.min(rows.length, page * PAGE + PAGE)} of ${rows.length}`;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  };
  show(0);
  return h('div', {},
    h('table', { class: 'games lobby-games' },
      h('thead', {}, h('tr', {}, ['Game', 'Variant', 'Players', 'Time', 'Result', last].map(t => h('th', {}, t)))),
      body),
    pages > 1 ? h('div', { class: 'row pager' }, prev, info, next) : null);
}

export function lobby(app: HTMLElement): void {
  const open = h('div', {}, 'Loading…');
  const mine = h('div', {}, 'Loading…');
  const archive = h('div', {}, 'Loading…');
  app.append(
    h('div', { class: 'lobby' },
      ...seekPanels(),
      h('section', { class: 'panel', id: 'new-game' }, h('h2', {}, 'New game'), createForm()),
      h('section', { class: 'panel', id: 'my-games' }, h('h2', {}, 'Your games'), mine),
      h('section', { class: 'panel', id: 'open-games' }, h('h2', {}, 'Open games'), open),
      h('section', { class: 'panel', id: 'archive' }, h('h2', {}, 'Finished games'), archive),
    ),
  );
  api<{ games: GameState[] }>('GET', '/api/games?status=open&limit=200')
    .then(r => open.replaceChildren(table(
      r.games.filter(g => g.invite && !myGames().some(m => m.id === g.id)).map(g =>
        gameRow(g, `/game/${g.id}`, h('a', { class: 'button', href: `/join/${g.id}?invite=${encodeURIComponent(g.invite!)}` }, 'Join'))),
      'No open games. Create one with “A person” and “list in open games”.', 'Join')))
    .catch(e => open.replaceChildren(h('div', { class: 'error' }, e.message)));
  const saved = myGames();
  Promise.all(saved.slice(0, 30).map(m => api<GameState>('GET', `/api/games/${m.id}`).then(g => ({ m, g })).catch(() => null)))
    .then(list => {
      const rows = list.filter(x => x !== null).map(({ m, g }) =>
        gameRow(g, `/game/${g.id}`, h('span', {}, `you: ${m.color} `,
          h('button', { class: 'small', title: 'forget this game (its token is removed from this browser)', onclick: (e: Event) => { forgetGame(m.id); (e.target as HTMLElement).closest('tr')?.remove(); } }, '✕'))));
      mine.replaceChildren(table(rows, 'You have no games in this browser yet.', 'You'));
    });
  api<{ games: GameState[] }>('GET', '/api/games?status=finished&limit=200')
    .then(r => archive.replaceChildren(table(
      r.games.map(g => gameRow(g, `/game/${g.id}`, h('a', { href: `/analysis?game=${g.id}` }, 'replay / analyse'))),
      'No finished games yet.', 'Replay')))
    .catch(e => archive.replaceChildren(h('div', { class: 'error' }, e.message)));
}
