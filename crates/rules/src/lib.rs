//! doublemove rules: one position type and one move generator for orthodox chess, Two Move Chess,
//! Double Move Chess and Twinmove Chess (uncompelled), with each variant's turn rules, game end,
//! extended FEN, UCI and SAN notation, PGN and perft.

pub mod bitboard;
pub mod board;
pub mod fen;
pub mod game;
mod lookahead;
pub mod movegen;
pub mod notation;
mod null_move;
pub mod outcome;
pub mod perft;
pub mod pgn;
pub mod position;
pub mod rng;
pub mod types;
pub mod variants;

pub use board::Board;
pub use fen::FenError;
pub use game::{Game, TurnError, TurnRecord};
pub use movegen::MoveList;
pub use outcome::{DrawReason, Outcome, WinReason};
pub use position::{Phase, Position, TurnState};
pub use types::{CastlingRights, Color, Move, MoveKind, Piece, Role, Square};
pub use variants::Variant;
