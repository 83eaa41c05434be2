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

// The players API (accounts, ratings, seeks, challenges, chat): the wire types are generated too.
export type { ChatLine, ChatRoom, ClockSpec, Challenge, Seek, Playing, PlayerRef, Rematch } from './protocol';
export type Perf = P.PerfView;
export type Perfs = Partial<Record<Variant, Perf>>;
export interface Account { username: string; kind: 'human' | 'bot'; perfs: Perfs; created_at: number }
export interface UserInfo {
  username: string; kind: 'human' | 'bot'; created_at: number; perfs: Perfs;
  count: { all: number; rated: number; win: number; loss: number; draw: number; playing: number };
}
export type RatingPoint = P.HistoryPoint;
export type GameState = P.GameState;
export const DAYS = [1, 2, 3, 5, 7, 14];
/** "1500" or "1500?" (provisional). */
export const ratingText = (r: { rating: number | null; provisional: boolean } | null | undefined): string =>
  r && r.rating !== null ? `${r.rating}${r.provisional ? '?' : ''}` : '';
/** "5+3", "3 days", "∞". */
export function tcLabel(x: { clock?: P.ClockSpec | null; days?: number | null }): string {
  if (x.days) return `${x.days} day${x.days === 1 ? '' : 's'}`;
  if (x.clock) return `${Math.round((x.clock.limit / 60) * 10) / 10}+${x.clock.increment}`;
  return '∞';
}
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
