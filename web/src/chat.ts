// The game chat: a tab per room this socket may read (players: the player room; others: the spectator
// room), plain-text lines (textContent only), a 140-character input with a counter, and a switch to
// turn the chat off (remembered in localStorage).
import type { ChatLine, ChatRoom } from './api';
import { h } from './util';

const OFF_KEY = 'doublemove.chat.off';
const MAX = 140;
const ROOM_TITLE: Record<ChatRoom, string> = { player: 'Players', spectator: 'Spectators' };

export interface Chat {
  el: HTMLElement;
  history(room: ChatRoom, lines: ChatLine[]): void;
  line(room: ChatRoom, line: ChatLine): void;
  /** A server error after our last chat message, shown under the input. */
  error(text: string): void;
  /** Whether a chat message was sent in the last few seconds (so an error is probably about it). */
  pending(): boolean;
  /** Can this viewer write in the current room (e.g. anonymous spectators of a rated game cannot)? */
  setWritable(f: (room: ChatRoom) => boolean | string): void;
}

export function chatPanel(send: (msg: object) => boolean): Chat {
  const rooms = new Map<ChatRoom, ChatLine[]>();
  let active: ChatRoom | null = null;
  let off = localStorage.getItem(OFF_KEY) === '1';
  let sentAt = 0;
  let writable: (room: ChatRoom) => boolean | string = () => true;

  const tabs = h('div', { class: 'chat-tabs', role: 'tablist' });
  const lines = h('div', { class: 'chat-lines', id: 'chat-lines', 'aria-live': 'polite' });
  const input = h('input', { type: 'text', id: 'chat-input', maxLength: MAX, placeholder: 'Say something', autocomplete: 'off', 'aria-label': 'chat message' });
  const counter = h('span', { class: 'chat-count muted', id: 'chat-count' }, `0/${MAX}`);
  const err = h('div', { class: 'error chat-error', id: 'chat-error' });
  const form = h('form', {
    class: 'chat-form',
    onsubmit: (e: Event) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text || !active) return;
      err.textContent = '';
      if (send({ type: 'chat', room: active, text })) {
        sentAt = Date.now();
        input.value = '';
        count();
      } else err.textContent = 'Not connected; try again in a moment.';
    },
  }, input, counter);
  const toggle = h('input', { type: 'checkbox', id: 'chat-toggle', checked: !off, onchange: () => { off = !toggle.checked; localStorage.setItem(OFF_KEY, off ? '1' : '0'); render(); } });
  const body = h('div', { class: 'chat-body' }, tabs, lines, form, err);
  const offNote = h('div', { class: 'muted chat-off' }, 'Chat is off.');
  const el = h('section', { class: 'chat', id: 'chat' },
    h('div', { class: 'chat-head' }, h('strong', {}, 'Chat'), h('label', { class: 'check', title: 'turn the chat on or off (remembered in this browser)' }, toggle, ' on')),
    body, offNote);

  function count(): void {
    counter.textContent = `${input.value.length}/${MAX}`;
    counter.classList.toggle('full', input.value.length >= MAX);
  }
  input.addEventListener('input', count);

  function lineEl(l: ChatLine): HTMLElement {
    const row = h('div', { class: `chat-line${l.user ? '' : ' anon'}`, title: new Date(l.at).toLocaleTimeString() });
    const who = document.createElement('span');
    who.className = 'chat-user';
    who.textContent = l.user ?? 'Anonymous';
    const text = document.createElement('span');
    text.className = 'chat-text';
    text.textContent = l.text; // plain text, never HTML
    row.append(who, ' ', text);
    return row;
  }

  function render(): void {
    body.hidden = off;
    offNote.hidden = !off;
    el.classList.toggle('off', off);
    tabs.replaceChildren(...[...rooms.keys()].map(r =>
      h('button', { type: 'button', role: 'tab', class: `tab${r === active ? ' active' : ''}`, 'data-room': r, 'aria-selected': r === active ? 'true' : 'false',
        onclick: () => { active = r; render(); } }, ROOM_TITLE[r] ?? r)));
    tabs.hidden = rooms.size < 2;
    const list = active ? rooms.get(active) ?? [] : [];
    lines.replaceChildren(...(list.length ? list.map(lineEl) : [h('div', { class: 'muted' }, active ? 'No messages yet.' : 'Connecting…')]));
    lines.scrollTop = lines.scrollHeight;
    const w = active ? writable(active) : false;
    input.disabled = w !== true;
    form.querySelector('input')!.placeholder = w === true ? 'Say something' : typeof w === 'string' ? w : 'You cannot write here';
  }
  render();

  return {
    el,
    history(room, ls) {
      rooms.set(room, ls.slice());
      if (!active || (room === 'player' && active !== 'player')) active = room;
      render();
    },
    line(room, l) {
      if (!rooms.has(room)) rooms.set(room, []);
      rooms.get(room)!.push(l);
      if (!active) active = room;
      if (room === active && !off) {
        const empty = lines.querySelector('.muted');
        if (empty) empty.remove();
        lines.append(lineEl(l));
        lines.scrollTop = lines.scrollHeight;
      } else render();
    },
    error(text) {
      err.textContent = text;
    },
    pending() {
      return Date.now() - sentAt < 3000;
    },
    setWritable(f) {
      writable = f;
      render();
    },
  };
}
