// The custom time control, one component for every form that sets a clock (the lobby's create form, the
// seek form, the challenge form): a base in minutes (0–180, fractions allowed) and an increment in whole
// seconds (0–180), with a help line. `read()` checks them here, marking the refused field
// `aria-invalid`, before the server checks the clock again (a base under a second with no increment is
// the server's to refuse, with its reason).
import type { ClockSpec } from './api';
import { h } from './util';

export interface CustomClock {
  /** The row of fields (hide it while the form's time control is not "Custom…"). */
  el: HTMLElement;
  base: HTMLInputElement;
  increment: HTMLInputElement;
  /** The clock in seconds, or why it is refused. */
  read(): ClockSpec | string;
}

/**
 * The fields get the ids `{id}-base`, `{id}-increment`, `{id}-help` and the row `custom-{id}` (one prefix
 * per form on a page); `other` names the form's choice without a clock, for the message about a 0+0 clock.
 */
export function customClock(id: string, other: string): CustomClock {
  const help = `${id}-help`;
  const base = h('input', { type: 'number', name: 'base', id: `${id}-base`, min: '0', max: '180', step: 'any', value: '5', inputmode: 'decimal', 'aria-describedby': help });
  const increment = h('input', { type: 'number', name: 'increment', id: `${id}-increment`, min: '0', max: '180', step: '1', value: '3', inputmode: 'numeric', 'aria-describedby': help });
  const el = h('div', { class: 'inline-fields custom-tc', id: `custom-${id}` },
    h('label', {}, 'Base (minutes) ', base), h('label', {}, 'Increment (seconds) ', increment),
    h('div', { class: 'muted small-help', id: help }, 'Base 0–180 minutes, increment 0–180 seconds.'));
  const read = (): ClockSpec | string => {
    const b = base.value.trim() === '' ? NaN : Number(base.value), i = increment.value.trim() === '' ? NaN : Number(increment.value);
    base.removeAttribute('aria-invalid');
    increment.removeAttribute('aria-invalid');
    const bad = (field: HTMLInputElement, m: string) => (field.setAttribute('aria-invalid', 'true'), m);
    if (!Number.isFinite(b) || b < 0 || b > 180) return bad(base, 'Base time: enter 0 to 180 minutes.');
    if (!Number.isFinite(i) || i < 0 || i > 180 || !Number.isInteger(i)) return bad(increment, 'Increment: enter a whole number of seconds from 0 to 180.');
    if (b === 0 && i === 0) return bad(base, `A clock of 0+0 has no time: raise the base or the increment, or choose ${other}.`);
    return { limit: Math.round(b * 60 * 1000) / 1000, increment: i };
  };
  return { el, base, increment, read };
}
