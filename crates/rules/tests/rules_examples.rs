//! The rule texts' worked examples, the rule author's example games, and for each rule of each variant
//! an illegal attempt refused with its reason.

use rules::game::{legal_turns, turn_uci};
use rules::notation::{parse_san, why_illegal};
use rules::outcome::{DrawReason, Outcome, WinReason};
use rules::pgn::read_game;
use rules::{Color, Game, Phase, Position, Variant};

/// The test data kept in the repository (copied from `shared/`; see tests/data/README.md).
fn data_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn game_from(variant: Variant, fen: Option<&str>, movetext: &str) -> Result<Game, String> {
    let text = match fen {
        Some(f) => format!("[FEN \"{f}\"]\n\n{movetext}\n"),
        None => format!("{movetext}\n"),
    };
    read_game(&text, Some(variant))
        .map(|(_, g)| g)
        .map_err(|e| e.to_string())
}

/// Asserts that the record is refused, and that the message contains `reason`.
fn refused(variant: Variant, fen: Option<&str>, movetext: &str, reason: &str) {
    match game_from(variant, fen, movetext) {
        Ok(g) => panic!(
            "{variant} '{movetext}' was accepted (final {})",
            g.position().fen()
        ),
        Err(e) => assert!(
            e.contains(reason),
            "{variant} '{movetext}': got '{e}', expected '{reason}'"
        ),
    }
}

fn accepted(variant: Variant, fen: Option<&str>, movetext: &str) -> Game {
    game_from(variant, fen, movetext).unwrap_or_else(|e| panic!("{variant} '{movetext}': {e}"))
}

// ---------- Two Move Chess ----------

#[test]
fn author_example_games_validate() {
    let dir = data_dir().join("examples/two-move-chess");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pgn") {
            let text = std::fs::read_to_string(&path).unwrap();
            let (rec, game) = read_game(&text, Some(Variant::TwoMove))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(game.turns().len(), rec.turns.len(), "{}", path.display());
            n += 1;
        }
    }
    assert_eq!(n, 4);
}

#[test]
fn example_5_is_the_full_game() {
    let text =
        std::fs::read_to_string(data_dir().join("examples/two-move-chess/example5.pgn")).unwrap();
    let (rec, game) = read_game(&text, Some(Variant::TwoMove)).unwrap();
    assert_eq!(rec.result.as_deref(), Some("1/2-1/2"));
    assert_eq!(
        game.position().fen(),
        "8/8/8/b4P1p/2k4P/8/4K3/8 b - - 0 31 T"
    );
    assert!(game.outcome().is_none(), "the draw was agreed, not forced");
}

#[test]
fn example_1_check_makes_a_single_move_turn_and_a_response() {
    let g = accepted(Variant::TwoMove, None, "1.e4 c5,d6 2.Bb5+ Nd7");
    let turns = g.turns();
    assert_eq!(turns.len(), 4);
    assert_eq!(turns[2].moves.len(), 1);
    assert_eq!(turns[3].moves.len(), 1);
    assert_eq!(g.position().phase(), Phase::Start);
    assert_eq!(g.position().turn(), Color::White);
}

#[test]
fn example_3_en_passant_chance_makes_a_single_move_turn() {
    let g = accepted(Variant::TwoMove, None, "1.d4 Nf6,c5 2.c4,d5 e5");
    assert_eq!(g.position().phase(), Phase::Response);
    assert_eq!(
        g.position().ep_square().map(|s| s.to_string()).as_deref(),
        Some("e6")
    );
    // The response may take en passant; the chance does not outlive it.
    accepted(Variant::TwoMove, None, "1.d4 Nf6,c5 2.c4,d5 e5 3.dxe6");
    refused(
        Variant::TwoMove,
        None,
        "1.d4 Nf6,c5 2.c4,d5 e5 3.Nc3 Nc6,Be7 4.dxe6",
        "no en passant",
    );
}

