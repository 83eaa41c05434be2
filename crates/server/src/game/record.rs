//! What is stored about a game besides its moves: [`Meta`] (players, engine seat, clock, offers,
//! takebacks, a result decided off the board), kept as JSON in the header row, and the small typed
//! values it is made of ([`Side`], [`Reason`]).

use super::clock::Clock;
use rules::outcome::{DrawReason, Outcome, WinReason};
use rules::Color;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A colour on the wire and in storage (`"white"`, `"black"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

impl Side {
    pub fn color(self) -> Color {
        match self {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Side::White => "white",
            Side::Black => "black",
        }
    }
    pub fn parse(s: &str) -> Option<Side> {
        match s {
            "white" => Some(Side::White),
            "black" => Some(Side::Black),
            _ => None,
        }
    }
}

impl From<Color> for Side {
    fn from(c: Color) -> Side {
        match c {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }
}

/// Why a game ended (`aborted` for an aborted game).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    Checkmate,
    KingCaptured,
    Resignation,
    Timeout,
    Stalemate,
    DeadPosition,
    FivefoldRepetition,
    SeventyFiveMoveRule,
    ThreefoldRepetition,
    FiftyMoveRule,
    Agreement,
    TimeoutVsInsufficientMaterial,
    Aborted,
}

impl Reason {
    pub fn of(o: &Outcome) -> Reason {
        match o {
            Outcome::Win { reason, .. } => match reason {
                WinReason::Checkmate => Reason::Checkmate,
                WinReason::KingCaptured => Reason::KingCaptured,
                WinReason::Resignation => Reason::Resignation,
                WinReason::Timeout => Reason::Timeout,
            },
            Outcome::Draw(r) => Reason::of_draw(*r),
        }
    }
    pub fn of_draw(r: DrawReason) -> Reason {
        match r {
            DrawReason::Stalemate => Reason::Stalemate,
            DrawReason::DeadPosition => Reason::DeadPosition,
            DrawReason::FivefoldRepetition => Reason::FivefoldRepetition,
            DrawReason::SeventyFiveMoveRule => Reason::SeventyFiveMoveRule,
            DrawReason::ThreefoldRepetition => Reason::ThreefoldRepetition,
            DrawReason::FiftyMoveRule => Reason::FiftyMoveRule,
            DrawReason::Agreement => Reason::Agreement,
            DrawReason::TimeoutVsInsufficientMaterial => Reason::TimeoutVsInsufficientMaterial,
        }
    }
}

/// A result decided off the board (resignation, time, agreement, claim), stored so that the game
/// can be rebuilt from its moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Imposed {
    pub winner: Option<Side>,
    pub reason: Reason,
}

impl Imposed {
    pub fn of(o: &Outcome) -> Imposed {
        Imposed {
            winner: o.winner().map(Side::from),
            reason: Reason::of(o),
        }
    }
    pub fn outcome(&self) -> Option<Outcome> {
        let win = |reason| {
            Some(Outcome::Win {
                winner: self.winner?.color(),
                reason,
            })
        };
        let draw = |r| Some(Outcome::Draw(r));
        match self.reason {
            Reason::Checkmate => win(WinReason::Checkmate),
            Reason::KingCaptured => win(WinReason::KingCaptured),
            Reason::Resignation => win(WinReason::Resignation),
            Reason::Timeout => win(WinReason::Timeout),
            Reason::Stalemate => draw(DrawReason::Stalemate),
            Reason::DeadPosition => draw(DrawReason::DeadPosition),
            Reason::FivefoldRepetition => draw(DrawReason::FivefoldRepetition),
            Reason::SeventyFiveMoveRule => draw(DrawReason::SeventyFiveMoveRule),
            Reason::ThreefoldRepetition => draw(DrawReason::ThreefoldRepetition),
            Reason::FiftyMoveRule => draw(DrawReason::FiftyMoveRule),
            Reason::Agreement => draw(DrawReason::Agreement),
            Reason::TimeoutVsInsufficientMaterial => {
                draw(DrawReason::TimeoutVsInsufficientMaterial)
            }
            Reason::Aborted => None,
        }
    }
}

/// A takeback: who asked, the number of moves before and after, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TakebackRecord {
    pub by: Side,
    #[ts(type = "number")]
    pub from_ply: usize,
    #[ts(type = "number")]
    pub to_ply: usize,
    #[ts(type = "number")]
    pub at_ms: i64,
}

/// The engine's seat in a game against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSeat {
    pub level: u8,
    pub color: Side,
}

/// An account in a seat, as stored with the game and shown to everyone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlayerRef {
    pub username: String,
    /// The rating in the game's variant when the game began (rounded).
    pub rating: Option<i32>,
    pub provisional: bool,
    pub bot: bool,
    /// The rating change once a rated game ended.
    pub rating_diff: Option<i32>,
}

impl PlayerRef {
    /// The account's id: the username in lowercase.
    pub fn id(&self) -> String {
        self.username.to_ascii_lowercase()
    }
}

/// A rematch after the game: an open offer by one side, then the next game's id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Rematch {
    pub offer: Option<Side>,
    pub game_id: Option<String>,
}

/// One day, in ms (correspondence deadlines).
pub const DAY_MS: i64 = 86_400_000;

/// Everything about a game that is neither its moves nor a searchable column. Fields added after
/// the first release default when absent, so older records still load.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub engine: Option<EngineSeat>,
    /// Player tokens (white, black); `None` for the engine or a seat not yet taken.
    pub tokens: [Option<String>; 2],
    pub invite: Option<String>,
    /// Listed in the open games with its invite, so that anyone may join.
    pub public: bool,
    pub clock: Option<Clock>,
    pub draw_offer: Option<Side>,
    pub takeback_offer: Option<Side>,
    pub takebacks: Vec<TakebackRecord>,
    pub takebacks_used: [u32; 2],
    pub imposed: Option<Imposed>,
    /// The accounts in the seats (white, black); `None`: anonymous or the engine.
    #[serde(default)]
    pub players: [Option<PlayerRef>; 2],
    /// Rated: both seats are accounts, and the result moves their ratings.
    #[serde(default)]
    pub rated: bool,
    /// Correspondence: days per turn.
    #[serde(default)]
    pub days: Option<u32>,
    /// Correspondence: when the side to move loses on time (epoch ms).
    #[serde(default)]
    pub deadline: Option<i64>,
    #[serde(default)]
    pub rematch: Rematch,
}

impl Meta {
    /// A game's record before anyone moved: the seats, the engine, the time control.
    pub fn new(engine: Option<EngineSeat>, tokens: [Option<String>; 2]) -> Meta {
        Meta {
            engine,
            tokens,
            invite: None,
            public: false,
            clock: None,
            draw_offer: None,
            takeback_offer: None,
            takebacks: Vec::new(),
            takebacks_used: [0, 0],
            imposed: None,
            players: [None, None],
            rated: false,
            days: None,
            deadline: None,
            rematch: Rematch::default(),
        }
    }
}
