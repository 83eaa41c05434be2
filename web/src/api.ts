// Types and calls of the game server API (docs/api.md).

export type Variant = 'chess' | 'two-move' | 'double-move' | 'twinmove';
export const VARIANTS: [Variant, string][] = [
  ['chess', 'Chess'],
  ['two-move', 'Two Move Chess'],
  ['double-move', 'Double Move Chess'],
  ['twinmove', 'Twinmove Chess'],
];
export const variantTitle = (v: string): string => VARIANTS.find(([k]) => k === v)?.[1] ?? v;

// The wire types are generated from the server's Rust types (protocol.ts, by ts-rs).
import type * as P from './protocol';
export type { Action, ClientMessage, ErrorMessage, Legal, MoveAction, Seat } from './protocol';

export type Color = P.Side;
export type GameState = P.GameState;
/** A turn as the game state lists it, or as a PGN import replays it (with the position after it). */
export type Turn = Omit<P.TurnView, 'kind' | 'complete' | 'clock_ms'> &
  Partial<Pick<P.TurnView, 'kind' | 'complete' | 'clock_ms'>> & {
    fen_after?: string;
    comment?: string | null;
  };

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