#[test]
fn example_4_is_stalemate_on_a_normal_turn() {
    let fen =
        std::fs::read_to_string(data_dir().join("examples/two-move-chess/example4.fen")).unwrap();
    let pos = Position::from_fen(Variant::TwoMove, fen.trim()).unwrap();
    assert_eq!(
        pos.phase(),
        Phase::Start,
        "a FEN without 7th field is the start of a normal turn"
    );
    let game = Game::new(pos);
    assert_eq!(game.outcome(), Some(Outcome::Draw(DrawReason::Stalemate)));
    // As a response move turn the same position has king moves.
    let r = Position::from_fen(Variant::TwoMove, &format!("{} R", fen.trim())).unwrap();
    assert_eq!(r.legal_moves().len(), 6);
    assert!(Game::new(r).outcome().is_none());
    // The king can move, but no other piece could follow, and the move is not a single move.
    let kd3 = parse_san(&pos, "Kd3").unwrap();
    assert!(why_illegal(&pos, kd3)
        .unwrap()
        .contains("the turn cannot be completed"));
}

#[test]
fn two_move_rule_a_piece_may_not_move_twice() {
    refused(
        Variant::TwoMove,
        None,
        "1.e4 c5,d6 2.Nf3,Ng5",
        "already moved this turn",
    );
    refused(
        Variant::TwoMove,
        None,
        "1.e4 c5,d6 2.Nf3,Be2 Nf6,Nc6 3.O-O,Re1",
        "turn 3 (white) O-O,Re1: the rook moved in castling and may not move again this turn",
    );
    refused(
        Variant::TwoMove,
        None,
        "1.e4 c5,d6 2.Nf3,Be2 Nf6,Nc6 3.O-O,Kh1",
        "the king moved in castling",
    );
}

#[test]
fn two_move_rule_single_move_turns_end_the_turn() {
    refused(
        Variant::TwoMove,
        None,
        "1.e4 c5,d6 2.Bb5+,Nf3",
        "gives check, so it is a single move turn",
    );
    refused(
        Variant::TwoMove,
        None,
        "1.e4 d5,Nc6 2.exd5,Nf3",
        "captures, so it is a single move turn",
    );
    refused(
        Variant::TwoMove,
        None,
        "1.e4,d4",
        "a response move turn has only one move",
    );
    // A single move turn is answered by exactly one response move.
    refused(
        Variant::TwoMove,
        None,
        "1.e4 c5,d6 2.Bb5+ Nd7,Nf6",
        "a response move turn has only one move",
    );
    // ...but a check on the second move of a two move turn is allowed (Example 2).
    accepted(Variant::TwoMove, None, "1.e4 c5,d6 2.Nf3,Bb5+ Nd7,Nf6");
    // Promotion.
    let fen = "4k3/1P6/8/8/8/8/6PP/4K3 w - - 0 1 T";
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.b8=Q+,h3",
        "single move turn",
    );
    let fen = "8/1P5k/8/8/8/8/6PP/4K3 w - - 0 1 T";
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.b8=N,h3",
        "promotes, so it is a single move turn",
    );
    // A two-square move that gives the opponent a legal en passant capture.
    let fen = "4k3/8/8/8/3p4/8/4P2P/4K3 w - - 0 1 T";
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.e4,h3",
        "allows an en passant capture",
    );
    accepted(Variant::TwoMove, Some(fen), "1.h3,e4 dxe3");
}

#[test]
fn two_move_rule_in_check_escape_on_the_first_move() {
    let fen = "4k3/8/8/8/8/8/3P1P2/r3K2R w K - 0 1 T";
    let pos = Position::from_fen(Variant::TwoMove, fen).unwrap();
    assert!(pos.in_check());
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.Rh2,Ke2",
        "does not get the king out of check",
    );
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.O-O",
        "castling is not allowed while in check",
    );
    accepted(Variant::TwoMove, Some(fen), "1.Ke2,Rh2");
}

#[test]
fn two_move_rule_en_passant_only_on_the_next_move() {
    let fen = "rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 3 T";
    refused(
        Variant::TwoMove,
        Some(fen),
        "1.Nc3,dxe6",
        "no en passant capture is possible now",
    );
    accepted(Variant::TwoMove, Some(fen), "1.dxe6");
}

#[test]
fn two_move_rule_no_legal_turn_in_check_loses() {
    // Black to move in check from the queen on e7 (protected), lone king: no legal complete turn.
    let fen = "4k3/4Q3/4K3/8/8/8/8/8 b - - 0 1 T";
    let g = Game::new(Position::from_fen(Variant::TwoMove, fen).unwrap());
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win {
            winner: Color::White,
            reason: WinReason::Checkmate
        })
    );
    // A lone king in check that can only step away at the start of a normal turn also loses (ruling 5).
    let fen = "8/8/8/8/8/2k5/8/K1r5 w - - 0 1 T";
    let g = Game::new(Position::from_fen(Variant::TwoMove, fen).unwrap());
    assert_eq!(g.outcome().and_then(|o| o.winner()), Some(Color::Black));
}

