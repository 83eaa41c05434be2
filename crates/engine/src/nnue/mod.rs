//! The neural-network evaluation (NNUE): (768 → 256)×2 → 1 with SCReLU and 12 output buckets, one per
//! turn situation (variant, phase, Double Moves left). Integer inference: i16 weights and
//! accumulators, i32 output. The file format, the training and each net's provenance: docs/nnue.md.

mod accumulator;
mod simd;

pub use accumulator::{AccStack, Accumulator};

use rules::{Color, Phase, Piece, Position, Square, Variant};
use std::sync::{Arc, OnceLock};

/// Inputs per perspective: (own, enemy) × role × square.
pub const INPUTS: usize = 768;
/// Accumulator width per perspective.
pub const HIDDEN: usize = 256;
/// Output buckets (see [`bucket`]).
pub const BUCKETS: usize = 12;
/// Quantisation of the first layer: 181² fits an i16, so the squared activation needs no widening.
pub const QA: i32 = 181;
/// Quantisation of the output weights.
pub const QB: i32 = 64;
/// Centipawns per unit of the network's output (its sigmoid is the expected score).
pub const SCALE: i32 = 400;
/// Weights are clipped to this in training, so every quantised value and sum stays in range:
/// 2·HIDDEN · 181² · round(1.98·64) < 2^31.
pub const WEIGHT_CLIP: f32 = 1.98;

const MAGIC: &[u8; 8] = b"DMNNUE\0\x01";
/// Header: magic, then inputs, hidden, buckets, QA, QB, scale as u32.
const HEADER_BYTES: usize = 8 + 6 * 4;
/// The shape a file's header states: inputs, hidden, buckets, QA, QB, scale.
const SHAPE: [u32; 6] = [
    INPUTS as u32,
    HIDDEN as u32,
    BUCKETS as u32,
    QA as u32,
    QB as u32,
    SCALE as u32,
];
/// Bytes of a network file.
pub const FILE_BYTES: usize =
    HEADER_BYTES + 2 * (INPUTS * HIDDEN + HIDDEN + BUCKETS * 2 * HIDDEN) + 4 * BUCKETS;

/// The input index of `piece` on `sq` seen from `perspective`: its own pieces first, the board
/// flipped for Black so both sides see their pieces from their own side.
#[inline]
pub fn feature(perspective: Color, piece: Piece, sq: Square) -> usize {
    let own = piece.color == perspective;
    let s = match perspective {
        Color::White => sq.index(),
        Color::Black => sq.index() ^ 56,
    };
    (!own as usize) * 384 + piece.role.index() * 64 + s
}

/// The output bucket: what the side to move may still do in this turn and game.
/// 0 chess; 1–3 Two Move (start, response, second move); 4–7 Double Move at a turn's start by
/// (own, enemy) Double Move left; 8–9 Double Move's second move by the enemy's Double Move left;
/// 10–11 Twinmove (start, second move).
pub fn bucket(variant: Variant, phase: Phase, turn: Color, double_move: [bool; 2]) -> usize {
    let us = double_move[turn.index()] as usize;
    let them = double_move[turn.other().index()] as usize;
    match (variant, phase) {
        (Variant::Chess, _) => 0,
        (Variant::TwoMove, Phase::Start) => 1,
        (Variant::TwoMove, Phase::Response) => 2,
        (Variant::TwoMove, Phase::Second) => 3,
        (Variant::DoubleMove, Phase::Second) => 8 + them,
        (Variant::DoubleMove, _) => 4 + 2 * us + them,
        (Variant::Twinmove, Phase::Second) => 11,
        (Variant::Twinmove, _) => 10,
    }
}

/// [`bucket`] of a position.
pub fn position_bucket(pos: &Position) -> usize {
    let s = pos.state();
    bucket(pos.variant(), s.phase, pos.turn(), s.double_move)
}

/// Why bytes are not a network.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("not a doublemove network (bad magic bytes)")]
    Magic,
    #[error("{0} bytes; a network has {FILE_BYTES}")]
    Size(usize),
    #[error(
        "the network's shape {0:?} is not this engine's (inputs, hidden, buckets, QA, QB, scale)"
    )]
    Shape([u32; 6]),
}

/// A quantised network.
pub struct Network {
    /// First layer, one row per input.
    pub(crate) ft_weights: Box<[[i16; HIDDEN]; INPUTS]>,
    pub(crate) ft_bias: [i16; HIDDEN],
    /// Output layer per bucket: the side to move's half, then the other side's.
    pub(crate) out_weights: Box<[[i16; 2 * HIDDEN]; BUCKETS]>,
    pub(crate) out_bias: [i32; BUCKETS],
}

