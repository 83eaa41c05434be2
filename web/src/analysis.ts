import { h } from './util';
export function analysisPage(app: HTMLElement, _p: URLSearchParams): void { app.append(h('div', {}, 'analysis')); }
