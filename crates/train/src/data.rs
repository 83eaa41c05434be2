//! Training samples: records turned into the two perspectives' active inputs and the labels.

use engine::datagen::{Record, RECORD_BYTES};
use engine::nnue::{feature, king_bucket, mirrored_feature};
use rules::{Color, Role};

/// One position as the trainer uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Active inputs from the side to move's perspective, then the other side's; `count` of each.
    pub features: [[u16; 32]; 2],
    pub count: u8,
    /// The output bucket (`engine::nnue::bucket`: turn situation and piece count).
    pub bucket: u8,
    /// Search score in centipawns and game result (0, 0.5, 1), both for the side to move.
    pub score: f32,
    pub result: f32,
}

impl Sample {
    pub fn from_record(r: &Record) -> Sample {
        let king = |c: Color| {
            r.pieces()
                .find(|(p, _)| p.color == c && p.role == Role::King)
                .map(|(_, sq)| sq)
        };
        let sides = [r.turn, r.turn.other()];
        let kb = sides.map(|c| king_bucket(c, king(c)));
        let mut features = [[0u16; 32]; 2];
        let mut count = 0;
        for (i, (piece, sq)) in r.pieces().enumerate() {
            for (side, (&c, &kb)) in sides.iter().zip(&kb).enumerate() {
                features[side][i] = feature(c, kb, piece, sq) as u16;
            }
            count += 1;
        }
        Sample {
            features,
            count,
            bucket: r.bucket() as u8,
            score: r.score as f32,
            result: r.result.score(),
        }
    }
}

impl Sample {
    /// The same position mirrored left to right (files a↔h). The network has no castling input, so
    /// to it this is as good a position as the original: a second sample for free.
    pub fn mirrored(&self) -> Sample {
        let mut m = self.clone();
        for side in &mut m.features {
            for f in &mut side[..self.count as usize] {
                *f = mirrored_feature(*f as usize) as u16;
            }
        }
        m
    }
}

/// Reads every record of `bytes` (a data file): an error names the first bad record.
pub fn load(bytes: &[u8]) -> Result<Vec<Sample>, String> {
    if !bytes.len().is_multiple_of(RECORD_BYTES) {
        return Err(format!(
            "{} bytes is not a whole number of {RECORD_BYTES}-byte records",
            bytes.len()
        ));
    }
    bytes
        .chunks_exact(RECORD_BYTES)
        .enumerate()
        .map(|(i, c)| {
            let r = Record::from_bytes(c.try_into().expect("record size"))
                .map_err(|e| format!("record {i}: {e}"))?;
            Ok(Sample::from_record(&r))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::datagen::WDL;
    use rules::{Position, Variant};

    #[test]
    fn mirroring_flips_files_only() {
        let fen = "r3k2r/pppq1ppp/2n5/3pp3/8/2NP1N2/PPP2PPP/R2QKB1R b KQkq - 3 9";
        let mirror = "r2k3r/ppp1qppp/5n2/3pp3/8/2N1PN2/PPP2PPP/R1BKQ2R b - - 3 9";
        let a = Position::from_fen(Variant::Chess, fen).unwrap();
        let b = Position::from_fen(Variant::Chess, mirror).unwrap();
        let sa = Sample::from_record(&Record::new(&a, 10, WDL::Draw).unwrap()).mirrored();
        let sb = Sample::from_record(&Record::new(&b, 10, WDL::Draw).unwrap());
        let sorted = |s: &Sample, side: usize| {
            let mut v = s.features[side][..s.count as usize].to_vec();
            v.sort();
            v
        };
        assert_eq!(sorted(&sa, 0), sorted(&sb, 0));
        assert_eq!(sorted(&sa, 1), sorted(&sb, 1));
        assert_eq!(
            sa.mirrored().features,
            Sample::from_record(&Record::new(&a, 10, WDL::Draw).unwrap()).features
        );
    }
}
