//! Why the game core refused an action: one typed [`GameError`], turned into an HTTP status and a
//! message (and the same status on the WebSocket) in one place, `crate::error`.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// No `Authorization: Bearer` token where one is needed.
    NoToken,
    /// A token that is not a player's in this game.
    NotAPlayer,
    WrongInvite,
    NotWaiting,
    /// The game waits for its second player.
    NotStarted,
    /// The game is over (the text says how).
    Over(String),
    NotYourTurn {
        to_move: &'static str,
    },
    /// A move that is not UCI/SAN at all, or a malformed request (text says why).
    BadRequest(String),
    IllegalMove {
        uci: String,
        reason: String,
    },
    IllegalTurn(String),
    NoOffer {
        what: &'static str,
        verb: &'static str,
    },
    EngineDeclinesDraw,
    NoDrawToClaim,
    OnlyMoverClaims,
    AbortTooLate,
    NothingToTakeBack,
    /// A rated game: only an account may take the seat.
    AccountNeeded,
    /// An account cannot play itself.
    OwnGame,
    /// A rematch is for a game that is over.
    NotOver,
    RematchStarted,
}

impl GameError {
    /// The HTTP status for this error.
    pub fn status(&self) -> u16 {
        use GameError::*;
        match self {
            NoToken | AccountNeeded => 401,
            NotAPlayer | WrongInvite => 403,
            BadRequest(_) | IllegalMove { .. } | IllegalTurn(_) => 400,
            NotWaiting
            | NotStarted
            | Over(_)
            | NotYourTurn { .. }
            | NoOffer { .. }
            | EngineDeclinesDraw
            | NoDrawToClaim
            | OnlyMoverClaims
            | AbortTooLate
            | NothingToTakeBack
            | OwnGame
            | NotOver
            | RematchStarted => 409,
        }
    }
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use GameError::*;
        match self {
            NoToken => f.write_str(
                "a player token or a login is needed: send 'Authorization: Bearer TOKEN' or sign in",
            ),
            NotAPlayer => f.write_str("this token is not a player's token in this game"),
            WrongInvite => f.write_str("wrong invite token"),
            NotWaiting => f.write_str("the game is not waiting for a player"),
            NotStarted => f.write_str("the game waits for a second player"),
            Over(how) => write!(f, "the game is over: {how}"),
            NotYourTurn { to_move } => write!(f, "it is not your turn: {to_move} is to move"),
            BadRequest(m) => f.write_str(m),
            IllegalMove { uci, reason } => write!(f, "illegal move {uci}: {reason}"),
            IllegalTurn(reason) => write!(f, "illegal turn: {reason}"),
            NoOffer { what, verb } => write!(f, "there is no {what} to {verb}"),
            EngineDeclinesDraw => f.write_str("the engine declines draw offers"),
            NoDrawToClaim => f.write_str(
                "no draw can be claimed now (neither threefold repetition nor the fifty-move rule)",
            ),
            OnlyMoverClaims => f.write_str("only the player to move may claim a draw"),
            AbortTooLate => {
                f.write_str("a game can only be aborted before both sides have played a turn")
            }
            NothingToTakeBack => f.write_str("you have no turn to take back"),
            AccountNeeded => f.write_str("a rated game needs an account: sign in to join"),
            OwnGame => f.write_str("you cannot play against yourself"),
            NotOver => f.write_str("the game is not over yet"),
            RematchStarted => f.write_str("the rematch has started already"),
        }
    }
}

impl std::error::Error for GameError {}