#[test]
fn two_move_repetition_counts_half_way_positions_and_the_phase() {
    let mut g = accepted(Variant::TwoMove, None, "1.Nf3 Nf6,Nc6");
    for _ in 0..2 {
        g.play_turn_text("Ng1,Nc3", false).unwrap();
        g.play_turn_text("Ng8,Nb8", false).unwrap();
        g.play_turn_text("Nb1,Nf3", false).unwrap();
        g.play_turn_text("Nf6,Nc6", false).unwrap();
    }
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.claimable_draw(), Some(DrawReason::ThreefoldRepetition));
}

// ---------- Double Move Chess ----------

const DM_MATE: &str = "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB";
const DM_EP: &str = "7k/8/8/8/3p4/8/4P3/7K w - - 0 1 WB";

#[test]
fn double_move_check_first_mate_second() {
    let g = accepted(Variant::DoubleMove, Some(DM_MATE), "1.Qg8+,Qh7#");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win {
            winner: Color::White,
            reason: WinReason::Checkmate
        })
    );
    // Black's Double Move is still unspent, yet there is no legal first half.
    assert!(g.position().state().double_move[Color::Black.index()]);
    assert!(g.position().legal_moves().is_empty());
    let pos = *g.position();
    for (san, reason) in [
        ("Kxh7", "the king would be in check on h7"),
        ("Qg8", "does not get the king out of check"),
        ("Bxg6", "does not get the king out of check"),
    ] {
        let m = parse_san(&pos, san).unwrap();
        let why = why_illegal(&pos, m.as_double_start()).unwrap();
        assert!(why.contains(reason), "{san}: {why}");
        assert!(why_illegal(&pos, m).is_some());
    }
    refused(
        Variant::DoubleMove,
        Some(DM_MATE),
        "1.Qg8+,Qh7# Kxh7,Kh8",
        "the game is already over",
    );
}

#[test]
fn double_move_en_passant_depends_on_the_order() {
    let g = accepted(Variant::DoubleMove, Some(DM_EP), "1.Kg1,e4 dxe3");
    assert_eq!(g.position().fen(), "7k/8/8/8/8/4p3/8/6K1 w - - 0 2 -B");
    refused(
        Variant::DoubleMove,
        Some(DM_EP),
        "1.e4,Kg1 dxe3",
        "no en passant capture is possible now",
    );
    // The two lines end with the same placement but different en passant rights.
    let a = accepted(Variant::DoubleMove, Some(DM_EP), "1.Kg1,e4");
    let b = accepted(Variant::DoubleMove, Some(DM_EP), "1.e4,Kg1");
    assert_eq!(a.position().board(), b.position().board());
    assert_ne!(a.position().hash(), b.position().hash());
}

#[test]
fn double_move_rules_refused_with_reasons() {
    // Used once per game.
    refused(
        Variant::DoubleMove,
        None,
        "1.e4,d4 e5 2.Nf3,Nc3",
        "white has already used its Double Move",
    );
    // A second half may never capture the king.
    refused(
        Variant::DoubleMove,
        Some(DM_MATE),
        "1.Qg8+,Qxh8",
        "a move may never capture the king",
    );
    // A half may not leave one's own king in check.
    refused(
        Variant::DoubleMove,
        Some("4k3/4r3/8/8/8/8/4R3/4K3 w - - 0 1 WB"),
        "1.Ra2,Kd1",
        "would leave the king in check",
    );
    // A first half with no legal second move cannot begin a Double Move.
    let fen = "5b2/1p6/KP5k/1N2r3/P7/P6p/8/8 w - - 0 5 WB";
    refused(
        Variant::DoubleMove,
        Some(fen),
        "1.Ka5,Kb4",
        "no legal second move exists after Ka5",
    );
    accepted(Variant::DoubleMove, Some(fen), "1.Ka5");
}

