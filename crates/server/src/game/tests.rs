//! Unit tests of the game core: `Live::apply` for every action, the clock as a game drives it,
//! the stored form and the change set, and the wire forms of actions.

use super::action::{Action, Actor, ClientMessage, DrawAction, MoveAction, TakebackAction};
use super::clock::Clock;
use super::error::GameError;
use super::live::Live;
use super::record::{EngineSeat, Meta, Reason, Side};
use super::view::StateKind;
use crate::store::Status;
use rules::outcome::Outcome;
use rules::{Color, Position, Variant};

const W: Actor = Actor::Player(Color::White);
const B: Actor = Actor::Player(Color::Black);

fn meta(clock: Option<Clock>, engine: Option<EngineSeat>) -> Meta {
    Meta {
        invite: Some("inv".into()),
        clock,
        ..Meta::new(engine, [Some("wtok".into()), Some("btok".into())])
    }
}

fn game(variant: Variant, clock: Option<Clock>) -> Live {
    Live::new(
        "g1".into(),
        Position::start(variant),
        meta(clock, None),
        Status::Started,
        1_000,
    )
}

fn mv(uci: &str) -> Action {
    Action::Move(MoveAction {
        mv: Some(uci.into()),
        ..MoveAction::default()
    })
}

fn turn(text: &str) -> Action {
    Action::Move(MoveAction {
        turn: Some(text.into()),
        ..MoveAction::default()
    })
}

#[test]
fn only_the_side_to_move_moves_and_each_change_is_a_version() {
    let mut g = game(Variant::Chess, None);
    assert_eq!(
        g.apply(B, &mv("e7e5"), 2_000),
        Err(GameError::NotYourTurn { to_move: "white" })
    );
    assert_eq!(g.version, 1, "a refused action changes nothing");
    g.apply(W, &mv("e2e4"), 2_000).unwrap();
    assert_eq!(g.version, 2);
    assert_eq!(g.moves.len(), 1);
    assert_eq!(g.moves[0].uci, "e2e4");
    let e = g.apply(B, &mv("e7e4"), 3_000).unwrap_err();
    assert!(
        matches!(&e, GameError::IllegalMove { uci, .. } if uci == "e7e4"),
        "{e:?}"
    );
    assert_eq!(e.status(), 400);
    assert_eq!(g.version, 2);
    assert!(matches!(
        g.apply(B, &mv("zz"), 3_000),
        Err(GameError::BadRequest(_))
    ));
}

#[test]
fn two_move_clock_runs_between_halves_and_adds_the_increment_once() {
    let mut g = game(Variant::TwoMove, Some(Clock::new(60_000, 5_000)));
    // White's first turn (one move, a response turn) and Black's first turn: clockless.
    g.apply(W, &mv("e2e4"), 10_000).unwrap();
    assert_eq!(g.meta.clock.as_ref().unwrap().running_side(), None);
    g.apply(B, &turn("g8f6,b8c6"), 20_000).unwrap();
    // White's second turn: White's clock runs from Black's last move.
    let c = g.meta.clock.clone().unwrap();
    assert_eq!(c.running_side(), Some(Color::White));
    assert_eq!(g.flag_at(), Some(20_000 + 60_000));
    g.apply(W, &mv("g1f3"), 23_000).unwrap();
    let c = g.meta.clock.clone().unwrap();
    assert_eq!(
        c.remaining(23_000),
        [57_000, 60_000],
        "charged, no increment mid-turn"
    );
    assert_eq!(c.running_side(), Some(Color::White));
    g.apply(W, &mv("f1c4"), 24_000).unwrap();
    let c = g.meta.clock.clone().unwrap();
    assert_eq!(
        c.remaining_ms,
        [56_000 + 5_000, 60_000],
        "one increment per turn"
    );
    assert_eq!(c.running_side(), Some(Color::Black));
    // The mover's clock after the turn is kept with the turn's last move.
    assert_eq!(g.turn_clocks().last(), Some(&Some(61_000)));
    assert_eq!(g.moves[g.moves.len() - 2].clock_ms, None);
}

