//! What a search thread learns about quiet moves as it goes: the history table, two killers per ply
//! and the countermove of each move. Each search thread has its own (see `search::Worker`).

use rules::{Move, Phase, Position};

/// History scores are kept within ±HISTORY_MAX (updates pull them towards the bound, not past it).
pub const HISTORY_MAX: i32 = 16_384;

fn phase_index(p: Phase) -> usize {
    match p {
        Phase::Start => 0,
        Phase::Response => 1,
        Phase::Second => 2,
    }
}

pub struct History {
    /// Indexed by side and turn phase (start / response / second: a good second move is a different
    /// thing from a good first move), then from and to square.
    butterfly: Vec<[[i32; 64]; 64]>,
    /// The quiet move that last refuted each previous move (indexed by its from and to squares).
    countermoves: Vec<Option<Move>>,
    /// Two killers per ply.
    killers: Vec<[Option<Move>; 2]>,
}

impl History {
    pub fn new(plies: usize) -> History {
        History {
            butterfly: vec![[[0; 64]; 64]; 6],
            countermoves: vec![None; 64 * 64],
            killers: vec![[None; 2]; plies],
        }
    }

    /// Forgets everything (a new game).
    pub fn clear(&mut self) {
        self.butterfly.iter_mut().for_each(|h| *h = [[0; 64]; 64]);
        self.countermoves.iter_mut().for_each(|c| *c = None);
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
    }

    /// At the start of a search: killers are forgotten, history scores halved.
    pub fn new_search(&mut self) {
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        for h in self.butterfly.iter_mut() {
            for row in h.iter_mut() {
                for v in row.iter_mut() {
                    *v /= 2;
                }
            }
        }
    }

    #[inline]
    fn slot(&mut self, pos: &Position, m: Move) -> &mut i32 {
        let i = pos.turn().index() * 3 + phase_index(pos.phase());
        &mut self.butterfly[i][m.from().index()][m.to().index()]
    }

    /// The history score of quiet move `m` in `pos`.
    #[inline]
    pub fn score(&self, pos: &Position, m: Move) -> i32 {
        let i = pos.turn().index() * 3 + phase_index(pos.phase());
        self.butterfly[i][m.from().index()][m.to().index()]
    }

    /// Moves a history score towards ±HISTORY_MAX by `bonus` (negative for a malus).
    #[inline]
    pub fn update(&mut self, pos: &Position, m: Move, bonus: i32) {
        let h = self.slot(pos, m);
        *h += bonus - *h * bonus.abs() / HISTORY_MAX;
    }

    #[inline]
    pub fn killers(&self, ply: usize) -> [Option<Move>; 2] {
        self.killers[ply]
    }

    /// The quiet move that last refuted `prev` (the move played at the previous ply).
    #[inline]
    pub fn countermove(&self, prev: Option<Move>) -> Option<Move> {
        let prev = prev?;
        self.countermoves[prev.from().index() * 64 + prev.to().index()]
    }

    /// A quiet move `m` cut off at `ply` after `prev`: remember it as killer and countermove, raise its
    /// history and lower the history of the quiet moves tried before it.
    pub fn reward_quiet(
        &mut self,
        pos: &Position,
        ply: usize,
        prev: Option<Move>,
        m: Move,
        depth: i32,
        tried: &[Move],
    ) {
        let killers = &mut self.killers[ply];
        if killers[0] != Some(m) {
            killers[1] = killers[0];
            killers[0] = Some(m);
        }
        if let Some(prev) = prev {
            self.countermoves[prev.from().index() * 64 + prev.to().index()] = Some(m);
        }
        let bonus = (16 * depth * depth).min(1600);
        self.update(pos, m, bonus);
        for &q in tried {
            self.update(pos, q, -bonus);
        }
    }
}
