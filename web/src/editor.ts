import { h } from './util';
export function editorPage(app: HTMLElement, _p: URLSearchParams): void { app.append(h('div', {}, 'editor')); }
