//! The neural-network evaluation (NNUE): (4 × 768 → 256)×2 → 1 with SCReLU. Each perspective's inputs
//! are the 768 piece-square features in one of 4 sets by where its own king stands (queenside, centre
//! or kingside of its first two ranks, or further up); 54 output buckets: 12 turn situations
//! (variant, phase, Double Moves left), the six common ones split by piece count into 8.
//! Integer inference: i16 weights and accumulators, i32 output. The file format, the training and
//! each net's provenance: docs/nnue.md.

mod accumulator;
mod simd;

pub use accumulator::{AccStack, Accumulator};

use rules::{Color, Phase, Piece, Position, Square, Variant};
use std::sync::{Arc, OnceLock};

/// Piece-square features: (own, enemy) × role × square.
pub const PIECE_INPUTS: usize = 768;
/// King buckets (see [`king_bucket`]).
pub const KING_BUCKETS: usize = 4;
/// Inputs per perspective: a set of piece-square features per king bucket.
pub const INPUTS: usize = KING_BUCKETS * PIECE_INPUTS;
/// Accumulator width per perspective.
pub const HIDDEN: usize = 256;
/// Turn situations (see [`situation`]).
pub const SITUATIONS: usize = 12;
/// Piece-count buckets (see [`material`]).
pub const MATERIAL_BUCKETS: usize = 8;
/// Output layers per turn situation: one per piece-count bucket where the data fills them, one for
/// all piece counts where it is thin (a Two Move response turn; Double Move once a Double Move is
/// spent or under way: under 2 positions in 100 each). Measured on net 4's data: a layer per piece
/// count lowered the validation loss of the six common situations and raised it in these six.
pub const MATERIAL_LAYERS: [usize; SITUATIONS] = [8, 8, 1, 8, 8, 1, 1, 1, 1, 1, 8, 8];
/// The first output bucket of each situation; the last entry is the number of buckets.
const FIRST_BUCKET: [usize; SITUATIONS + 1] = {
    let mut first = [0; SITUATIONS + 1];
    let mut s = 0;
    while s < SITUATIONS {
        first[s + 1] = first[s] + MATERIAL_LAYERS[s];
        s += 1;
    }
    first
};
/// Output buckets (see [`bucket`]).
pub const BUCKETS: usize = FIRST_BUCKET[SITUATIONS];
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
/// The file formats read: (inputs, output layers). Earlier nets have one set of piece-square
/// features for every king square (nets 1–6) and one output layer per situation (nets 1–4).
const FORMATS: [(usize, usize); 4] = [
    (INPUTS, BUCKETS),
    (PIECE_INPUTS, BUCKETS),
    (INPUTS, SITUATIONS),
    (PIECE_INPUTS, SITUATIONS),
];
/// Bytes of a network file with `inputs` inputs and `buckets` output layers.
pub const fn file_bytes(inputs: usize, buckets: usize) -> usize {
    HEADER_BYTES + 2 * (inputs * HIDDEN + HIDDEN + buckets * 2 * HIDDEN) + 4 * buckets
}
/// Bytes of a network file.
pub const FILE_BYTES: usize = file_bytes(INPUTS, BUCKETS);

/// The king bucket of `perspective` whose king stands on `king` (from its own side of the board):
/// 0 files a–c, 1 files d–e, 2 files f–h of its first two ranks; 3 anywhere further up, and with no
/// king (a Twinmove king just captured). A castled king and one left in the centre see the same
/// pieces differently; where the king has walked up the board (endgames) one set serves.
#[inline]
pub fn king_bucket(perspective: Color, king: Option<Square>) -> usize {
    let Some(k) = king else {
        return KING_BUCKETS - 1;
    };
    let s = relative(perspective, k);
    match (s / 8, s % 8) {
        (0..=1, 0..=2) => 0,
        (0..=1, 3..=4) => 1,
        (0..=1, _) => 2,
        _ => 3,
    }
}

/// [`king_bucket`] of `perspective` on `board`.
#[inline]
pub fn board_king_bucket(perspective: Color, board: &rules::Board) -> usize {
    king_bucket(perspective, board.king(perspective))
}

/// The input index of `piece` on `sq` seen from `perspective` with its king in bucket `kb`: its own
/// pieces first, the board flipped for Black so both sides see their pieces from their own side.
#[inline]
pub fn feature(perspective: Color, kb: usize, piece: Piece, sq: Square) -> usize {
    let own = piece.color == perspective;
    kb * PIECE_INPUTS + (!own as usize) * 384 + piece.role.index() * 64 + relative(perspective, sq)
}