fn read_i16s(bytes: &[u8], out: &mut [i16]) {
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *o = i16::from_le_bytes([c[0], c[1]]);
    }
}

impl Network {
    /// Reads a network file, checking its magic, shape and size.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetError> {
        if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
            return Err(NetError::Magic);
        }
        let mut shape = [0u32; 6];
        for (i, s) in shape.iter_mut().enumerate() {
            let at = 8 + 4 * i;
            *s = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        }
        if shape != SHAPE {
            return Err(NetError::Shape(shape));
        }
        if bytes.len() != FILE_BYTES {
            return Err(NetError::Size(bytes.len()));
        }
        let mut net = Network::zeroed();
        let mut at = HEADER_BYTES;
        let mut take = |n: usize| {
            let s = &bytes[at..at + n];
            at += n;
            s
        };
        for row in net.ft_weights.iter_mut() {
            read_i16s(take(2 * HIDDEN), row);
        }
        read_i16s(take(2 * HIDDEN), &mut net.ft_bias);
        for row in net.out_weights.iter_mut() {
            read_i16s(take(4 * HIDDEN), row);
        }
        for b in net.out_bias.iter_mut() {
            *b = i32::from_le_bytes(take(4).try_into().expect("4 bytes"));
        }
        Ok(net)
    }

    /// The file bytes of this network.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FILE_BYTES);
        out.extend_from_slice(MAGIC);
        for x in SHAPE {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let rows = self.ft_weights.iter().flatten();
        for w in rows
            .chain(&self.ft_bias)
            .chain(self.out_weights.iter().flatten())
        {
            out.extend_from_slice(&w.to_le_bytes());
        }
        for b in &self.out_bias {
            out.extend_from_slice(&b.to_le_bytes());
        }
        out
    }

    /// A network of zeros (every position evaluates to 0).
    pub fn zeroed() -> Network {
        Network {
            ft_weights: vec![[0i16; HIDDEN]; INPUTS]
                .into_boxed_slice()
                .try_into()
                .expect("INPUTS rows"),
            ft_bias: [0; HIDDEN],
            out_weights: vec![[0i16; 2 * HIDDEN]; BUCKETS]
                .into_boxed_slice()
                .try_into()
                .expect("BUCKETS rows"),
            out_bias: [0; BUCKETS],
        }
    }

    /// A network from float weights (as the trainer keeps them), rounded to the quantised scales.
    /// `ft_weights` is INPUTS × HIDDEN by input, `out_weights` BUCKETS × 2·HIDDEN by bucket.
    pub fn quantise(
        ft_weights: &[f32],
        ft_bias: &[f32],
        out_weights: &[f32],
        out_bias: &[f32],
    ) -> Network {
        let q = |x: f32, s: i32| (x.clamp(-WEIGHT_CLIP, WEIGHT_CLIP) * s as f32).round() as i16;
        let mut net = Network::zeroed();
        for (i, row) in net.ft_weights.iter_mut().enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                *w = q(ft_weights[i * HIDDEN + j], QA);
            }
        }
        for (b, x) in net.ft_bias.iter_mut().zip(ft_bias) {
            *b = q(*x, QA);
        }
        for (k, row) in net.out_weights.iter_mut().enumerate() {
            for (j, w) in row.iter_mut().enumerate() {
                *w = q(out_weights[k * 2 * HIDDEN + j], QB);
            }
        }
        for (b, x) in net.out_bias.iter_mut().zip(out_bias) {
            *b = (x * (QA * QB) as f32).round() as i32;
        }
        net
    }

    /// The float weights this network was rounded from, as near as its integers tell (the inverse of
    /// [`Network::quantise`], in the same order and layout): a trainer can start from them.
    pub fn dequantise(&self) -> [Vec<f32>; 4] {
        let ft_weights = self.ft_weights.iter().flatten();
        let out_weights = self.out_weights.iter().flatten();
        [
            ft_weights.map(|&w| w as f32 / QA as f32).collect(),
            self.ft_bias.iter().map(|&b| b as f32 / QA as f32).collect(),
            out_weights.map(|&w| w as f32 / QB as f32).collect(),
            self.out_bias
                .iter()
                .map(|&b| b as f32 / (QA * QB) as f32)
                .collect(),
        ]
    }

    /// The score in centipawns for `turn` (the side to move) from both perspectives' accumulators.
    #[inline]
    pub fn output(&self, acc: &Accumulator, turn: Color, bucket: usize) -> i32 {
        let w = &self.out_weights[bucket];
        let (ours, theirs) = w.split_at(HIDDEN);
        let us = &acc.v[turn.index()];
        let them = &acc.v[turn.other().index()];
        let sum = simd::screlu_dot(us, ours.try_into().expect("HIDDEN"))
            + simd::screlu_dot(them, theirs.try_into().expect("HIDDEN"));
        (sum / QA + self.out_bias[bucket]) * SCALE / (QA * QB)
    }

    /// The evaluation of `pos` for its side to move, computed from scratch.
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let acc = Accumulator::refresh(self, pos.board());
        self.output(&acc, pos.turn(), position_bucket(pos))
    }
}

