//! Training samples: records turned into the two perspectives' active inputs and the labels.

use engine::datagen::{Record, RECORD_BYTES};
use engine::nnue::{bucket, feature};

/// One position as the trainer uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Active inputs from the side to move's perspective, then the other side's; `count` of each.
    pub features: [[u16; 32]; 2],
    pub count: u8,
    pub bucket: u8,
    /// Search score in centipawns and game result (0, 0.5, 1), both for the side to move.
    pub score: f32,
    pub result: f32,
}

impl Sample {
    pub fn from_record(r: &Record) -> Sample {
        let mut features = [[0u16; 32]; 2];
        let mut count = 0;
        for (i, (piece, sq)) in r.pieces().enumerate() {
            features[0][i] = feature(r.turn, piece, sq) as u16;
            features[1][i] = feature(r.turn.other(), piece, sq) as u16;
            count += 1;
        }
        Sample {
            features,
            count,
            bucket: bucket(r.variant, r.phase, r.turn, r.double_move) as u8,
            score: r.score as f32,
            result: r.result.score(),
        }
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
