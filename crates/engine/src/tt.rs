//! Transposition table keyed by the rules crate's Zobrist hash (which includes the turn state).

use rules::Move;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: u64,
    pub best: Option<Move>,
    pub score: i32,
    /// The static evaluation of the position (saves evaluating it again).
    pub eval: i16,
    pub depth: i8,
    pub bound: Bound,
    /// The search that wrote it, modulo 32.
    pub age: u8,
}

// An entry's data in one u64: move (17 bits: the rules crate's encoding, 0 for none), score (16),
// eval (16), depth (8), bound (2: 0 means an empty slot), age (5).
const MOVE_BITS: u32 = 17;
const SCORE_SHIFT: u32 = 17;
const EVAL_SHIFT: u32 = 33;
const DEPTH_SHIFT: u32 = 49;
const BOUND_SHIFT: u32 = 57;
const AGE_SHIFT: u32 = 59;
const AGE_MASK: u8 = 31;

/// The rules crate's move as 17 bits: from (6), to (6), kind (4), Double Move start flag (1).
fn pack_move(m: Option<Move>) -> u64 {
    m.map_or(0, |m| m.raw() as u64 & ((1 << MOVE_BITS) - 1))
}

fn unpack_move(bits: u64) -> Option<Move> {
    use rules::{MoveKind, Role, Square};
    if bits == 0 {
        return None;
    }
    let from = Square((bits & 63) as u8);
    let to = Square(((bits >> 6) & 63) as u8);
    let kind = match (bits >> 12) & 15 {
        0 => MoveKind::Normal,
        1 => MoveKind::DoublePush,
        2 => MoveKind::EnPassant,
        3 => MoveKind::Castle,
        k @ 4..=9 => MoveKind::Promotion(Role::from_index(k as usize - 4)),
        _ => return None,
    };
    let m = Move::new(from, to, kind);
    Some(if bits & (1 << 16) != 0 {
        m.as_double_start()
    } else {
        m
    })
}

impl Entry {
    fn pack(&self) -> u64 {
        let bound = match self.bound {
            Bound::Exact => 1u64,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        pack_move(self.best)
            | (self.score as i16 as u16 as u64) << SCORE_SHIFT
            | (self.eval as u16 as u64) << EVAL_SHIFT
            | (self.depth as u8 as u64) << DEPTH_SHIFT
            | bound << BOUND_SHIFT
            | ((self.age & AGE_MASK) as u64) << AGE_SHIFT
    }

    fn unpack(key: u64, data: u64) -> Option<Entry> {
        let bound = match (data >> BOUND_SHIFT) & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            3 => Bound::Upper,
            _ => return None,
        };
        Some(Entry {
            key,
            best: unpack_move(data & ((1 << MOVE_BITS) - 1)),
            score: (data >> SCORE_SHIFT) as u16 as i16 as i32,
            eval: (data >> EVAL_SHIFT) as u16 as i16,
            depth: (data >> DEPTH_SHIFT) as u8 as i8,
            bound,
            age: (data >> AGE_SHIFT) as u8 & AGE_MASK,
        })
    }
}

/// One slot: the key XORed with the data, and the data. Threads read and write slots without locks;
/// a slot written by two threads at once may pair one's key word with the other's data word, and then
/// the key check fails and the slot reads as empty (the lockless hashing of Hyatt and Mann).
#[derive(Default)]
struct Slot {
    check: AtomicU64,
    data: AtomicU64,
}

/// Shared by all search threads (`&self` everywhere).
pub struct TranspositionTable {
    /// The table's `mask + 1` slots start at `offset`: the first slot on a 2 MB boundary (see
    /// [`huge_page_slots`]); the slots before it and after the table are unused.
    slots: Vec<Slot>,
    offset: usize,
    mask: usize,
    age: AtomicU8,
}

/// The size of a huge page on x86-64 and most aarch64 Linux systems.
const HUGE_PAGE: usize = 2 << 20;

