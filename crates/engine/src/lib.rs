//! doublemove engine: search, evaluation, time management, strength levels and the UCI dialect for
//! orthodox chess, Two Move, Double Move and Twinmove Chess. See docs/engine.md and docs/protocol.md.

pub mod bench;
pub mod correction;
pub mod datagen;
pub mod eval;
pub mod history;
pub mod levels;
pub mod movepick;
pub mod nnue;
pub mod search;
pub mod see;
pub mod timeman;
pub mod tt;
pub mod tune;
pub mod uci;
pub mod weights;