#[test]
fn double_move_fen_field_round_trips_with_the_m_suffix() {
    let mut g = Game::new(Position::from_fen(Variant::DoubleMove, DM_MATE).unwrap());
    let qg8 = parse_san(g.position(), "Qg8").unwrap();
    g.play(qg8.as_double_start()).unwrap();
    assert!(
        g.position().fen().ends_with(" -Bm"),
        "{}",
        g.position().fen()
    );
    assert!(g.outcome().is_none(), "half way is never the end");
    let p = Position::from_fen(Variant::DoubleMove, &g.position().fen()).unwrap();
    assert_eq!(&p, g.position());
}

// ---------- Twinmove Chess ----------

#[test]
fn twinmove_rules_refused_with_reasons() {
    refused(
        Variant::Twinmove,
        None,
        "1.Nf3",
        "the game must begin with a pawn move",
    );
    refused(
        Variant::Twinmove,
        None,
        "1.e4,d4",
        "two pawn moves in one turn are not allowed",
    );
    refused(
        Variant::Twinmove,
        None,
        "1.e4,Nf3 Nf6,e5",
        "is a piece move and ends the turn",
    );
    refused(
        Variant::Twinmove,
        None,
        "1.e4,Nf3 e5 2.Nc3",
        "after the pawn move e5 a piece move must follow",
    );
    // A pawn move after which no piece can move is not legal.
    let fen = "7k/8/8/8/8/P1P5/PP1P3P/KN6 w - - 0 5 T";
    refused(
        Variant::Twinmove,
        Some(fen),
        "1.h3,Kb1",
        "no piece move could follow h3",
    );
    // No en passant.
    let fen = "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1 T";
    refused(
        Variant::Twinmove,
        Some(fen),
        "1.e4,Kd1 dxe3",
        "no en passant capture is possible",
    );
    let e =
        Position::from_fen(Variant::Twinmove, "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1 T").unwrap_err();
    assert_eq!(e.field, 4);
}

#[test]
fn twinmove_king_capture_wins_and_kings_may_be_left_attacked() {
    let g = accepted(Variant::Twinmove, None, "1.e4,Qh5 f6,Nc6 2.Qxe8");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Win {
            winner: Color::White,
            reason: WinReason::KingCaptured
        })
    );
    // f6 exposed the king and Black did not cover it: that is allowed (and loses).
    assert!(g.position().legal_moves().is_empty());
    // A pawn move that captures the king ends the game at once.
    let fen = "8/8/8/3k4/4P3/8/8/4K3 w - - 0 1 T";
    let g = accepted(Variant::Twinmove, Some(fen), "1.exd5");
    assert_eq!(g.outcome().and_then(|o| o.winner()), Some(Color::White));
}

#[test]
fn twinmove_castling_ignores_attacks() {
    let fen = "4k3/8/8/8/8/8/8/4K2Rr w K - 0 1 T";
    assert!(
        Position::from_fen(Variant::Twinmove, fen).is_err(),
        "nine squares on a rank"
    );
    let fen = "4r1k1/8/8/8/8/8/8/4K2R w K - 0 1 T";
    accepted(Variant::Twinmove, Some(fen), "1.O-O");
    refused(
        Variant::Chess,
        Some("4r1k1/8/8/8/8/8/8/4K2R w K - 0 1"),
        "1.O-O",
        "castling is not allowed while in check",
    );
}

#[test]
fn twinmove_promotion_then_move_the_new_piece() {
    let fen = "7k/1P6/8/8/8/8/8/K7 w - - 0 1 T";
    let g = accepted(Variant::Twinmove, Some(fen), "1.b8=Q,Qb1");
    assert_eq!(g.position().turn(), Color::Black);
}

// ---------- Orthodox chess and all variants ----------

#[test]
fn orthodox_rules_refused_with_reasons() {
    refused(
        Variant::Chess,
        None,
        "1.e4 f5 2.Ke2 e5 3.Kf3 Nc6 4.Kg4",
        "the king would be in check on g4",
    );
    refused(
        Variant::Chess,
        None,
        "1.e5",
        "no white piece can make this move",
    );
    refused(
        Variant::Chess,
        None,
        "1.e4,d4",
        "in orthodox chess a turn is one move",
    );
    let g = accepted(Variant::Chess, None, "1.f3 e5 2.g4 Qh4#");
    assert_eq!(g.outcome().and_then(|o| o.winner()), Some(Color::Black));
}

