// Client-side routes: / lobby, /game/{id}, /join/{id}?invite=…, /analysis, /editor, /signup, /login,
// /@/{name} (player), /leaderboard, /variant/{two-move|double-move|twinmove} (rules pages; /variant lists them).
import { lobby } from './lobby';
import { gamePage, joinPage } from './game';
import { analysisPage } from './analysis';
import { editorPage } from './editor';
import { authPage, renderHeader } from './auth';
import { leaderboardPage, playerPage } from './players';
import { rulesPage } from './rules';
import { h } from './util';

function route(): void {
  const app = document.getElementById('app')!;
  app.replaceChildren();
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const params = new URLSearchParams(location.search);
  let m: RegExpMatchArray | null;
  document.querySelectorAll('header nav a').forEach(a =>
    a.classList.toggle('active', (a as HTMLAnchorElement).pathname === (path.startsWith('/game') ? '/' : path)));
  if (path === '/') lobby(app);
  else if ((m = path.match(/^\/game\/([\w-]+)$/))) gamePage(app, m[1]);
  else if ((m = path.match(/^\/join\/([\w-]+)$/))) joinPage(app, m[1], params.get('invite') ?? '');
  else if (path === '/analysis') analysisPage(app, params);
  else if (path === '/editor') editorPage(app, params);
  else if (path === '/signup' || path === '/login') authPage(app, path === '/signup' ? 'signup' : 'login');
  else if ((m = path.match(/^\/@\/([\w-]+)$/))) playerPage(app, m[1], params);
  else if (path === '/leaderboard') leaderboardPage(app, params);
  else if ((m = path.match(/^\/variant(?:\/([\w-]+))?$/))) rulesPage(app, m[1] ?? '');
  else app.append(h('div', { class: 'panel' }, h('h2', {}, 'Not found'), h('a', { href: '/' }, 'Back to the lobby')));
}

renderHeader();
route();