#[test]
fn a_flag_fall_ends_the_game_and_a_bare_king_cannot_win_on_time() {
    let mut g = game(Variant::Chess, Some(Clock::new(5_000, 0)));
    g.apply(W, &mv("e2e4"), 1_000).unwrap();
    g.apply(B, &mv("e7e5"), 2_000).unwrap();
    g.apply(W, &mv("g1f3"), 3_000).unwrap(); // Black's clock runs from 3 000: falls at 8 000.
    assert_eq!(g.flag_at(), Some(8_000));
    g.apply(Actor::Server, &Action::Flag, 7_999).unwrap();
    assert_eq!(g.status, Status::Started, "not yet");
    g.apply(Actor::Server, &Action::Flag, 8_000).unwrap();
    assert_eq!(g.status, Status::Finished);
    assert!(matches!(
        g.game.outcome(),
        Some(Outcome::Win {
            winner: Color::White,
            ..
        })
    ));
    let s = g.state(StateKind::GameState, 9_000);
    assert_eq!(s.reason, Some(Reason::Timeout));
    assert_eq!(s.clock.unwrap().black_ms, 0);
    // A move after the flag fell is refused as game over.
    assert!(matches!(
        g.apply(B, &mv("d7d5"), 9_000),
        Err(GameError::Over(_))
    ));

    // White with a bare king: Black's flag falls, a draw.
    let start = Position::from_fen(Variant::Chess, "4k3/4p3/8/8/8/8/8/4K3 b - - 0 1").unwrap();
    let mut m = meta(Some(Clock::new(1_000, 0)), None);
    m.clock.as_mut().unwrap().run(Some(Color::Black), 0);
    let mut g = Live::new("g2".into(), start, m, Status::Started, 0);
    g.apply(B, &mv("e8d8"), 5_000).unwrap_err();
    assert_eq!(g.status, Status::Finished, "the flag fell before the move");
    assert_eq!(
        g.state(StateKind::GameState, 5_000).reason,
        Some(Reason::TimeoutVsInsufficientMaterial)
    );
}

#[test]
fn draws_offers_claims_and_their_errors() {
    let mut g = game(Variant::Chess, None);
    let decline = Action::Draw {
        action: DrawAction::Decline,
    };
    assert_eq!(
        g.apply(B, &decline, 1),
        Err(GameError::NoOffer {
            what: "draw offer",
            verb: "decline"
        })
    );
    g.apply(
        W,
        &Action::Draw {
            action: DrawAction::Offer,
        },
        1,
    )
    .unwrap();
    assert_eq!(g.meta.draw_offer, Some(Side::White));
    g.apply(
        B,
        &Action::Draw {
            action: DrawAction::Accept,
        },
        2,
    )
    .unwrap();
    assert_eq!(g.status, Status::Finished);
    assert_eq!(
        g.state(StateKind::GameState, 3).reason,
        Some(Reason::Agreement)
    );
    assert!(matches!(
        g.apply(W, &Action::Resign, 4),
        Err(GameError::Over(_))
    ));

    let mut g = game(Variant::Chess, None);
    assert_eq!(
        g.apply(
            W,
            &Action::Draw {
                action: DrawAction::Claim
            },
            1
        ),
        Err(GameError::NoDrawToClaim)
    );
    // Knights out and back twice: the third repetition may be claimed by the side to move.
    for (i, m) in [
        "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8",
    ]
    .iter()
    .enumerate()
    {
        let by = if i % 2 == 0 { W } else { B };
        g.apply(by, &mv(m), 10 + i as i64).unwrap();
    }
    assert_eq!(
        g.apply(
            B,
            &Action::Draw {
                action: DrawAction::Claim
            },
            30
        ),
        Err(GameError::OnlyMoverClaims)
    );
    g.apply(
        W,
        &Action::Draw {
            action: DrawAction::Claim,
        },
        30,
    )
    .unwrap();
    assert_eq!(
        g.state(StateKind::GameState, 31).reason,
        Some(Reason::ThreefoldRepetition)
    );

    let mut g = Live::new(
        "g3".into(),
        Position::start(Variant::Chess),
        meta(
            None,
            Some(EngineSeat {
                level: 3,
                color: Side::Black,
            }),
        ),
        Status::Started,
        0,
    );
    assert_eq!(
        g.apply(
            W,
            &Action::Draw {
                action: DrawAction::Offer
            },
            1
        ),
        Err(GameError::EngineDeclinesDraw)
    );
}

