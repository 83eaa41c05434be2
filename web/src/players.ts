// Player pages (/@/{name}: ratings, rating history graphs, games, challenge) and the leaderboard.
import { api, ratingText, tcLabel, variantTitle, VARIANTS, type Challenge, type Color, type GameState, type Playing, type RatingPoint, type UserInfo, type Variant } from './api';
import { account } from './auth';
import { colorSelect, playerLabel, playingList, resultWords, timeControlFields, variantSelect } from './forms';
import { DECLINE_REASONS, lobbySocket } from './seeks';
import { h } from './util';

const SVG = 'http://www.w3.org/2000/svg';
function s(tag: string, attrs: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A rating history as an inline SVG line graph with labelled axes (rating over date). */
export function ratingGraph(points: RatingPoint[], label: string): SVGElement {
  // Narrow screens get a narrower drawing, so that its text stays readable when scaled down.
  const W = matchMedia('(max-width: 700px)').matches ? 380 : 600, H = 200, L = 52, R = 12, T = 12, B = 40;
  const rs = points.map(p => p.rating), ts = points.map(p => p.at);
  let lo = Math.floor((Math.min(...rs) - 20) / 50) * 50, hi = Math.ceil((Math.max(...rs) + 20) / 50) * 50;
  if (hi - lo < 100) hi = lo + 100;
  const t0 = Math.min(...ts), t1 = Math.max(...ts);
  const x = (t: number) => (t1 === t0 ? L + (W - L - R) / 2 : L + ((t - t0) / (t1 - t0)) * (W - L - R));
  const y = (r: number) => T + (1 - (r - lo) / (hi - lo)) * (H - T - B);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'rating-graph', role: 'img', 'aria-label': `${label} rating history` });
  const step = (hi - lo) / 50 > 8 ? 100 * Math.ceil((hi - lo) / 800) : 50;
  for (let r = lo; r <= hi; r += step) {
    svg.append(s('line', { x1: L, x2: W - R, y1: y(r), y2: y(r), class: 'grid' }));
    svg.append(s('text', { x: L - 6, y: y(r) + 4, class: 'tick', 'text-anchor': 'end' }, String(r)));
  }
  svg.append(s('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }), s('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
  const xticks = t1 === t0 ? [t0] : [t0, (t0 + t1) / 2, t1];
  xticks.forEach((t, i) =>
    svg.append(s('text', { x: x(t), y: H - B + 15, class: 'tick', 'text-anchor': xticks.length === 1 ? 'middle' : i === 0 ? 'start' : i === 2 ? 'end' : 'middle' }, day(t))));
  svg.append(s('text', { x: (L + W - R) / 2, y: H - 4, class: 'axis-label', 'text-anchor': 'middle' }, 'Date'));
  svg.append(s('text', { x: 12, y: (T + H - B) / 2, class: 'axis-label', 'text-anchor': 'middle', transform: `rotate(-90 12 ${(T + H - B) / 2})` }, 'Rating'));
  if (points.length > 1) svg.append(s('polyline', { points: points.map(p => `${x(p.at).toFixed(1)},${y(p.rating).toFixed(1)}`).join(' '), class: 'line' }));
  for (const p of points)
    svg.append(s('a', { href: `/game/${p.game_id}` }, s('circle', { cx: x(p.at), cy: y(p.rating), r: 3.5, class: 'pt' }, s('title', {}, `${p.rating} (±${p.rd}) · ${day(p.at)}`))));
  return svg;
}

/** Challenge a player: variant, time control or days, rated, colour. */
function challengeForm(to: string): HTMLElement {
  const variant = variantSelect('variant');
  const tc = timeControlFields('600+5', 'challenge-tc');
  const rated = h('input', { type: 'checkbox', name: 'rated', checked: true });
  const color = colorSelect('color');
  const err = h('div', { class: 'error', id: 'challenge-error' });
  const out = h('div', { id: 'challenge-out' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'challenge-send' }, `Challenge ${to}`);
  return h('form', {
    class: 'create challenge-form',
    onsubmit: async (e: Event) => {
      e.preventDefault();
      err.textContent = '';
      const t = tc.read();
      if (typeof t === 'string') return void (err.textContent = t);
      submit.disabled = true;
      try {
        const c = await api<Challenge>('POST', `/api/challenge/${encodeURIComponent(to)}`, { variant: variant.value, ...t, rated: rated.checked, color: color.value });
        const cancel = h('button', { type: 'button', class: 'small', id: 'challenge-cancel', onclick: async () => {
          try { await api('POST', `/api/challenge/${c.id}/cancel`); stop(); out.replaceChildren(h('div', { class: 'muted' }, 'Challenge cancelled.')); } catch (x: any) { err.textContent = x.message; }
        } }, 'Cancel');
        out.replaceChildren(h('div', { class: 'ok', id: 'challenge-sent' }, `Challenge sent (${variantTitle(c.variant)}, ${tcLabel(c)}, ${c.rated ? 'rated' : 'casual'}). Waiting for ${to}… `, cancel));
        // Follow the answer here: the game starts, or the challenge is declined.
        const stop = lobbySocket(msg => {
          if (msg.type === 'game_start') location.href = `/game/${msg.game_id}`;
          else if (msg.type === 'challenge_gone' && msg.id === c.id && msg.reason !== 'accepted') {
            stop();
            const why = DECLINE_REASONS.find(([k]) => k === msg.challenge?.decline_reason)?.[1];
            out.replaceChildren(h('div', { class: 'error', id: 'challenge-declined' },
              msg.reason === 'canceled' ? 'The challenge was cancelled.' : `${to} declined the challenge${why ? `: “${why}”` : '.'}`));
          }
        });
      } catch (x: any) {
        err.textContent = x.message;
      } finally {
        submit.disabled = false;
      }
    },
  },
    h('label', {}, 'Variant ', variant), ...tc.fields,
    h('label', { class: 'check' }, rated, ' Rated'), h('label', {}, 'Your colour ', color),
    submit, err, out);
}

function gamesTable(games: GameState[], user: string): HTMLElement {
  if (!games.length) return h('div', { class: 'muted' }, 'No games yet.');
  const lc = user.toLowerCase();
  return h('table', { class: 'games user-games' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Date'), h('th', {}, 'Players'), h('th', {}, 'Variant'), h('th', {}, 'Time'), h('th', {}, 'Mode'), h('th', {}, 'Result'), h('th', {}, ''))),
    h('tbody', {}, games.map(g => {
      const me: Color | null = g.players?.white?.username.toLowerCase() === lc ? 'white' : g.players?.black?.username.toLowerCase() === lc ? 'black' : null;
      const res = resultWords(g, me);
      return h('tr', { 'data-id': g.id },
        h('td', { class: 'muted' }, day(g.created_at)),
        h('td', {}, playerLabel(g, 'white', { diff: true }), ' vs ', playerLabel(g, 'black', { diff: true })),
        h('td', {}, variantTitle(g.variant)),
        h('td', {}, tcLabel({ clock: g.clock ? { limit: g.clock.limit_ms / 1000, increment: g.clock.increment_ms / 1000 } : null, days: g.days })),
        h('td', {}, g.rated ? 'Rated' : 'Casual'),
        h('td', { class: `result ${res.startsWith('Won') ? 'win' : res.startsWith('Lost') ? 'loss' : ''}` }, res),
        h('td', {}, h('a', { href: `/game/${g.id}` }, g.status === 'finished' ? 'replay' : 'view')));
    })));
}

export async function playerPage(app: HTMLElement, name: string, params: URLSearchParams): Promise<void> {
  const head = h('section', { class: 'panel player-head', id: 'player-head' }, 'Loading…');
  const perfs = h('section', { class: 'panel', id: 'perfs' }, h('h2', {}, 'Ratings'));
  const graphs = h('section', { class: 'panel', id: 'rating-history' }, h('h2', {}, 'Rating history'), h('div', { class: 'muted' }, 'Loading…'));
  const games = h('section', { class: 'panel wide', id: 'user-games' }, h('h2', {}, 'Games'), h('div', { class: 'muted' }, 'Loading…'));
  const playing = h('section', { class: 'panel', id: 'your-turn', hidden: true }, h('h2', {}, 'Your games in progress'));
  const challenge = h('section', { class: 'panel', id: 'challenge', hidden: true });
  app.append(h('div', { class: 'player-page' }, head, perfs, playing, challenge, graphs, games));

  let u: UserInfo;
  try {
    u = await api<UserInfo>('GET', `/api/users/${encodeURIComponent(name)}`);
  } catch (e: any) {
    head.replaceChildren(h('h2', {}, name), h('div', { class: 'error' }, e.message));
    return;
  }
  document.title = `${u.username} · doublemove`;
  const c = u.count;
  head.replaceChildren(
    h('h2', { id: 'player-name' }, u.kind === 'bot' ? h('span', { class: 'bot-tag' }, 'BOT') : null, u.username),
    h('div', { class: 'muted' }, `Member since ${day(u.created_at)}`),
    h('div', { class: 'counts', id: 'counts' },
      `${c.all} game${c.all === 1 ? '' : 's'} · ${c.rated} rated · ${c.win} won · ${c.loss} lost · ${c.draw} drawn · ${c.playing} playing`),
    h('div', { class: 'row' },
      h('a', { class: 'button', id: 'pgn-all', href: `/api/games/user/${encodeURIComponent(u.username)}`, download: `${u.username}.pgn` }, 'Download all games (PGN)')),
  );
  perfs.append(h('table', { class: 'games perfs' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Variant'), h('th', {}, 'Rating'), h('th', {}, 'Games'), h('th', {}, 'Deviation'))),
    h('tbody', {}, VARIANTS.map(([k, t]) => {
      const p = u.perfs[k];
      return h('tr', { 'data-variant': k },
        h('td', {}, t),
        h('td', { class: 'rating' + (p?.provisional ? ' provisional' : ''), title: p?.provisional ? 'provisional: not enough rated games yet' : undefined }, p ? ratingText(p) : '–'),
        h('td', {}, String(p?.games ?? 0)),
        h('td', { class: 'muted' }, p ? `±${p.rd}` : ''));
    }))));

  account().then(me => {
    if (!me) return;
    if (me.username.toLowerCase() === u.username.toLowerCase()) {
      playing.hidden = false;
      api<{ games: Playing[] }>('GET', '/api/account/playing')
        .then(r => playing.append(playingList(r.games)))
        .catch(e => playing.append(h('div', { class: 'error' }, e.message)));
    } else {
      challenge.hidden = false;
      const box = h('div', {});
      challenge.append(h('h2', {}, 'Challenge'),
        h('button', { id: 'challenge-open', class: 'primary', onclick: (e: Event) => { (e.target as HTMLElement).remove(); box.append(challengeForm(u.username)); } }, `Challenge ${u.username}`),
        box);
    }
  });

  api<Partial<Record<Variant, RatingPoint[]>>>('GET', `/api/users/${encodeURIComponent(name)}/rating-history`)
    .then(hist => {
      const blocks = VARIANTS.filter(([k]) => (hist[k] ?? []).length > 0).map(([k, t]) =>
        h('div', { class: 'graph-block', 'data-variant': k }, h('h3', {}, t), ratingGraph(hist[k]!, t)));
      graphs.replaceChildren(h('h2', {}, 'Rating history'), blocks.length ? h('div', { class: 'graphs' }, blocks) : h('div', { class: 'muted' }, 'No rated games yet.'));
    })
    .catch(e => graphs.replaceChildren(h('h2', {}, 'Rating history'), h('div', { class: 'error' }, e.message)));

  let page = Math.max(1, Number(params.get('page')) || 1);
  const loadGames = async () => {
    try {
      const r = await api<{ games: GameState[]; page: number; more: boolean }>('GET', `/api/users/${encodeURIComponent(name)}/games?page=${page}`);
      const url = new URL(location.href);
      if (page > 1) url.searchParams.set('page', String(page));
      else url.searchParams.delete('page');
      history.replaceState(null, '', url);
      games.replaceChildren(h('h2', {}, 'Games'), gamesTable(r.games, u.username),
        h('div', { class: 'pager row' },
          h('button', { id: 'page-prev', disabled: page <= 1, onclick: () => { page--; loadGames(); } }, '← Newer'),
          h('span', { class: 'muted', id: 'page-no' }, `Page ${r.page ?? page}`),
          h('button', { id: 'page-next', disabled: !r.more, onclick: () => { page++; loadGames(); } }, 'Older →')));
    } catch (e: any) {
      games.replaceChildren(h('h2', {}, 'Games'), h('div', { class: 'error' }, e.message));
    }
  };
  loadGames();
}

export function leaderboardPage(app: HTMLElement, params: URLSearchParams): void {
  let variant = (params.get('variant') ?? 'double-move') as Variant;
  if (!VARIANTS.some(([k]) => k === variant)) variant = 'double-move';
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const body = h('div', { id: 'leaderboard' });
  app.append(h('section', { class: 'panel leaderboard' }, h('h2', {}, 'Leaderboard'), tabs, body));
  const load = async () => {
    tabs.replaceChildren(...VARIANTS.map(([k, t]) =>
      h('button', { role: 'tab', class: `tab${k === variant ? ' active' : ''}`, 'aria-selected': k === variant ? 'true' : 'false', 'data-variant': k,
        onclick: () => { variant = k; history.replaceState(null, '', `/leaderboard?variant=${k}`); load(); } }, t)));
    body.replaceChildren(h('div', { class: 'muted' }, 'Loading…'));
    try {
      const r = await api<{ players: { username: string; rating: number; rd: number; games: number }[] }>('GET', `/api/leaderboard/${variant}`);
      body.replaceChildren(r.players.length
        ? h('table', { class: 'games' },
          h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'Player'), h('th', {}, 'Rating'), h('th', {}, 'Games'))),
          h('tbody', {}, r.players.map((p, i) => h('tr', {},
            h('td', { class: 'muted' }, String(i + 1)),
            h('td', {}, h('a', { href: `/@/${encodeURIComponent(p.username)}` }, p.username)),
            h('td', { class: 'rating' }, String(p.rating)),
            h('td', {}, String(p.games))))))
        : h('div', { class: 'muted' }, `No ranked ${variantTitle(variant)} players yet: a player is listed after their provisional period, while they played in the last 30 days.`));
    } catch (e: any) {
      body.replaceChildren(h('div', { class: 'error' }, e.message));
    }
  };
  load();
}