/// A vector of at least `n` zeroed slots, of which `n` starting at the returned offset lie at a
/// 2 MB boundary and, on Linux, are advised to the kernel as huge pages before any of them is
/// touched. The table is read at random places: with 4 kB pages nearly every probe of a large
/// table also misses the address-translation cache, and with 2 MB pages a 64 MB table needs 32
/// translations. Measured with the kernel told to use huge pages everywhere: +11 % nodes per
/// second in a chess search with the default 64 MB (docs/engine.md, "Move picking speed").
fn huge_page_slots(n: usize) -> (Vec<Slot>, usize) {
    let size = n * std::mem::size_of::<Slot>();
    if size < HUGE_PAGE {
        return ((0..n).map(|_| Slot::default()).collect(), 0);
    }
    let spare = HUGE_PAGE / std::mem::size_of::<Slot>();
    let mut slots: Vec<Slot> = Vec::with_capacity(n + spare);
    let start = slots.as_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE_PAGE);
    #[cfg(target_os = "linux")]
    // SAFETY: `madvise` only advises the kernel how to back pages; [aligned, aligned + size) lies
    // inside the vector's allocation (`spare` slots are 2 MB, at least the distance to the next
    // boundary), which stays alive and in place while the advice matters (until the pages below
    // are first touched), and no Rust value is read or written by the call. Its result is ignored
    // on purpose: without huge pages the table works as before.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
    // First touch after the advice, so the kernel can back the table with huge pages from the start.
    slots.extend((0..n + spare).map(|_| Slot::default()));
    (slots, (aligned - start) / std::mem::size_of::<Slot>())
}

impl TranspositionTable {
    /// A table of about `mb` megabytes (rounded down to a power of two entries of 16 bytes).
    pub fn new(mb: usize) -> TranspositionTable {
        let wanted = (mb.max(1) * 1024 * 1024 / std::mem::size_of::<Slot>()).max(1024);
        TranspositionTable::with_entries(wanted)
    }

    /// A table of `n` entries rounded down to a power of two.
    pub fn with_entries(n: usize) -> TranspositionTable {
        let n = 1usize << (usize::BITS - 1 - n.max(1).leading_zeros());
        let (slots, offset) = huge_page_slots(n);
        TranspositionTable {
            slots,
            offset,
            mask: n - 1,
            age: AtomicU8::new(0),
        }
    }

    pub fn clear(&self) {
        for s in &self.slots {
            s.check.store(0, Ordering::Relaxed);
            s.data.store(0, Ordering::Relaxed);
        }
    }

    pub fn new_search(&self) {
        let age = self.age.load(Ordering::Relaxed);
        self.age
            .store(age.wrapping_add(1) & AGE_MASK, Ordering::Relaxed);
    }

    #[inline]
    fn slot(&self, key: u64) -> &Slot {
        &self.slots[self.offset + (key as usize & self.mask)]
    }

    #[inline]
    fn read(&self, key: u64) -> Option<Entry> {
        let slot = self.slot(key);
        let data = slot.data.load(Ordering::Relaxed);
        let check = slot.check.load(Ordering::Relaxed);
        Entry::unpack(check ^ data, data)
    }

