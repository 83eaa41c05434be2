//! What a client is told about a game: [`GameState`] (the whole state, sent by `GET`, every
//! action's answer and every stream/WebSocket event) and its parts, built from a [`Live`] game at
//! an instant. These types are the protocol: their TypeScript twins are generated (`ts-rs`) into
//! `web/src/protocol.ts`.

use super::live::Live;
use super::record::{PlayerRef, Reason, Rematch, Side, TakebackRecord};
use crate::store::Status;
use rules::{Color, Phase, Position, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// `gameFull` (first event, `GET`), `gameState` (after a change) or `summary` (game lists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub enum StateKind {
    #[serde(rename = "gameFull")]
    GameFull,
    #[serde(rename = "gameState")]
    GameState,
    #[serde(rename = "summary")]
    Summary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum PhaseName {
    /// The first move of a turn.
    Start,
    /// A Two Move Chess response move turn (one move).
    Response,
    /// The same player's second move.
    Second,
}

impl From<Phase> for PhaseName {
    fn from(p: Phase) -> PhaseName {
        match p {
            Phase::Start => PhaseName::Start,
            Phase::Response => PhaseName::Response,
            Phase::Second => PhaseName::Second,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum TurnKind {
    Normal,
    /// Two Move Chess: a one-move turn that checked, captured, promoted or allowed en passant.
    Single,
    /// Two Move Chess: the one-move answer to such a turn.
    Response,
    /// Double Move and Twinmove: a two-move turn.
    Double,
}

/// A player's seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Seat {
    Human { joined: bool },
    Engine { level: u8 },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TurnView {
    pub color: Side,
    pub fullmove: u32,
    /// The turn's moves in UCI joined by commas.
    pub uci: String,
    pub san: String,
    pub kind: TurnKind,
    /// False for the turn in progress.
    pub complete: bool,
    /// The mover's clock after the turn.
    #[ts(type = "number | null")]
    pub clock_ms: Option<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ClockView {
    #[ts(type = "number")]
    pub limit_ms: i64,
    #[ts(type = "number")]
    pub increment_ms: i64,
    #[ts(type = "number")]
    pub white_ms: i64,
    #[ts(type = "number")]
    pub black_ms: i64,
    /// The side whose clock runs now.
    pub running: Option<Side>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Offers {
    pub draw: Option<Side>,
    pub takeback: Option<Side>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PerSide<T> {
    pub white: T,
    pub black: T,
}

/// Legal destinations of the side to move (mid-turn: the same player's second-half moves).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Legal {
    pub dests: BTreeMap<String, Vec<String>>,
    /// Double Move Chess at the start of a turn: the moves that may begin the Double Move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub double_dests: Option<BTreeMap<String, Vec<String>>>,
    /// `from+to` pairs that need a promotion letter.
    pub promotions: Vec<String>,
}

/// The whole state of a game, as every client sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct GameState {
    #[serde(rename = "type")]
    pub kind: StateKind,
    pub id: String,
    pub variant: String,
    pub initial_fen: String,
    pub fen: String,
    pub turn: Side,
    pub phase: PhaseName,
    pub fullmove: u32,
    pub check: bool,
    pub white: Seat,
    pub black: Seat,
    /// Every move in UCI.
    pub moves: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turns: Option<Vec<TurnView>>,
    pub status: Status,
    /// `1-0`, `0-1`, `1/2-1/2`, `*` (aborted).
    pub result: Option<String>,
    pub winner: Option<Side>,
    pub reason: Option<Reason>,
    /// The rules crate's description of the result.
    pub reason_text: Option<String>,
    pub clock: Option<ClockView>,
    pub offers: Offers,
    pub claimable_draw: Option<Reason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub takebacks: Option<Vec<TakebackRecord>>,
    pub takebacks_used: PerSide<u32>,
    /// Double Move Chess: whether each side still has its Double Move.
    pub double_move: Option<PerSide<bool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub legal: Option<Legal>,
    /// Open public games: the invite to join with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub invite: Option<String>,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
    /// The accounts in the seats (`null`: anonymous or the engine).
    pub players: PerSide<Option<PlayerRef>>,
    pub rated: bool,
    /// Correspondence: days per turn.
    pub days: Option<u32>,
    /// Correspondence: when the side to move loses on time.
    #[ts(type = "number | null")]
    pub deadline_ms: Option<i64>,
    pub rematch: Rematch,
    /// The requester's seat (only in `GET /api/games/{id}` and a socket's first message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub you: Option<Side>,
}

/// A refused WebSocket action, sent to its sender only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ErrorMessage {
    #[serde(rename = "type")]
    #[ts(type = "\"error\"")]
    pub kind: String,
    pub status: u16,
    pub error: String,
}

impl ErrorMessage {
    pub fn new(status: u16, error: String) -> ErrorMessage {
        ErrorMessage {
            kind: "error".into(),
            status,
            error,
        }
    }
}

fn turn_kind(variant: Variant, start: &Position, n: usize) -> TurnKind {
    match variant {
        Variant::Chess => TurnKind::Normal,
        Variant::TwoMove if start.phase() == Phase::Response => TurnKind::Response,
        Variant::TwoMove if n == 1 => TurnKind::Single,
        Variant::TwoMove => TurnKind::Normal,
        Variant::DoubleMove | Variant::Twinmove if n == 2 => TurnKind::Double,
        _ => TurnKind::Normal,
    }
}

/// The king in check: the side to move's, else (between the halves of a Double Move or a Two Move
/// turn, after a first move that checks) the other side's.
pub fn checked_side(pos: &Position) -> Option<Side> {
    let to_move = pos.turn();
    [to_move, to_move.other()]
        .into_iter()
        .find(|&c| pos.board().king_attacked(c))
        .map(Side::from)
}

/// Legal destinations by origin square for the side to move.
pub fn legal_of(pos: &Position) -> Legal {
    let mut dests: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut double: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut promos: Vec<String> = Vec::new();
    for &m in pos.legal_moves().iter() {
        let map = if m.starts_double() {
            &mut double
        } else {
            &mut dests
        };
        let e = map.entry(m.from().to_string()).or_default();
        let to = m.to().to_string();
        if !e.contains(&to) {
            e.push(to);
        }
        if m.promotion().is_some() {
            let p = format!("{}{}", m.from(), m.to());
            if !promos.contains(&p) {
                promos.push(p);
            }
        }
    }
    Legal {
        dests,
        double_dests: (pos.variant() == Variant::DoubleMove && pos.phase() == Phase::Start)
            .then_some(double),
        promotions: promos,
    }
}

impl Live {
    /// The state at `now` (clocks counted up to `now`).
    pub fn state(&self, kind: StateKind, now: i64) -> GameState {
        let pos = self.game.position();
        let variant = self.variant();
        let turns = self.game.turns();
        let open = pos.phase() == Phase::Second;
        let clocks = self.turn_clocks();
        let turn_list = turns
            .iter()
            .enumerate()
            .map(|(i, t)| TurnView {
                color: Side::from(t.color),
                fullmove: t.fullmove,
                uci: t
                    .moves
                    .iter()
                    .map(|m| m.uci())
                    .collect::<Vec<_>>()
                    .join(","),
                san: self.turn_san(t),
                kind: if open && i + 1 == turns.len() {
                    // Half played: not a one-move turn (yet), whatever its length says.
                    TurnKind::Normal
                } else {
                    turn_kind(variant, &self.game.positions()[t.start], t.moves.len())
                },
                complete: !(open && i + 1 == turns.len()),
                clock_ms: clocks.get(i).copied().flatten(),
            })
            .collect();
        let aborted = self.status == Status::Aborted;
        let outcome = if aborted { None } else { self.game.outcome() };
        let clock = self.meta.clock.as_ref().map(|c| {
            let r = c.remaining(now);
            ClockView {
                limit_ms: c.limit_ms,
                increment_ms: c.increment_ms,
                white_ms: r[0].max(0),
                black_ms: r[1].max(0),
                running: c.running_side().map(Side::from),
            }
        });
        let st = pos.state();
        let seat = |c: Color| match self.meta.engine {
            Some(e) if e.color.color() == c => Seat::Engine { level: e.level },
            _ => Seat::Human {
                joined: self.meta.tokens[c.index()].is_some()
                    || self.meta.players[c.index()].is_some(),
            },
        };
        let running = self.status == Status::Started && outcome.is_none();
        GameState {
            kind,
            id: self.id.clone(),
            variant: variant.name().to_string(),
            initial_fen: self.initial_fen.clone(),
            fen: pos.fen(),
            turn: Side::from(pos.turn()),
            phase: pos.phase().into(),
            fullmove: pos.fullmove(),
            check: pos.in_check(),
            white: seat(Color::White),
            black: seat(Color::Black),
            moves: self
                .moves
                .iter()
                .map(|m| m.uci.trim_end_matches('*').to_string())
                .collect(),
            turns: Some(turn_list),
            status: self.status,
            result: outcome
                .map(|o| o.result().to_string())
                .or(aborted.then(|| "*".to_string())),
            winner: outcome.and_then(|o| o.winner()).map(Side::from),
            reason: outcome
                .map(|o| Reason::of(&o))
                .or(aborted.then_some(Reason::Aborted)),
            reason_text: outcome.map(|o| o.describe(variant)),
            clock,
            offers: Offers {
                draw: self.meta.draw_offer,
                takeback: self.meta.takeback_offer,
            },
            claimable_draw: self.game.claimable_draw().map(Reason::of_draw),
            takebacks: Some(self.meta.takebacks.clone()),
            takebacks_used: PerSide {
                white: self.meta.takebacks_used[0],
                black: self.meta.takebacks_used[1],
            },
            double_move: (variant == Variant::DoubleMove).then_some(PerSide {
                white: st.double_move[0],
                black: st.double_move[1],
            }),
            legal: Some(if running {
                legal_of(pos)
            } else {
                Legal::default()
            }),
            invite: None,
            created_at: self.created_at,
            updated_at: self.updated_at,
            players: PerSide {
                white: self.meta.players[0].clone(),
                black: self.meta.players[1].clone(),
            },
            rated: self.meta.rated,
            days: self.meta.days,
            deadline_ms: self.meta.deadline.filter(|_| running),
            rematch: self.meta.rematch.clone(),
            you: None,
        }
    }

    /// A short state for game lists: no legal moves, turns or takebacks; an open public game shows
    /// its invite.
    pub fn summary(&self, now: i64) -> GameState {
        let mut s = self.state(StateKind::Summary, now);
        s.legal = None;
        s.turns = None;
        s.takebacks = None;
        if self.meta.public && self.status == Status::Waiting {
            s.invite = self.meta.invite.clone();
        }
        s
    }
}