#[test]
fn takebacks_cut_the_moves_and_the_change_says_so() {
    let mut g = game(Variant::DoubleMove, None);
    g.apply(W, &mv("e2e4"), 1).unwrap();
    g.apply(B, &mv("e7e5"), 2).unwrap();
    let before = g.clone();
    g.apply(
        B,
        &Action::Takeback {
            action: TakebackAction::Propose,
        },
        3,
    )
    .unwrap();
    assert_eq!(g.meta.takeback_offer, Some(Side::Black));
    g.apply(
        W,
        &Action::Takeback {
            action: TakebackAction::Accept,
        },
        4,
    )
    .unwrap();
    assert_eq!(g.moves.len(), 1, "back to the start of Black's last turn");
    assert_eq!(g.meta.takebacks_used, [0, 1]);
    let change = g.change_since(&before);
    assert_eq!(change.truncate_to, Some(1));
    assert!(change.append.is_empty());
    assert_eq!(change.row.version, before.version + 2);
    assert_eq!(
        g.apply(
            W,
            &Action::Takeback {
                action: TakebackAction::Decline
            },
            5
        ),
        Err(GameError::NoOffer {
            what: "takeback proposal",
            verb: "decline"
        })
    );
}

#[test]
fn abort_only_before_both_sides_played_and_join_needs_the_invite() {
    let mut g = game(Variant::Chess, None);
    g.apply(W, &mv("e2e4"), 1).unwrap();
    g.apply(B, &mv("e7e5"), 2).unwrap();
    assert_eq!(g.apply(W, &Action::Abort, 3), Err(GameError::AbortTooLate));

    let mut m = meta(None, None);
    m.tokens[1] = None;
    let mut g = Live::new(
        "g4".into(),
        Position::start(Variant::Chess),
        m,
        Status::Waiting,
        0,
    );
    assert_eq!(g.apply(W, &mv("e2e4"), 1), Err(GameError::NotStarted));
    assert_eq!(g.free_seat(), Some(Color::Black));
    let join = |invite: &str| Action::Join {
        invite: invite.into(),
        token: "new".into(),
        player: None,
    };
    assert_eq!(
        g.apply(Actor::Guest, &join("nope"), 1),
        Err(GameError::WrongInvite)
    );
    g.apply(Actor::Guest, &join("inv"), 2).unwrap();
    assert_eq!(g.status, Status::Started);
    assert_eq!(g.color_of_token("new"), Some(Color::Black));
    assert_eq!(
        g.apply(Actor::Guest, &join("inv"), 3),
        Err(GameError::NotWaiting)
    );
    // A guest cannot move, a player cannot join.
    assert_eq!(
        g.apply(Actor::Guest, &mv("e2e4"), 4),
        Err(GameError::NotAPlayer)
    );
    g.apply(W, &Action::Abort, 5).unwrap();
    assert_eq!(g.status, Status::Aborted);
    assert_eq!(
        g.state(StateKind::GameState, 6).reason,
        Some(Reason::Aborted)
    );
}