/// The network built into the engine (`nets/` in this crate; provenance in docs/nnue.md).
pub fn embedded() -> Arc<Network> {
    static NET: OnceLock<Arc<Network>> = OnceLock::new();
    NET.get_or_init(|| {
        let bytes = include_bytes!("../../nets/embedded.nnue");
        Arc::new(Network::from_bytes(bytes).expect("the embedded network is valid (tested)"))
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_network_loads_and_round_trips() {
        let net = embedded();
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), FILE_BYTES);
        assert_eq!(bytes, include_bytes!("../../nets/embedded.nnue"));
        let again = Network::from_bytes(&bytes).unwrap();
        assert_eq!(again.to_bytes(), bytes);
    }

    #[test]
    fn bad_files_are_refused_with_a_reason() {
        let good = embedded().to_bytes();
        assert_eq!(
            Network::from_bytes(b"nonsense").err(),
            Some(NetError::Magic)
        );
        assert_eq!(
            Network::from_bytes(&good[..good.len() - 1]).err(),
            Some(NetError::Size(good.len() - 1))
        );
        let mut b = good.clone();
        b[12] = 7; // hidden 256 → 263
        assert!(matches!(Network::from_bytes(&b), Err(NetError::Shape(_))));
    }

    #[test]
    fn buckets_cover_every_turn_situation_once() {
        use std::collections::HashSet;
        let mut seen = HashSet::new();
        for v in Variant::ALL {
            for phase in [Phase::Start, Phase::Response, Phase::Second] {
                for dm in [[false, false], [true, false], [false, true], [true, true]] {
                    let b = bucket(v, phase, Color::White, dm);
                    assert!(b < BUCKETS);
                    assert_eq!(
                        b,
                        bucket(v, phase, Color::Black, [dm[1], dm[0]]),
                        "colour-blind"
                    );
                    seen.insert(b);
                }
            }
        }
        assert_eq!(seen.len(), BUCKETS);
    }

    /// The embedded network learnt the turn state: on the start position, a Double Move of one's own
    /// is worth something and the opponent's is a threat, and in Two Move Chess a turn of two moves
    /// is worth more than a response turn of one.
    #[test]
    fn the_embedded_network_values_the_turn_state() {
        let net = embedded();
        let acc = Accumulator::refresh(&net, &rules::Board::standard());
        let e = |v: Variant, phase: Phase, dm: [bool; 2]| {
            net.output(&acc, Color::White, bucket(v, phase, Color::White, dm))
        };
        let dm = |own: bool, enemy: bool| e(Variant::DoubleMove, Phase::Start, [own, enemy]);
        assert!(dm(true, true) > dm(false, true), "own Double Move");
        assert!(dm(true, false) > dm(false, false), "own Double Move");
        assert!(dm(true, false) > dm(true, true), "enemy Double Move");
        assert!(
            e(Variant::TwoMove, Phase::Start, [false; 2])
                > e(Variant::TwoMove, Phase::Response, [false; 2]),
            "two moves against one"
        );
    }

    #[test]
    fn features_mirror_between_the_sides() {
        let wp = Piece::new(Color::White, rules::Role::Pawn);
        let bp = Piece::new(Color::Black, rules::Role::Pawn);
        let e2 = Square::parse("e2").unwrap();
        let e7 = Square::parse("e7").unwrap();
        assert_eq!(feature(Color::White, wp, e2), feature(Color::Black, bp, e7));
        assert_eq!(feature(Color::White, bp, e7), feature(Color::Black, wp, e2));
        assert!(feature(Color::White, bp, e7) >= 384);
    }
}