    /// Starts loading `key`'s slot into the cache, so that the probe a little later (the child
    /// node's, after the move is made) does not wait for memory: in a chess search with the
    /// default 64 MB table three quarters of `Worker::node`'s own time was that load.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        let slot = self.slot(key);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint to the cache: it reads nothing into the program, writes
        // nothing and cannot fault, and the address is that of a live slot of this table.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((slot as *const Slot).cast::<i8>());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        self.read(key).filter(|e| e.key == key)
    }

    #[inline]
    pub fn store(
        &self,
        key: u64,
        best: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
    ) {
        let age = self.age.load(Ordering::Relaxed);
        let old = self.read(key);
        let replace = match old {
            None => true,
            Some(old) => old.key == key || old.age != age || old.depth as i32 <= depth,
        };
        if replace {
            let best = best.or_else(|| old.filter(|o| o.key == key).and_then(|o| o.best));
            let data = Entry {
                key,
                best,
                score,
                eval: eval.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
                depth: depth.clamp(-1, 127) as i8,
                bound,
                age,
            }
            .pack();
            let slot = self.slot(key);
            slot.check.store(key ^ data, Ordering::Relaxed);
            slot.data.store(data, Ordering::Relaxed);
        }
    }

    /// Per mille of the first thousand slots in use this search (UCI hashfull).
    pub fn hashfull(&self) -> u32 {
        let n = (self.mask + 1).min(1000);
        let age = self.age.load(Ordering::Relaxed);
        let used = self.slots[self.offset..self.offset + n]
            .iter()
            .filter(|s| {
                let data = s.data.load(Ordering::Relaxed);
                Entry::unpack(0, data).is_some_and(|e| e.age == age)
            })
            .count();
        (used * 1000 / n) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::rng::SplitMix64;
    use rules::{Position, Variant};

    #[test]
    fn moves_survive_packing() {
        // Every kind of move: promotions, castling, en passant, Double Move starts.
        let fens = [
            (
                Variant::Chess,
                "r3k2r/pPppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPpP/R3K2R w KQkq - 0 1",
            ),
            (Variant::Chess, "8/8/8/3pP3/8/8/8/4K2k w - d6 0 2"),
            (
                Variant::DoubleMove,
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 WB",
            ),
            (
                Variant::TwoMove,
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 R",
            ),
        ];
        let mut kinds = 0;
        for (v, fen) in fens {
            let pos = Position::from_fen(v, fen).unwrap();
            for &m in pos.legal_moves().iter() {
                assert_eq!(unpack_move(pack_move(Some(m))), Some(m), "{m:?}");
                kinds |= 1 << ((m.raw() >> 12) & 15) | (m.starts_double() as u32) << 16;
            }
        }
        assert_eq!(unpack_move(pack_move(None)), None);
        // normal, double push, en passant, castling, four promotions, Double Move start
        assert_eq!(kinds, 0b1_0000_0001_1110_1111, "{kinds:b}");
    }

    #[test]
    fn entries_survive_packing() {
        for (score, eval, depth, bound, age) in [
            (0, 0, 0, Bound::Exact, 0),
            (-32_120, i16::MIN, -1, Bound::Upper, 31),
            (30_119, i16::MAX, 127, Bound::Lower, 17),
        ] {
            let e = Entry {
                key: 0x1234_5678_9abc_def0,
                best: Some(Move::normal(rules::Square(12), rules::Square(28))),
                score,
                eval,
                depth,
                bound,
                age,
            };
            assert_eq!(Entry::unpack(e.key, e.pack()), Some(e));
        }
    }

    /// A slot whose two words come from different writes (one thread's key word, another's data
    /// word) reads as empty for both keys.
    #[test]
    fn a_torn_slot_reads_as_empty() {
        let tt = TranspositionTable::with_entries(1024);
        let (a, b) = (0x1111_0000_0000_0005u64, 0x2222_0000_0000_0005u64);
        tt.store(a, expected(a).best, 10, 0, 3, Bound::Exact);
        let check_a = tt.slot(a).check.load(Ordering::Relaxed);
        tt.store(b, expected(b).best, 20, 0, 3, Bound::Exact);
        assert_eq!(tt.probe(b).map(|e| e.score), Some(20));
        assert_eq!(tt.probe(a), None);
        tt.slot(a).check.store(check_a, Ordering::Relaxed);
        assert_eq!(tt.probe(a), None);
        assert_eq!(tt.probe(b), None);
    }

    /// A prefetch (the `unsafe` hint) changes nothing a probe finds: two tables given the same
    /// stores, one prefetched before every probe and store (keys present, absent and sharing
    /// slots), answer every probe alike.
    #[test]
    fn prefetching_changes_no_probe() {
        let (plain, fetched) = (
            TranspositionTable::with_entries(1024),
            TranspositionTable::with_entries(1024),
        );
        let mut rng = SplitMix64::new(11);
        let keys: Vec<u64> = (0..4096).map(|_| rng.next_u64()).collect();
        for (i, &key) in keys.iter().enumerate() {
            let e = expected(key);
            if i % 3 != 0 {
                plain.store(key, e.best, e.score, e.eval as i32, e.depth as i32, e.bound);
                fetched.prefetch(key);
                fetched.store(key, e.best, e.score, e.eval as i32, e.depth as i32, e.bound);
            }
            let probe = keys[(i * 7) % (i + 1)];
            fetched.prefetch(probe);
            assert_eq!(plain.probe(probe), fetched.probe(probe));
        }
        for &key in &keys {
            fetched.prefetch(key);
            assert_eq!(plain.probe(key), fetched.probe(key));
        }
    }

    /// A table of 2 MB or more starts at a 2 MB boundary (where huge pages can back it) and
    /// keeps what it is given in every slot, the first and the last included.
    #[test]
    fn a_large_table_is_aligned_and_whole() {
        let tt = TranspositionTable::new(8);
        let n = tt.mask + 1;
        assert_eq!(n * std::mem::size_of::<Slot>(), 8 << 20);
        assert_eq!(tt.slot(0) as *const Slot as usize % HUGE_PAGE, 0);
        assert!(tt.offset + n <= tt.slots.len());
        let keys = [0u64, 1, n as u64 - 1, n as u64 * 3 + 17, u64::MAX << 20 | 5];
        for &key in &keys {
            let e = expected(key);
            tt.store(key, e.best, e.score, e.eval as i32, e.depth as i32, e.bound);
        }
        for &key in &keys {
            let e = expected(key);
            let got = tt.probe(key).expect("stored");
            assert_eq!((got.best, got.score, got.bound), (e.best, e.score, e.bound));
        }
        assert_eq!(
            tt.hashfull(),
            4,
            "slots 0, 1, 5 and 17 of the first thousand hold entries"
        );
        tt.clear();
        assert!(keys.iter().all(|&k| tt.probe(k).is_none()));
    }

    /// What the hammering threads write for `key`: everything derived from the key, so any reader
    /// knows what a correct entry holds.
    fn expected(key: u64) -> Entry {
        let from = (key % 64) as u8;
        let to = ((from as u64 + 1 + (key >> 6) % 63) % 64) as u8;
        let m = Move::normal(rules::Square(from), rules::Square(to));
        Entry {
            key,
            best: Some(if key & (1 << 20) != 0 {
                m.as_double_start()
            } else {
                m
            }),
            score: ((key >> 24) % 60_000) as i32 - 30_000,
            eval: (key >> 40) as i16,
            depth: ((key >> 56) % 100) as i8,
            bound: [Bound::Exact, Bound::Lower, Bound::Upper][(key >> 8) as usize % 3],
            age: 0,
        }
    }

    /// Threads store and probe keys that share few slots; every probe that finds an entry must find
    /// exactly what some thread wrote for that key (a torn write reads as empty, never as a mix).
    #[test]
    fn concurrent_writers_and_readers_see_whole_entries_or_none() {
        let tt = TranspositionTable::with_entries(256);
        let mut rng = SplitMix64::new(7);
        let keys: Vec<u64> = (0..2048).map(|_| rng.next_u64()).collect();
        let threads = 4;
        let hits: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let (tt, keys) = (&tt, &keys);
                    s.spawn(move || {
                        let mut rng = SplitMix64::new(100 + t);
                        let mut hits = 0u64;
                        for _ in 0..2_000_000 {
                            let key = keys[rng.below(keys.len())];
                            if rng.next_u64() & 1 == 0 {
                                let e = expected(key);
                                tt.store(
                                    key,
                                    e.best,
                                    e.score,
                                    e.eval as i32,
                                    e.depth as i32,
                                    e.bound,
                                );
                            } else if let Some(e) = tt.probe(key) {
                                assert_eq!(e, expected(key));
                                hits += 1;
                            }
                        }
                        hits
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert!(hits > 10_000, "{hits} hits");
    }
}
