// Types and calls of the game server API (docs/api.md).

export type Color = 'white' | 'black';
export type Variant = 'chess' | 'two-move' | 'double-move' | 'twinmove';
export const VARIANTS: [Variant, string][] = [
  ['chess', 'Chess'],
  ['two-move', 'Two Move Chess'],
  ['double-move', 'Double Move Chess'],
  ['twinmove', 'Twinmove Chess'],
];
export const variantTitle = (v: string): string => VARIANTS.find(([k]) => k === v)?.[1] ?? v;

export interface Legal {
  dests: Record<string, string[]>;
  double_dests?: Record<string, string[]>;
  promotions: string[];
}
export interface Turn {
  color: Color;
  fullmove: number;
  uci: string;
  san: string;
  kind?: 'normal' | 'single' | 'response' | 'double';
  complete?: boolean;
  clock_ms?: number | null;
  fen_after?: string;
  comment?: string | null;
}
export interface Side {
  kind: 'human' | 'engine';
  joined?: boolean;
  level?: number;
}
export interface Clock {
  limit_ms: number;
  increment_ms: number;
  white_ms: number;
  black_ms: number;
  running: Color | null;
}
export interface GameState {
  type: 'gameFull' | 'gameState';
  id: string;
  variant: Variant;
  initial_fen: string;
  fen: string;
  turn: Color;
  phase: 'start' | 'response' | 'second';
  fullmove: number;
  check: boolean;
  white: Side;
  black: Side;
  moves: string[];
  turns?: Turn[];
  status: 'waiting' | 'started' | 'finished' | 'aborted';
  result: string | null;
  winner: Color | null;
  reason: string | null;
  reason_text: string | null;
  clock: Clock | null;
  offers: { draw: Color | null; takeback: Color | null };
  claimable_draw: string | null;
  takebacks_used?: { white: number; black: number };
  double_move?: { white: boolean; black: boolean };
  legal?: Legal;
  invite?: string | null;
  created_at: number;
  updated_at: number;
}

export class ApiError extends Error {
  constructor(public status: number, message: string) {
    super(message);
  }
}

export async function api<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers['Authorization'] = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text };
  }
  if (!res.ok) throw new ApiError(res.status, data?.error ?? `${res.status} ${res.statusText}`);
  return data as T;
}

// The games this browser plays, with their secret tokens (localStorage).
export interface MyGame {
  id: string;
  token: string;
  color: Color;
  variant: string;
  opponent: string;
  created: number;
  invite_url?: string | null;
}
const KEY = 'doublemove.games';
export function myGames(): MyGame[] {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '[]');
  } catch {
    return [];
  }
}
export function saveGame(g: MyGame): void {
  const all = myGames().filter(x => x.id !== g.id);
  all.unshift(g);
  localStorage.setItem(KEY, JSON.stringify(all.slice(0, 200)));
}
export function forgetGame(id: string): void {
  localStorage.setItem(KEY, JSON.stringify(myGames().filter(x => x.id !== id)));
}
export const myGame = (id: string): MyGame | undefined => myGames().find(g => g.id === id);

export function wsUrl(path: string): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;
}
