// The lobby's player panels: quick pairing, the live seeks table (/api/lobby/ws), a seek form,
// incoming and outgoing challenges, and the signed-in player's games in progress ("Your turn").
import { api, ratingText, tcLabel, variantTitle, wsUrl, type Account, type Challenge, type Playing, type Seek } from './api';
import { account } from './auth';
import { colorSelect, playerLink, playingList, timeControlFields, untilText, variantSelect, type TimeControl } from './forms';
import { h } from './util';

const QUICK: [string, TimeControl][] = [
  ['3+2', { clock: { limit: 180, increment: 2 } }],
  ['5+3', { clock: { limit: 300, increment: 3 } }],
  ['10+5', { clock: { limit: 600, increment: 5 } }],
  ['15+10', { clock: { limit: 900, increment: 10 } }],
  ['3 days', { days: 3 }],
];
export const DECLINE_REASONS: [string, string][] = [
  ['generic', 'No thanks'], ['later', 'Not now, later'], ['too_fast', 'Too fast'], ['too_slow', 'Too slow'],
  ['time_control', 'Not this time control'], ['rated', 'Rated only'], ['casual', 'Casual only'], ['variant', 'Not this variant'],
];

const sameTc = (s: Seek, t: TimeControl) =>
  'days' in t ? s.days === t.days : !!s.clock && s.clock.limit === t.clock.limit && s.clock.increment === t.clock.increment;
const inRange = (s: Seek, rating: number | undefined) =>
  rating === undefined || ((s.rating_min === null || rating >= s.rating_min) && (s.rating_max === null || rating <= s.rating_max));
const isMe = (me: Account | null, name: string) => !!me && me.username.toLowerCase() === name.toLowerCase();

/** A lobby socket for one purpose (e.g. the player page after a challenge): calls `on` with each message. */
export function lobbySocket(on: (msg: any) => void): () => void {
  let stop = false, sock: WebSocket | null = null, ping = 0, backoff = 1000;
  const connect = () => {
    sock = new WebSocket(wsUrl('/api/lobby/ws'));
    sock.onopen = () => {
      backoff = 1000;
      ping = window.setInterval(() => sock?.readyState === WebSocket.OPEN && sock.send(JSON.stringify({ type: 'ping' })), 25000);
    };
    sock.onmessage = ev => { try { on(JSON.parse(ev.data)); } catch {} };
    sock.onclose = () => {
      clearInterval(ping);
      if (!stop) setTimeout(connect, (backoff = Math.min(backoff * 2, 30000)));
    };
  };
  connect();
  const close = () => { stop = true; sock?.close(); };
  window.addEventListener('pagehide', close);
  return close;
}

