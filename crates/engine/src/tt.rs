//! Transposition table keyed by the rules crate's Zobrist hash (which includes the turn state).

use rules::Move;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    Exact,
    Lower,
    Upper,
}

impl Bound {
    /// What a search result `score` in the window (`alpha`, `beta`) says about the true value.
    pub fn of(score: i32, alpha: i32, beta: i32) -> Bound {
        if score >= beta {
            Bound::Lower
        } else if score > alpha {
            Bound::Exact
        } else {
            Bound::Upper
        }
    }

    /// Whether a stored `score` with this bound decides a search in the window (`alpha`, `beta`).
    pub fn cuts(self, score: i32, alpha: i32, beta: i32) -> bool {
        match self {
            Bound::Exact => true,
            Bound::Lower => score >= beta,
            Bound::Upper => score <= alpha,
        }
    }
}

#[derive(Clone, Copy)]
pub struct Entry {
    pub key: u64,
    pub best: Option<Move>,
    pub score: i32,
    /// The static evaluation of the position (saves evaluating it again).
    pub eval: i16,
    pub depth: i8,
    pub bound: Bound,
    pub age: u8,
}

pub struct TranspositionTable {
    entries: Vec<Option<Entry>>,
    mask: usize,
    age: u8,
}

impl TranspositionTable {
    /// A table of about `mb` megabytes (rounded down to a power of two entries).
    pub fn new(mb: usize) -> TranspositionTable {
        let entry = std::mem::size_of::<Option<Entry>>();
        let wanted = (mb.max(1) * 1024 * 1024 / entry).max(1024);
        let n = 1usize << (usize::BITS - 1 - wanted.leading_zeros());
        TranspositionTable {
            entries: vec![None; n],
            mask: n - 1,
            age: 0,
        }
    }

    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = None);
    }

    pub fn new_search(&mut self) {
        self.age = self.age.wrapping_add(1);
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        self.entries[key as usize & self.mask].filter(|e| e.key == key)
    }

    #[inline]
    pub fn store(
        &mut self,
        key: u64,
        best: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let slot = &mut self.entries[key as usize & self.mask];
        let replace = match slot {
            None => true,
            Some(old) => old.key == key || old.age != self.age || old.depth as i32 <= depth,
        };
        if replace {
            let best = best.or_else(|| slot.filter(|o| o.key == key).and_then(|o| o.best));
            *slot = Some(Entry {
                key,
                best,
                score,
                eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
                depth: depth.clamp(-1, 127) as i8,
                bound,
                age: self.age,
            });
        }
    }

    /// Per mille of the first thousand slots in use this search (UCI hashfull).
    pub fn hashfull(&self) -> u32 {
        let n = self.entries.len().min(1000);
        let used = self.entries[..n]
            .iter()
            .filter(|e| e.is_some_and(|e| e.age == self.age))
            .count();
        (used * 1000 / n) as u32
    }
}
