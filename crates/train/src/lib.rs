//! Trains the engine's network (engine::nnue) on self-play records (engine::datagen): sparse inputs,
//! SCReLU, one output per bucket, sigmoid MSE against a blend of search score and game result, Adam,
//! several threads with a result that depends only on the seed. See docs/nnue.md.

pub mod data;
pub mod model;
pub mod optim;
pub mod probe;
pub mod run;

pub use data::{load, Sample};
pub use model::Model;
pub use run::{train, EpochReport, TrainConfig};
