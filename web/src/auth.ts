// The signed-in account (session cookie), the header's account links, and the sign-up / sign-in pages.
import { api, ApiError, type Account } from './api';
import { h } from './util';

let current: Promise<Account | null> | null = null;

/** The signed-in account, or null (asked once per page load). */
export function account(): Promise<Account | null> {
  if (!current)
    current = api<Account>('GET', '/api/account').catch(e => {
      if (!(e instanceof ApiError) || (e.status !== 401 && e.status !== 404)) console.warn('account:', e.message);
      return null;
    });
  return current;
}

/** Fills the header's account area: sign in / sign up, or the username and sign out. */
export async function renderHeader(): Promise<void> {
  const el = document.getElementById('account');
  if (!el) return;
  const me = await account();
  if (me) {
    el.replaceChildren(
      h('a', { href: `/@/${encodeURIComponent(me.username)}`, id: 'me-link', class: 'user' }, me.username),
      h('button', {
        id: 'signout', class: 'link',
        onclick: async () => {
          try {
            await api('POST', '/api/account/logout');
          } catch {}
          location.href = '/';
        },
      }, 'Sign out'),
    );
  } else {
    el.replaceChildren(
      h('a', { href: '/login', id: 'signin-link' }, 'Sign in'),
      h('a', { href: '/signup', id: 'signup-link', class: 'signup' }, 'Sign up'),
    );
  }
}

/** /signup and /login: labelled fields, the server's error text, then back to the lobby. */
export function authPage(app: HTMLElement, mode: 'signup' | 'login'): void {
  const signup = mode === 'signup';
  const user = h('input', {
    type: 'text', name: 'username', id: 'username', required: true, autocomplete: 'username',
    minLength: signup ? 2 : undefined, maxLength: 20, pattern: signup ? '[A-Za-z0-9_\\-]{2,20}' : undefined,
    autofocus: true, spellcheck: false, autocapitalize: 'off', 'aria-describedby': signup ? 'username-hint' : undefined,
  });
  const pass = h('input', {
    type: 'password', name: 'password', id: 'password', required: true,
    autocomplete: signup ? 'new-password' : 'current-password', minLength: signup ? 6 : undefined, maxLength: 128,
    'aria-describedby': signup ? 'password-hint' : undefined,
  });
  const err = h('div', { class: 'error', id: 'auth-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary', id: 'auth-submit' }, signup ? 'Sign up' : 'Sign in');
  const form = h('form', {
    class: 'auth',
    onsubmit: async (e: Event) => {
      e.preventDefault();
      err.textContent = '';
      submit.disabled = true;
      try {
        await api('POST', `/api/account/${signup ? 'signup' : 'login'}`, { username: user.value.trim(), password: pass.value });
        location.href = '/';
      } catch (x: any) {
        err.textContent = x.message;
        submit.disabled = false;
      }
    },
  },
    h('label', { for: 'username' }, 'Username'),
    user,
    signup ? h('div', { class: 'hint muted', id: 'username-hint' }, '2–20 letters, digits, _ or -') : null,
    h('label', { for: 'password' }, 'Password'),
    pass,
    signup ? h('div', { class: 'hint muted', id: 'password-hint' }, 'at least 6 characters') : null,
    err,
    submit,
  );
  app.append(h('section', { class: 'panel auth-page' },
    h('h2', {}, signup ? 'Create an account' : 'Sign in'),
    form,
    h('p', { class: 'muted' }, signup
      ? ['Already have an account? ', h('a', { href: '/login' }, 'Sign in')]
      : ['No account yet? ', h('a', { href: '/signup' }, 'Sign up'), '. You can also play without one from the ', h('a', { href: '/' }, 'lobby'), '.']),
  ));
  account().then(me => {
    if (me) form.before(h('p', { class: 'muted', id: 'already' }, `You are signed in as ${me.username}.`));
  });
}
