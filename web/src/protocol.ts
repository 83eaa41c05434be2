// Generated from the server's Rust types by ts-rs (crates/server/src/protocol.rs).
// Do not edit: UPDATE_PROTOCOL=1 cargo test -p doublemove-server protocol

export type Side = "white" | "black";

export type Status = "waiting" | "started" | "finished" | "aborted";

export type Reason = "checkmate" | "king_captured" | "resignation" | "timeout" | "stalemate" | "dead_position" | "fivefold_repetition" | "seventy_five_move_rule" | "threefold_repetition" | "fifty_move_rule" | "agreement" | "timeout_vs_insufficient_material" | "aborted";

export type PhaseName = "start" | "response" | "second";

export type TurnKind = "normal" | "single" | "response" | "double";

export type StateKind = "gameFull" | "gameState" | "summary";

export type Seat = { "kind": "human", joined: boolean, } | { "kind": "engine", level: number, };

export type TurnView = { color: Side, fullmove: number, 
/**
 * The turn's moves in UCI joined by commas.
 */
uci: string, san: string, kind: TurnKind, 
/**
 * False for the turn in progress.
 */
complete: boolean, 
/**
 * The mover's clock after the turn.
 */
clock_ms: number | null, };

export type ClockView = { limit_ms: number, increment_ms: number, white_ms: number, black_ms: number, 
/**
 * The side whose clock runs now.
 */
running: Side | null, };

export type Offers = { draw: Side | null, takeback: Side | null, };

export type PerSide<T> = { white: T, black: T, };

export type Legal = { dests: { [key in string]: Array<string> }, 
/**
 * Double Move Chess at the start of a turn: the moves that may begin the Double Move.
 */
double_dests?: { [key in string]: Array<string> }, 
/**
 * `from+to` pairs that need a promotion letter.
 */
promotions: Array<string>, };

export type TakebackRecord = { by: Side, from_ply: number, to_ply: number, at_ms: number, };

export type GameState = { type: StateKind, id: string, variant: string, initial_fen: string, fen: string, turn: Side, phase: PhaseName, fullmove: number, check: boolean, white: Seat, black: Seat, 
/**
 * Every move in UCI.
 */
moves: Array<string>, turns?: Array<TurnView>, status: Status, 
/**
 * `1-0`, `0-1`, `1/2-1/2`, `*` (aborted).
 */
result: string | null, winner: Side | null, reason: Reason | null, 
/**
 * The rules crate's description of the result.
 */
reason_text: string | null, clock: ClockView | null, offers: Offers, claimable_draw: Reason | null, takebacks?: Array<TakebackRecord>, takebacks_used: PerSide<number>, 
/**
 * Double Move Chess: whether each side still has its Double Move.
 */
double_move: PerSide<boolean> | null, legal?: Legal, 
/**
 * Open public games: the invite to join with.
 */
invite?: string, created_at: number, updated_at: number, 
/**
 * The accounts in the seats (`null`: anonymous or the engine).
 */
players: PerSide<PlayerRef | null>, rated: boolean, 
/**
 * Correspondence: days per turn.
 */
days: number | null, 
/**
 * Correspondence: when the side to move loses on time.
 */
deadline_ms: number | null, rematch: Rematch, 
/**
 * The requester's seat (only in `GET /api/games/{id}` and a socket's first message).
 */
you?: Side, };

export type ErrorMessage = { type: "error", status: number, error: string, };

export type MoveAction = { move?: string, double?: boolean, turn?: string, };

export type DrawAction = "offer" | "accept" | "decline" | "claim";

export type TakebackAction = "propose" | "accept" | "decline";

export type Action = { "type": "move" } & MoveAction | { "type": "resign" } | { "type": "abort" } | { "type": "draw", action: DrawAction, } | { "type": "takeback", action: TakebackAction, };

export type ChatRoom = "player" | "spectator";

export type ClientMessage = { "type": "ping" } | { "type": "chat", room: ChatRoom, text: string, } | Action;

export type PlayerRef = { username: string, 
/**
 * The rating in the game's variant when the game began (rounded).
 */
rating: number | null, provisional: boolean, bot: boolean, 
/**
 * The rating change once a rated game ended.
 */
rating_diff: number | null, };

export type Rematch = { offer: Side | null, game_id: string | null, };

export type ChatLine = { 
/**
 * The writer's username (`null`: anonymous).
 */
user: string | null, text: string, at: number, };

export type ChatMessage = { "type": "chat", room: ChatRoom, line: ChatLine, } | { "type": "chat_history", room: ChatRoom, lines: Array<ChatLine>, };

export type PerfView = { rating: number, rd: number, games: number, provisional: boolean, };

export type ClockSpec = { limit: number, increment: number, };

export type ColorChoice = "white" | "black" | "random";

export type GameSpec = { variant: string, clock: ClockSpec | null, days: number | null, rated: boolean, };

export type Seek = { id: string, username: string, rating: number, provisional: boolean, color: ColorChoice, rating_min: number | null, rating_max: number | null, created_at: number, variant: string, clock: ClockSpec | null, days: number | null, rated: boolean, };

export type ChallengeStatus = "pending" | "accepted" | "declined" | "canceled";

export type DeclineReason = "generic" | "later" | "too_fast" | "too_slow" | "time_control" | "rated" | "casual" | "variant";

export type Challenge = { id: string, from: string, to: string, 
/**
 * The challenger's colour.
 */
color: ColorChoice, status: ChallengeStatus, decline_reason: DeclineReason | null, game_id: string | null, created_at: number, variant: string, clock: ClockSpec | null, days: number | null, rated: boolean, };

export type LobbyEvent = { "type": "seeks", seeks: Array<Seek>, } | { "type": "seek_added", seek: Seek, } | { "type": "seek_removed", id: string, };

export type UserEvent = { "type": "game_start", game_id: string, color: Side, variant: string, } | { "type": "game_finish", game_id: string, } | { "type": "challenge", challenge: Challenge, } | { "type": "challenge_gone", id: string, reason: string, challenge: Challenge, };

export type HistoryPoint = { at: number, rating: number, rd: number, game_id: string, };

export type BoardEntry = { username: string, rating: number, rd: number, games: number, };

export type Playing = { id: string, variant: string, color: Side, opponent: PlayerRef | null, my_turn: boolean, deadline_ms: number | null, clock: ClockView | null, days: number | null, fen: string, };