/// docs/notation.md: an unfinished turn ends with a comma; without it, the token is a whole turn
/// (the rule author's checker refuses `1.d4 d5 *` too).
#[test]
fn an_unfinished_turn_needs_its_comma() {
    refused(
        Variant::TwoMove,
        None,
        "1.d4 d5 *",
        "a second move by another piece must follow",
    );
    let g = accepted(Variant::TwoMove, None, "1.d4 d5, *");
    assert!(!g.position().at_turn_start());
    // Double Move Chess: with the comma the move began the Double Move; without, a whole turn.
    let g = accepted(Variant::DoubleMove, None, "1.e4, *");
    assert!(!g.position().at_turn_start());
    let g = accepted(Variant::DoubleMove, None, "1.e4 *");
    assert!(g.position().at_turn_start());
}

#[test]
fn turns_listing_from_mid_turn_lists_completions() {
    let g = accepted(Variant::TwoMove, None, "1.e4 Nf6,");
    let turns: Vec<String> = legal_turns(g.position())
        .iter()
        .map(|t| turn_uci(t))
        .collect();
    assert!(!turns.is_empty());
    assert!(
        turns.iter().all(|t| !t.contains(',')),
        "only the completing move is listed"
    );
    assert!(
        turns.iter().all(|t| !t.starts_with("f6")),
        "the knight may not move again"
    );
    assert_eq!(
        turns.len() as u64,
        rules::perft::perft_turns(g.position(), 1)
    );
}

#[test]
fn fifty_rules_count_in_the_variant_unit() {
    // Two Move Chess counts turns: 100 turns may be claimed, 150 end the game.
    let fen = "1n2k3/8/8/8/8/8/8/R3K2R w - - 99 80 T";
    let mut g = Game::new(Position::from_fen(Variant::TwoMove, fen).unwrap());
    assert!(g.claimable_draw().is_none());
    g.play_turn_text("Ra2,Rh2", false).unwrap();
    assert_eq!(g.position().halfmove_clock(), 100);
    assert_eq!(g.claimable_draw(), Some(DrawReason::FiftyMoveRule));
    let fen = "1n2k3/8/8/8/8/8/8/R3K2R w - - 149 80 T";
    let mut g = Game::new(Position::from_fen(Variant::TwoMove, fen).unwrap());
    g.play_turn_text("Ra2,Rh2", false).unwrap();
    assert_eq!(
        g.outcome(),
        Some(Outcome::Draw(DrawReason::SeventyFiveMoveRule))
    );
    // Double Move Chess counts every move, both halves included.
    let fen = "4k3/8/8/8/8/8/8/R3K2R w - - 10 80 WB";
    let mut g = Game::new(Position::from_fen(Variant::DoubleMove, fen).unwrap());
    g.play_turn_text("Ra2,Rg1", false).unwrap();
    assert_eq!(g.position().halfmove_clock(), 12);
    // A pawn move on the first half of a Two Move turn resets the turn counter.
    let fen = "4k3/8/8/8/8/8/P7/R3K2R w - - 40 80 T";
    let mut g = Game::new(Position::from_fen(Variant::TwoMove, fen).unwrap());
    g.play_turn_text("a3,Rh2", false).unwrap();
    assert_eq!(g.position().halfmove_clock(), 0);
}

#[test]
fn dead_positions_per_variant() {
    let kbk = "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1";
    let g = Game::new(Position::from_fen(Variant::Chess, kbk).unwrap());
    assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::DeadPosition)));
    // In Two Move Chess a lone king cannot complete a normal turn, so a bishop can still win.
    let g = Game::new(Position::from_fen(Variant::TwoMove, &format!("{kbk} R")).unwrap());
    assert!(g.outcome().is_none());
    let kk = "4k3/8/8/8/8/8/8/4K3 w - - 0 1 R";
    let g = Game::new(Position::from_fen(Variant::TwoMove, kk).unwrap());
    assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::DeadPosition)));
    let same_bishops = "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1 WB";
    let g = Game::new(Position::from_fen(Variant::DoubleMove, same_bishops).unwrap());
    assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::DeadPosition)));
    let knights = "4kn2/8/8/8/8/8/8/2N1K3 w - - 0 1 T";
    let g = Game::new(Position::from_fen(Variant::Twinmove, knights).unwrap());
    assert!(g.outcome().is_none());
}