/// `sq`'s index seen from `perspective`'s side: the board flipped vertically for Black.
#[inline]
fn relative(perspective: Color, sq: Square) -> usize {
    match perspective {
        Color::White => sq.index(),
        Color::Black => sq.index() ^ 56,
    }
}

/// The input a feature becomes when the board is mirrored left to right (files a↔h): the square's
/// file flips, and so does the king's side (queenside and kingside buckets swap).
#[inline]
pub fn mirrored_feature(f: usize) -> usize {
    const MIRROR: [usize; KING_BUCKETS] = [2, 1, 0, 3];
    MIRROR[f / PIECE_INPUTS] * PIECE_INPUTS + ((f % PIECE_INPUTS) ^ 7)
}

/// The turn situation: what the side to move may still do in this turn and game.
/// 0 chess; 1–3 Two Move (start, response, second move); 4–7 Double Move at a turn's start by
/// (own, enemy) Double Move left; 8–9 Double Move's second move by the enemy's Double Move left;
/// 10–11 Twinmove (start, second move).
pub fn situation(variant: Variant, phase: Phase, turn: Color, double_move: [bool; 2]) -> usize {
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

/// The piece-count bucket: 2–5 pieces on the board 0, 6–9 1, …, 30–32 7. An endgame is worth
/// something else than the same features in a middlegame (a passed pawn, a king in the centre), and one
/// output layer per stage lets the network say so at no cost in speed.
pub fn material(pieces: u32) -> usize {
    (pieces.saturating_sub(2) as usize / 4).min(MATERIAL_BUCKETS - 1)
}

/// The output bucket of a turn situation ([`situation`]) with `pieces` pieces on the board.
pub fn bucket(situation: usize, pieces: u32) -> usize {
    FIRST_BUCKET[situation] + material(pieces) * MATERIAL_LAYERS[situation] / MATERIAL_BUCKETS
}

/// The turn situation whose output bucket `b` is (the inverse of [`bucket`]).
pub fn bucket_situation(b: usize) -> usize {
    FIRST_BUCKET[1..].partition_point(|&end| end <= b)
}

/// [`bucket`] of a position.
pub fn position_bucket(pos: &Position) -> usize {
    let s = pos.state();
    bucket(
        situation(pos.variant(), s.phase, pos.turn(), s.double_move),
        pos.board().occupied().count_ones(),
    )
}

/// Why bytes are not a network.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    #[error("not a doublemove network (bad magic bytes)")]
    Magic,
    #[error("{0} bytes; a network of its shape has {1}")]
    Size(usize, usize),
    #[error(
        "the network's shape {0:?} is not one this engine reads (inputs, hidden, buckets, QA, QB, scale)"
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
    /// Reads a network file, checking its magic, shape and size. Files of the earlier formats are
    /// read as the networks they were: one set of piece-square features (nets 1–6) serves every king
    /// bucket, and one output layer per situation (nets 1–4) all of the situation's buckets.
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, NetError> {
        if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
            return Err(NetError::Magic);
        }
        let mut shape = [0u32; 6];
        for (i, s) in shape.iter_mut().enumerate() {
            let at = 8 + 4 * i;
            *s = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        }
        let (inputs, layers) = FORMATS
            .into_iter()
            .find(|&(inputs, layers)| {
                let mut format = SHAPE;
                (format[0], format[2]) = (inputs as u32, layers as u32);
                shape == format
            })
            .ok_or(NetError::Shape(shape))?;
        let expected = file_bytes(inputs, layers);
        if bytes.len() != expected {
            return Err(NetError::Size(bytes.len(), expected));
        }
        let mut net = Network::zeroed();
        let mut at = HEADER_BYTES;
        let mut take = |n: usize| {
            let s = &bytes[at..at + n];
            at += n;
            s
        };
        for i in 0..inputs {
            read_i16s(take(2 * HIDDEN), &mut net.ft_weights[i]);
        }
        // Input i of a file without king buckets serves input i of every king bucket.
        for i in inputs..INPUTS {
            net.ft_weights[i] = net.ft_weights[i % inputs];
        }
        read_i16s(take(2 * HIDDEN), &mut net.ft_bias);
        // Layer k of the file serves the buckets `targets(k)`: itself, or all of situation k's.
        let targets = |k: usize| {
            if layers == BUCKETS {
                k..k + 1
            } else {
                FIRST_BUCKET[k]..FIRST_BUCKET[k + 1]
            }
        };
        for k in 0..layers {
            let r = targets(k);
            read_i16s(take(4 * HIDDEN), &mut net.out_weights[r.start]);
            for j in r.start + 1..r.end {
                net.out_weights[j] = net.out_weights[r.start];
            }
        }
        for k in 0..layers {
            let b = i32::from_le_bytes(take(4).try_into().expect("4 bytes"));
            net.out_bias[targets(k)].fill(b);
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

    /// A network of small random weights from `seed`, every king bucket and output bucket its own
    /// (tests: a trained network may leave buckets alike, and a mix-up between them unseen).
    #[cfg(test)]
    pub(crate) fn random(seed: u64) -> Network {
        let mut rng = rules::rng::SplitMix64::new(seed);
        let mut w = || (rng.next_u64() % 121) as i16 - 60;
        let mut net = Network::zeroed();
        for x in net.ft_weights.iter_mut().flatten() {
            *x = w();
        }
        for x in net.ft_bias.iter_mut() {
            *x = w();
        }
        for x in net.out_weights.iter_mut().flatten() {
            *x = w();
        }
        for x in net.out_bias.iter_mut() {
            *x = w() as i32 * 100;
        }
        net
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
        let again = Network::from_bytes(&bytes).unwrap();
        assert_eq!(again.to_bytes(), bytes);
        // Read from its file (which may be of an earlier format) or from the current format, the
        // same network.
        let file = Network::from_bytes(include_bytes!("../../nets/embedded.nnue")).unwrap();
        assert_eq!(file.to_bytes(), bytes);
    }

    /// A file of the earliest format (no king buckets, one output layer per situation: nets 1–4) is
    /// the same network for every king bucket and piece count, and written out in the current
    /// format it evaluates exactly as before.
    #[test]
    fn an_earlier_format_file_serves_every_king_bucket_and_piece_count() {
        let mut rng = rules::rng::SplitMix64::new(3);
        let mut small = Vec::new();
        small.extend_from_slice(MAGIC);
        for (i, x) in SHAPE.into_iter().enumerate() {
            let x = match i {
                0 => PIECE_INPUTS as u32,
                2 => SITUATIONS as u32,
                _ => x,
            };
            small.extend_from_slice(&x.to_le_bytes());
        }
        let i16s = PIECE_INPUTS * HIDDEN + HIDDEN + SITUATIONS * 2 * HIDDEN;
        for _ in 0..i16s {
            let w = (rng.next_u64() % 121) as i16 - 60;
            small.extend_from_slice(&w.to_le_bytes());
        }
        for k in 0..SITUATIONS {
            small.extend_from_slice(&(1000 * k as i32 - 5000).to_le_bytes());
        }
        let small_bytes = file_bytes(PIECE_INPUTS, SITUATIONS);
        assert_eq!(small.len(), small_bytes);
        let net = Network::from_bytes(&small).unwrap();
        for i in 0..INPUTS {
            assert_eq!(net.ft_weights[i], net.ft_weights[i % PIECE_INPUTS]);
        }
        let acc = Accumulator::refresh(&net, &rules::Board::standard());
        for s in 0..SITUATIONS {
            let at_32 = net.output(&acc, Color::White, bucket(s, 32));
            for pieces in 2..=32 {
                assert_eq!(net.output(&acc, Color::White, bucket(s, pieces)), at_32);
            }
            assert_eq!(net.out_bias[bucket(s, 5)], 1000 * s as i32 - 5000);
        }
        let again = Network::from_bytes(&net.to_bytes()).unwrap();
        assert_eq!(again.to_bytes(), net.to_bytes());
        assert_eq!(
            Network::from_bytes(&small[..small.len() - 2]).err(),
            Some(NetError::Size(small.len() - 2, small_bytes))
        );
    }

    #[test]
    fn piece_counts_fill_the_material_buckets_in_order() {
        let m: Vec<usize> = (2..=32).map(material).collect();
        assert_eq!(m.first(), Some(&0));
        assert_eq!(m.last(), Some(&(MATERIAL_BUCKETS - 1)));
        assert!(m.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
        for b in 0..MATERIAL_BUCKETS {
            assert!(m.iter().filter(|&&x| x == b).count() >= 3, "bucket {b}");
        }
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
            Some(NetError::Size(good.len() - 1, FILE_BYTES))
        );
        let mut b = good.clone();
        b[12] = 7; // hidden 256 → 263
        assert!(matches!(Network::from_bytes(&b), Err(NetError::Shape(_))));
    }

    #[test]
    fn buckets_cover_every_turn_situation_and_piece_count_once() {
        use std::collections::HashSet;
        let mut situations = HashSet::new();
        let mut buckets = HashSet::new();
        for v in Variant::ALL {
            for phase in [Phase::Start, Phase::Response, Phase::Second] {
                for dm in [[false, false], [true, false], [false, true], [true, true]] {
                    let s = situation(v, phase, Color::White, dm);
                    assert!(s < SITUATIONS);
                    assert_eq!(
                        s,
                        situation(v, phase, Color::Black, [dm[1], dm[0]]),
                        "colour-blind"
                    );
                    situations.insert(s);
                    for pieces in 2..=32 {
                        let b = bucket(s, pieces);
                        assert!(b < BUCKETS);
                        assert_eq!(bucket_situation(b), s);
                        buckets.insert(b);
                    }
                }
            }
        }
        assert_eq!(situations.len(), SITUATIONS);
        assert_eq!(buckets.len(), BUCKETS);
        // Each situation has as many buckets as it has layers, one per piece-count bucket or one.
        for (s, &layers) in MATERIAL_LAYERS.iter().enumerate() {
            let own: HashSet<usize> = (2..=32).map(|pieces| bucket(s, pieces)).collect();
            assert_eq!(own.len(), layers, "situation {s}");
            assert!([1, MATERIAL_BUCKETS].contains(&layers));
        }
    }

    /// The embedded network learnt the turn state: on the start position, a Double Move of one's own
    /// is worth something and the opponent's is a threat, and in Two Move Chess a turn of two moves
    /// is worth more than a response turn of one.
    #[test]
    fn the_embedded_network_values_the_turn_state() {
        let net = embedded();
        let acc = Accumulator::refresh(&net, &rules::Board::standard());
        let e = |v: Variant, phase: Phase, dm: [bool; 2]| {
            let s = situation(v, phase, Color::White, dm);
            net.output(&acc, Color::White, bucket(s, 32))
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
        for kb in 0..KING_BUCKETS {
            let (w, b) = (Color::White, Color::Black);
            assert_eq!(feature(w, kb, wp, e2), feature(b, kb, bp, e7));
            assert_eq!(feature(w, kb, bp, e7), feature(b, kb, wp, e2));
            assert!(feature(w, kb, bp, e7) % PIECE_INPUTS >= 384);
            assert_eq!(feature(w, kb, wp, e2) / PIECE_INPUTS, kb);
        }
    }

    #[test]
    fn king_buckets_by_the_kings_side_and_rank() {
        let sq = |s: &str| Some(Square::parse(s).unwrap());
        let (w, b) = (Color::White, Color::Black);
        for (s, expected) in [
            ("b1", 0),
            ("c2", 0),
            ("d1", 1),
            ("e2", 1),
            ("g1", 2),
            ("h2", 2),
        ] {
            assert_eq!(king_bucket(w, sq(s)), expected, "{s}");
        }
        for s in ["a3", "e4", "h8", "e8"] {
            assert_eq!(king_bucket(w, sq(s)), 3, "{s}");
        }
        // Black's from its own side: g8 is its kingside, e1 far up the board.
        assert_eq!(king_bucket(b, sq("g8")), 2);
        assert_eq!(king_bucket(b, sq("c7")), 0);
        assert_eq!(king_bucket(b, sq("e8")), 1);
        assert_eq!(king_bucket(b, sq("e1")), 3);
        assert_eq!(king_bucket(w, None), KING_BUCKETS - 1);
    }

    /// Mirroring a feature is the feature of the mirrored piece with the mirrored king, for every
    /// king square, piece and square, and mirroring twice is the identity.
    #[test]
    fn mirrored_features_are_the_features_of_the_mirrored_board() {
        for c in Color::ALL {
            for k in 0..64u8 {
                let (king, mirror_king) = (Square::new(k), Square::new(k ^ 7));
                for p in 0..12 {
                    let piece = Piece::new(Color::ALL[p / 6], rules::Role::from_index(p % 6));
                    for s in 0..64u8 {
                        let f = feature(c, king_bucket(c, Some(king)), piece, Square::new(s));
                        let m = feature(
                            c,
                            king_bucket(c, Some(mirror_king)),
                            piece,
                            Square::new(s ^ 7),
                        );
                        assert_eq!(mirrored_feature(f), m);
                        assert_eq!(mirrored_feature(m), f);
                    }
                }
            }
        }
    }
}