#[test]
fn a_stale_engine_reply_is_dropped() {
    let mut g = Live::new(
        "g5".into(),
        Position::start(Variant::Chess),
        meta(
            None,
            Some(EngineSeat {
                level: 3,
                color: Side::White,
            }),
        ),
        Status::Started,
        0,
    );
    assert!(g.engine_to_move());
    let stale = Action::EngineTurn {
        turn: "e2e4".into(),
        version: 0,
    };
    g.apply(Actor::Server, &stale, 1).unwrap();
    assert_eq!(g.moves.len(), 0);
    let fresh = Action::EngineTurn {
        turn: "e2e4".into(),
        version: g.version,
    };
    g.apply(Actor::Server, &fresh, 2).unwrap();
    assert_eq!(g.moves.len(), 1);
    assert!(!g.engine_to_move());
    // Players cannot send server actions.
    assert_eq!(g.apply(B, &fresh, 3), Err(GameError::NotAPlayer));
}

#[test]
fn the_stored_form_rebuilds_the_same_game() {
    let mut g = game(Variant::DoubleMove, Some(Clock::new(60_000, 1_000)));
    g.apply(
        W,
        &Action::Move(MoveAction {
            mv: Some("e2e4".into()),
            double: true,
            turn: None,
        }),
        10,
    )
    .unwrap();
    g.apply(W, &mv("d2d4"), 20).unwrap();
    g.apply(B, &Action::Resign, 30).unwrap();
    let back = Live::from_stored(g.to_stored()).unwrap();
    assert_eq!(back.moves, g.moves);
    assert_eq!(back.san, g.san);
    assert_eq!(back.san, ["e4", "d4"]);
    assert_eq!(back.moves[0].uci, "e2e4*");
    assert_eq!(back.meta, g.meta);
    assert_eq!(back.game.outcome(), g.game.outcome());
    assert_eq!(
        back.state(StateKind::GameFull, 40),
        g.state(StateKind::GameFull, 40)
    );
}