export function seekPanels(): HTMLElement[] {
  const seeks = new Map<string, Seek>();
  let me: Account | null = null;
  let ws: WebSocket | null = null;
  let wsOpen: Promise<void> = Promise.resolve();
  let backoff = 1000;
  let leaving = false;

  const seekBody = h('div', { id: 'seeks' }, h('div', { class: 'muted' }, 'Loading…'));
  const seekMsg = h('div', { class: 'error', id: 'seek-error' });
  const quickMsg = h('div', { class: 'error', id: 'quick-error' });
  const quickVariant = variantSelect('quick-variant');
  const quickButtons = h('div', { class: 'quick' }, QUICK.map(([label, t]) =>
    h('button', { class: 'quick-btn', id: `quick-${label.replace(/\s+/g, '').replace('+', '-')}`, 'data-tc': label, onclick: () => quick(t) }, label)));
  const quick$ = h('section', { class: 'panel', id: 'quick-pairing' }, h('h2', {}, 'Quick pairing'),
    h('label', { class: 'inline' }, 'Variant ', quickVariant), quickButtons, quickMsg);
  const seeks$ = h('section', { class: 'panel', id: 'lobby-seeks' }, h('h2', {}, 'Seeks'), seekBody, seekMsg);
  const seekForm$ = h('section', { class: 'panel', id: 'create-seek', hidden: true }, h('h2', {}, 'Create a seek'));
  const challenges$ = h('section', { class: 'panel', id: 'challenges', hidden: true }, h('h2', {}, 'Challenges'));
  const playing$ = h('section', { class: 'panel', id: 'your-turn', hidden: true }, h('h2', {}, 'Your turn'));
  const challengeBody = h('div', {});
  challenges$.append(challengeBody);
  const incoming = new Map<string, Challenge>();
  const outgoing = new Map<string, Challenge>();

  // The accept's answer and the socket's game_start both lead to the game: navigate once (a second
  // assignment would abort the first navigation).
  const go = (id: string) => {
    if (leaving) return;
    leaving = true;
    location.href = `/game/${id}`;
  };

  function renderSeeks(): void {
    const list = [...seeks.values()].sort((a, b) =>
      Number(!!a.days) - Number(!!b.days) || (a.clock && b.clock ? a.clock.limit + 40 * a.clock.increment - (b.clock.limit + 40 * b.clock.increment) : 0) || b.rating - a.rating);
    if (!list.length) {
      seekBody.replaceChildren(h('div', { class: 'muted', id: 'no-seeks' }, me ? 'No seeks. Create one, or use quick pairing.' : 'No seeks right now.'));
      return;
    }
    const myRating = (s: Seek) => me?.perfs[s.variant as keyof Account['perfs']]?.rating;
    seekBody.replaceChildren(h('table', { class: 'games seeks' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Player'), h('th', {}, 'Rating'), h('th', {}, 'Variant'), h('th', {}, 'Time'), h('th', {}, 'Mode'), h('th', {}, ''))),
      h('tbody', {}, list.map(s => {
        const own = isMe(me, s.username);
        const ok = own || inRange(s, myRating(s));
        const range = s.rating_min !== null || s.rating_max !== null ? ` (${s.rating_min ?? ''}–${s.rating_max ?? ''})` : '';
        return h('tr', {
          class: `seek${own ? ' own' : ''}${ok ? '' : ' out-of-range'}`, 'data-id': s.id, 'data-user': s.username,
          title: own ? 'your seek' : !me ? 'sign in to accept a seek' : ok ? 'play this game' : 'your rating is outside this seek\'s range',
          tabindex: own || !ok ? undefined : '0',
          onclick: (e: Event) => { if (!own && ok && !(e.target as HTMLElement).closest('a,button')) accept(s); },
          onkeydown: (e: KeyboardEvent) => { if (e.key === 'Enter' && !own && ok) accept(s); },
        },
          h('td', {}, playerLink(s.username)),
          h('td', {}, ratingText(s)),
          h('td', {}, variantTitle(s.variant)),
          h('td', {}, tcLabel(s)),
          h('td', {}, (s.rated ? 'Rated' : 'Casual') + range),
          h('td', {}, own
            ? h('button', { class: 'small seek-cancel', title: 'cancel this seek', onclick: () => cancel(s.id) }, 'Cancel')
            : s.color !== 'random' ? h('span', { class: 'muted', title: `${s.username} plays ${s.color}` }, `you: ${s.color === 'white' ? 'black' : 'white'}`) : ''));
      }))));
  }

  async function accept(s: Seek): Promise<void> {
    seekMsg.textContent = '';
    if (!me) {
      seekMsg.replaceChildren('Sign in to accept a seek: ', h('a', { href: '/login' }, 'Sign in'), ' · ', h('a', { href: '/signup' }, 'Sign up'));
      return;
    }
    try {
      const r = await api<{ game_id: string }>('POST', `/api/seeks/${s.id}/accept`);
      go(r.game_id);
    } catch (e: any) {
      seekMsg.textContent = e.message;
      if (e.status === 409 || e.status === 404) {
        seeks.delete(s.id);
        renderSeeks();
      }
    }
  }
  async function cancel(id: string): Promise<void> {
    seekMsg.textContent = '';
    try {
      await api('DELETE', `/api/seeks/${id}`);
      seeks.delete(id);
      renderSeeks();
    } catch (e: any) {
      seekMsg.textContent = e.message;
    }
  }
  async function createSeek(body: object, msg: HTMLElement): Promise<boolean> {
    await Promise.race([wsOpen, new Promise(r => setTimeout(r, 3000))]);
    try {
      const r = await api<{ id: string }>('POST', '/api/seeks', body);
      msg.className = 'ok';
      msg.textContent = 'Seek created: waiting for an opponent… (it stays while this page is open)';
      return !!r;
    } catch (e: any) {
      msg.className = 'error';
      msg.textContent = e.message;
      return false;
    }
  }
  async function quick(t: TimeControl): Promise<void> {
    quickMsg.textContent = '';
    if (!me) {
      quickMsg.replaceChildren('Sign in to play rated games: ', h('a', { href: '/login' }, 'Sign in'), ' · ', h('a', { href: '/signup' }, 'Sign up'));
      return;
    }
    const variant = quickVariant.value;
    const rating = me.perfs[variant as keyof Account['perfs']]?.rating;
    const match = [...seeks.values()]
      .filter(s => !isMe(me, s.username) && s.variant === variant && sameTc(s, t) && inRange(s, rating))
      .sort((a, b) => Number(b.rated) - Number(a.rated))[0];
    if (match) return accept(match);
    const mine = [...seeks.values()].find(s => isMe(me, s.username) && s.variant === variant && sameTc(s, t));
    if (mine) {
      quickMsg.className = 'ok';
      quickMsg.textContent = 'You already seek this game: waiting for an opponent…';
      return;
    }
    await createSeek({ variant, ...t, rated: true, color: 'random' }, quickMsg);
  }

  function seekForm(): HTMLElement {
    const variant = variantSelect('variant');
    const tc = timeControlFields('300+3', 'seek-tc');
    const rated = h('input', { type: 'checkbox', name: 'rated', checked: true });
    const color = colorSelect('color');
    const min = h('input', { type: 'number', name: 'rating_min', placeholder: 'any', min: '0', max: '4000', step: '50', class: 'num' });
    const max = h('input', { type: 'number', name: 'rating_max', placeholder: 'any', min: '0', max: '4000', step: '50', class: 'num' });
    const msg = h('div', { class: 'error', id: 'seek-form-msg' });
    const submit = h('button', { type: 'submit', class: 'primary', id: 'create-seek-btn' }, 'Create seek');
    return h('form', {
      class: 'create seek-form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        msg.textContent = '';
        const t = tc.read();
        if (typeof t === 'string') return void (msg.textContent = t);
        const body: any = { variant: variant.value, ...t, rated: rated.checked, color: color.value };
        if (min.value) body.rating_min = Number(min.value);
        if (max.value) body.rating_max = Number(max.value);
        submit.disabled = true;
        await createSeek(body, msg);
        submit.disabled = false;
      },
    },
      h('label', {}, 'Variant ', variant), ...tc.fields,
      h('label', { class: 'check' }, rated, ' Rated'), h('label', {}, 'Your colour ', color),
      h('div', { class: 'inline-fields wide' }, h('label', {}, 'Rating from ', min), h('label', {}, 'to ', max)),
      submit, msg);
  }

  function renderChallenges(): void {
    const desc = (c: Challenge) => `${variantTitle(c.variant)} · ${tcLabel(c)} · ${c.rated ? 'rated' : 'casual'}${c.color !== 'random' ? ` · they play ${c.color}` : ''}`;
    const rows: HTMLElement[] = [];
    for (const c of incoming.values()) {
      const reason = h('select', { name: 'decline-reason', 'aria-label': 'reason' }, DECLINE_REASONS.map(([k, t]) => h('option', { value: k }, t)));
      const err = h('span', { class: 'error' });
      rows.push(h('div', { class: 'challenge in', 'data-id': c.id },
        h('div', {}, playerLink(c.from), ' challenges you: ', h('span', { class: 'muted' }, desc(c).replace('they play', `${c.from} plays`))),
        h('div', { class: 'row' },
          h('button', { class: 'primary challenge-accept', onclick: async () => {
            try { go((await api<{ game_id: string }>('POST', `/api/challenge/${c.id}/accept`)).game_id); } catch (e: any) { err.textContent = e.message; }
          } }, 'Accept'),
          h('button', { class: 'challenge-decline', onclick: async () => {
            try { await api('POST', `/api/challenge/${c.id}/decline`, { reason: reason.value }); incoming.delete(c.id); renderChallenges(); } catch (e: any) { err.textContent = e.message; }
          } }, 'Decline'), reason, err)));
    }
    for (const c of outgoing.values()) {
      const err = h('span', { class: 'error' });
      rows.push(h('div', { class: 'challenge out', 'data-id': c.id },
        h('div', {}, 'You challenge ', playerLink(c.to), ': ', h('span', { class: 'muted' }, desc(c).replace(' · they play', ' · you play'))),
        h('div', { class: 'row' }, h('span', { class: 'muted' }, 'waiting…'),
          h('button', { class: 'small challenge-cancel', onclick: async () => {
            try { await api('POST', `/api/challenge/${c.id}/cancel`); outgoing.delete(c.id); renderChallenges(); } catch (e: any) { err.textContent = e.message; }
          } }, 'Cancel'), err)));
    }
    challengeBody.replaceChildren(...(rows.length ? rows : [h('div', { class: 'muted' }, 'No challenges. Challenge someone from their player page.')]));
  }

  let playingTimer = 0;
  async function loadPlaying(): Promise<void> {
    try {
      const r = await api<{ games: Playing[] }>('GET', '/api/account/playing');
      playing$.replaceChildren(h('h2', {}, 'Your turn'), playingList(r.games));
    } catch (e: any) {
      playing$.replaceChildren(h('h2', {}, 'Your turn'), h('div', { class: 'error' }, e.message));
    }
  }

  function connect(): void {
    let opened: () => void = () => {};
    wsOpen = new Promise(r => (opened = r));
    const sock = new WebSocket(wsUrl('/api/lobby/ws'));
    ws = sock;
    let ping = 0;
    sock.onopen = () => {
      backoff = 1000;
      opened();
      ping = window.setInterval(() => sock.readyState === WebSocket.OPEN && sock.send(JSON.stringify({ type: 'ping' })), 25000);
    };
    sock.onmessage = ev => {
      let msg: any;
      try { msg = JSON.parse(ev.data); } catch { return; }
      switch (msg.type) {
        case 'seeks':
          seeks.clear();
          for (const s of msg.seeks as Seek[]) seeks.set(s.id, s);
          renderSeeks();
          break;
        case 'seek_added':
          seeks.set(msg.seek.id, msg.seek);
          renderSeeks();
          break;
        case 'seek_removed':
          seeks.delete(msg.id);
          renderSeeks();
          break;
        case 'game_start':
          go(msg.game_id);
          break;
        case 'game_finish':
          if (me) loadPlaying();
          break;
        case 'challenge': {
          const c = msg.challenge as Challenge;
          if (c.status !== 'pending') break;
          (isMe(me, c.from) ? outgoing : incoming).set(c.id, c);
          renderChallenges();
          break;
        }
        case 'challenge_gone':
          incoming.delete(msg.id);
          outgoing.delete(msg.id);
          renderChallenges();
          break;
        case 'error':
          seekMsg.textContent = msg.error;
          break;
      }
    };
    sock.onclose = () => {
      clearInterval(ping);
      if (leaving) return;
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 30000);
    };
  }

  // Seeks are public; fall back to GET when the socket is slow.
  api<{ seeks: Seek[] }>('GET', '/api/seeks').then(r => {
    if (seeks.size === 0) {
      for (const s of r.seeks) seeks.set(s.id, s);
      renderSeeks();
    }
  }).catch(e => seekBody.replaceChildren(h('div', { class: 'muted' }, `Seeks unavailable: ${e.message}`)));

  account().then(a => {
    me = a;
    if (me) {
      seekForm$.hidden = false;
      seekForm$.append(seekForm());
      challenges$.hidden = false;
      playing$.hidden = false;
      renderChallenges();
      api<{ in: Challenge[]; out: Challenge[] }>('GET', '/api/challenges').then(r => {
        for (const c of r.in) incoming.set(c.id, c);
        for (const c of r.out) outgoing.set(c.id, c);
        renderChallenges();
      }).catch(e => challengeBody.replaceChildren(h('div', { class: 'error' }, e.message)));
      loadPlaying();
      playingTimer = window.setInterval(() => {
        if (document.hidden) return;
        playing$.querySelectorAll<HTMLElement>('[data-deadline]').forEach(el => (el.textContent = ` · ${untilText(Number(el.dataset.deadline))} left`));
      }, 1000);
      window.setInterval(() => !document.hidden && loadPlaying(), 30000);
    } else {
      quick$.append(h('p', { class: 'muted', id: 'signin-hint' }, h('a', { href: '/signup' }, 'Sign up'), ' or ', h('a', { href: '/login' }, 'sign in'),
        ' to create seeks, accept them and play rated games. You can still play without an account below.'));
      quickButtons.querySelectorAll('button').forEach(b => ((b as HTMLButtonElement).disabled = true));
    }
    renderSeeks();
    connect();
  });
  window.addEventListener('pagehide', () => { leaving = true; ws?.close(); clearInterval(playingTimer); });

  return [quick$, seeks$, playing$, challenges$, seekForm$];
}