#[test]
fn client_messages_parse_as_actions() {
    let p = |s: &str| serde_json::from_str::<ClientMessage>(s);
    assert_eq!(p(r#"{"type":"ping"}"#).unwrap(), ClientMessage::Ping);
    assert_eq!(
        p(r#"{"type":"move","move":"e2e4"}"#).unwrap(),
        ClientMessage::Action(mv("e2e4"))
    );
    assert_eq!(
        p(r#"{"type":"move","turn":"g1f3,e2e4"}"#).unwrap(),
        ClientMessage::Action(turn("g1f3,e2e4"))
    );
    assert_eq!(
        p(r#"{"type":"draw","action":"offer"}"#).unwrap(),
        ClientMessage::Action(Action::Draw {
            action: DrawAction::Offer
        })
    );
    assert!(p(r#"{"type":"draw","action":"maybe"}"#).is_err());
    assert!(
        p(r#"{"type":"flag"}"#).is_err(),
        "server actions are not accepted"
    );
    assert!(p(r#"{"type":"move","move":"e2e4","bogus":1}"#).is_err());
}

#[test]
fn a_newer_stored_state_is_taken_over_by_replaying_only_the_difference() {
    let mut a = game(Variant::TwoMove, None);
    a.apply(W, &mv("e2e4"), 1).unwrap();
    a.apply(B, &turn("g8f6,b8c6"), 2).unwrap();
    let mut b = a.clone();
    // Another node: a takeback of Black's turn, then a different turn and White's reply.
    b.apply(
        B,
        &Action::Takeback {
            action: TakebackAction::Propose,
        },
        3,
    )
    .unwrap();
    b.apply(
        W,
        &Action::Takeback {
            action: TakebackAction::Accept,
        },
        4,
    )
    .unwrap();
    b.apply(B, &turn("e7e5,d7d6"), 5).unwrap();
    b.apply(W, &turn("g1f3,f1c4"), 6).unwrap();
    let refreshed = a.refreshed(b.to_stored()).unwrap();
    let rebuilt = Live::from_stored(b.to_stored()).unwrap();
    assert_eq!(refreshed.san, rebuilt.san);
    assert_eq!(refreshed.moves, b.moves);
    assert_eq!(refreshed.version, b.version);
    assert_eq!(refreshed.meta, b.meta);
    assert_eq!(
        refreshed.state(StateKind::GameState, 7),
        rebuilt.state(StateKind::GameState, 7)
    );
    assert_eq!(refreshed.game.position().fen(), b.game.position().fen());
}

#[test]
fn a_half_played_two_move_turn_is_not_labelled_a_one_move_turn() {
    use crate::game::view::TurnKind;
    let mut g = game(Variant::TwoMove, None);
    g.apply(W, &mv("e2e4"), 1).unwrap();
    g.apply(B, &mv("g8f6"), 2).unwrap();
    let s = g.state(StateKind::GameState, 3);
    let last = s.turns.as_ref().unwrap().last().unwrap().clone();
    assert_eq!((last.kind, last.complete), (TurnKind::Normal, false));
    g.apply(B, &mv("b8c6"), 4).unwrap();
    let s = g.state(StateKind::GameState, 5);
    let last = s.turns.as_ref().unwrap().last().unwrap().clone();
    assert_eq!((last.kind, last.complete), (TurnKind::Normal, true));
    // A capture ends the turn after one move: a one-move turn, complete.
    let mut g = game(Variant::TwoMove, None);
    for (by, m) in [(W, "e2e4"), (B, "d7d5")] {
        g.apply(by, &mv(m), 1).unwrap();
    }
    g.apply(B, &mv("g8f6"), 1).unwrap();
    g.apply(W, &mv("e4d5"), 2).unwrap();
    let s = g.state(StateKind::GameState, 3);
    let last = s.turns.as_ref().unwrap().last().unwrap().clone();
    assert_eq!((last.kind, last.complete), (TurnKind::Single, true));
}

#[test]
fn a_correspondence_deadline_runs_per_turn_and_loses_on_time() {
    use crate::game::record::DAY_MS;
    let mut g = game(Variant::Chess, None);
    g.meta.days = Some(2);
    g.begin(1_000);
    assert_eq!(g.flag_at(), Some(1_000 + 2 * DAY_MS));
    g.apply(W, &mv("e2e4"), 5_000).unwrap();
    assert_eq!(
        g.meta.deadline,
        Some(5_000 + 2 * DAY_MS),
        "a new deadline per turn"
    );
    g.apply(B, &mv("e7e5"), 6_000).unwrap();
    // Not yet: nothing happens; at the deadline the side to move (White) loses on time.
    g.apply(Actor::Server, &Action::Flag, 6_000 + 2 * DAY_MS - 1)
        .unwrap();
    assert_eq!(g.status, Status::Started);
    g.apply(Actor::Server, &Action::Flag, 6_000 + 2 * DAY_MS)
        .unwrap();
    assert_eq!(g.status, Status::Finished);
    let s = g.state(StateKind::GameState, 6_000 + 2 * DAY_MS);
    assert_eq!(s.reason, Some(crate::game::Reason::Timeout));
    assert_eq!(s.winner, Some(crate::game::Side::Black));
    assert_eq!((g.flag_at(), s.deadline_ms), (None, None));
}

#[test]
fn the_checked_king_is_found_between_the_halves_of_a_double_move() {
    use crate::game::view::checked_side;
    let fen = "r2q3k/ppp3p1/2np2Pp/5b2/3P1B2/1Q4P1/PPP2P2/3R2K1 w - - 0 1 WB";
    let pos = Position::from_fen(Variant::DoubleMove, fen).unwrap();
    assert_eq!(checked_side(&pos), None);
    let mut g = rules::Game::new(pos);
    let m = rules::notation::parse_uci(g.position(), "b3g8").unwrap();
    g.play(m.as_double_start()).unwrap();
    // White is still to move (the second half); Black's king is the one in check.
    assert_eq!(g.position().turn(), Color::White);
    assert_eq!(checked_side(g.position()), Some(Side::Black));
    let p = Position::from_fen(Variant::Chess, "4k3/8/8/8/8/8/8/4R2K b - - 0 1").unwrap();
    assert_eq!(checked_side(&p), Some(Side::Black));
}
