//! One game between two engines, with our rules crate as the arbiter: each `bestmove` turn is played
//! with `Game::play_turn_text`; Fischer clocks (or a node count per turn); every way a game can end.

use super::engine_proc::{Engine, EngineSpec, Fault};
use super::openings::Opening;
use rules::game::turn_uci;
use rules::outcome::can_win;
use rules::{Color, DrawReason, Game, Outcome, Position, Variant, WinReason};
use std::time::Duration;

/// How long each side may think.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limits {
    /// Fischer: `base` each, `inc` added after each turn; `margin` is forgiven past zero.
    Clock {
        base: Duration,
        inc: Duration,
        margin: Duration,
    },
    /// `go nodes N` each turn; an engine that does not answer within `timeout` loses.
    Nodes { nodes: u64, timeout: Duration },
}

impl Limits {
    /// `10+0.1` (seconds, increment per turn) or `10`.
    pub fn parse_tc(text: &str, margin: Duration) -> Result<Limits, String> {
        let bad = || format!("--tc expects BASE+INC in seconds (e.g. 10+0.1), not '{text}'");
        let (b, i) = text.split_once('+').unwrap_or((text, "0"));
        let secs = |s: &str| -> Result<Duration, String> {
            let x: f64 = s.trim().parse().map_err(|_| bad())?;
            if !x.is_finite() || x < 0.0 {
                return Err(bad());
            }
            Ok(Duration::from_secs_f64(x))
        };
        let base = secs(b)?;
        if base.is_zero() {
            return Err(bad());
        }
        Ok(Limits::Clock {
            base,
            inc: secs(i)?,
            margin,
        })
    }

    /// The PGN TimeControl tag: `10+0.1`, or `-` for a node limit.
    pub fn pgn_tag(&self) -> String {
        match self {
            Limits::Clock { base, inc, .. } => {
                let f = |d: &Duration| {
                    let s = format!("{:.3}", d.as_secs_f64());
                    s.trim_end_matches('0').trim_end_matches('.').to_string()
                };
                if inc.is_zero() {
                    f(base)
                } else {
                    format!("{}+{}", f(base), f(inc))
                }
            }
            Limits::Nodes { .. } => "-".into(),
        }
    }
}

/// Why a game ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Termination {
    /// By the rules (checkmate, stalemate, king capture, fivefold, 75 rule, dead position).
    Rules(Outcome),
    /// A draw the side to move could claim (threefold, fifty), adjudicated.
    ClaimableDraw(DrawReason),
    /// The length limit in turns, adjudicated a draw.
    MaxLength(usize),
    /// The flag fell; a draw (`drawn`) if the opponent could not win.
    Time {
        loser: Color,
        drawn: bool,
        detail: String,
    },
    /// An illegal or unreadable turn.
    Illegal { loser: Color, detail: String },
    /// The engine crashed, closed its pipes, or did not answer.
    Crash { loser: Color, detail: String },
}

impl Termination {
    /// The PGN Termination tag value.
    pub fn pgn_tag(&self) -> &'static str {
        match self {
            Termination::Rules(_) => "normal",
            Termination::ClaimableDraw(_) | Termination::MaxLength(_) => "adjudication",
            Termination::Time { .. } => "time forfeit",
            Termination::Illegal { .. } => "rules infraction",
            Termination::Crash { .. } => "abandoned",
        }
    }

    /// The engine at fault, for the loss counts: `(loser, kind)` with kind time/illegal/crash.
    pub fn fault(&self) -> Option<(Color, &'static str)> {
        match self {
            Termination::Time {
                loser,
                drawn: false,
                ..
            } => Some((*loser, "time")),
            Termination::Illegal { loser, .. } => Some((*loser, "illegal")),
            Termination::Crash { loser, .. } => Some((*loser, "crash")),
            _ => None,
        }
    }

    /// A short name for summary counts.
    pub fn kind(&self, variant: Variant) -> String {
        match self {
            Termination::Rules(Outcome::Win { reason, .. }) => reason.describe().into(),
            Termination::Rules(Outcome::Draw(r)) | Termination::ClaimableDraw(r) => {
                r.describe(variant).into()
            }
            Termination::MaxLength(_) => "maximum length".into(),
            Termination::Time { drawn: true, .. } => DrawReason::TimeoutVsInsufficientMaterial
                .describe(variant)
                .into(),
            Termination::Time { .. } => "time forfeit".into(),
            Termination::Illegal { .. } => "illegal turn".into(),
            Termination::Crash { .. } => "crash / no answer".into(),
        }
    }
}

/// A finished game.
pub struct Played {
    pub game: Game,
    pub termination: Termination,
    /// The full sentence for the PGN comment and messages.
    pub detail: String,
    /// One entry per turn of `game`: for the turns the engines played, what the mover reported
    /// (score/depth and time used, see `Report::comment`); `None` for the opening's turns.
    pub notes: Vec<Option<String>>,
}

/// The two engines of a worker: index 0 is A, 1 is B; `None` means (re)start before the next game.
pub struct Seats {
    pub specs: [EngineSpec; 2],
    pub engines: [Option<Engine>; 2],
    pub variant: Variant,
}

impl Seats {
    pub fn new(specs: [EngineSpec; 2], variant: Variant) -> Seats {
        Seats {
            specs,
            engines: [None, None],
            variant,
        }
    }

    fn ready(&mut self, i: usize) -> Result<&mut Engine, String> {
        if self.engines[i].is_none() {
            self.engines[i] = Some(Engine::start(&self.specs[i], self.variant.name())?);
        } else if let Err(f) = self.engines[i].as_mut().unwrap().new_game() {
            self.engines[i] = None;
            return Err(match f {
                Fault::Timeout => "it did not answer isready after ucinewgame".into(),
                Fault::Crash(c) => c,
            });
        }
        Ok(self.engines[i].as_mut().unwrap())
    }

    pub fn quit(&mut self) {
        for e in &mut self.engines {
            if let Some(e) = e.take() {
                e.quit();
            }
        }
    }
}

fn position_command(game: &Game) -> String {
    let mut s = if *game.initial() == Position::start(game.variant()) {
        "position startpos".to_string()
    } else {
        format!("position fen {}", game.initial().fen())
    };
    let turns = game.turns();
    if !turns.is_empty() {
        s += " moves";
        for t in &turns {
            s.push(' ');
            s += &turn_uci(&t.moves);
        }
    }
    s
}

fn ms(d: Duration) -> u128 {
    d.as_millis()
}

/// Plays one game; `a_white` says whether engine A (seat 0) has White.
pub fn play_game(
    seats: &mut Seats,
    opening: &Opening,
    a_white: bool,
    limits: Limits,
    max_turns: usize,
) -> Played {
    let game = opening
        .game(seats.variant)
        .expect("openings are checked when loaded");
    let mut notes = vec![None; game.turns().len()];
    let mut played = play_from(seats, game, a_white, limits, max_turns, &mut notes);
    notes.resize(played.game.turns().len(), None);
    played.notes = notes;
    played
}

/// Plays `game` on to its end; each turn an engine plays adds its note to `notes`.
fn play_from(
    seats: &mut Seats,
    mut game: Game,
    a_white: bool,
    limits: Limits,
    max_turns: usize,
    notes: &mut Vec<Option<String>>,
) -> Played {
    let variant = seats.variant;
    let seat = |c: Color| usize::from((c == Color::White) != a_white);
    let end = |mut game: Game, outcome: Option<Outcome>, t: Termination, detail: String| {
        if let Some(o) = outcome {
            game.set_outcome(o);
        }
        Played {
            game,
            termination: t,
            detail,
            notes: Vec::new(),
        }
    };
    let loses = |c: Color| Outcome::Win {
        winner: c.other(),
        reason: WinReason::Resignation,
    };
    // Start (or reset) both engines; one that fails loses.
    for c in [Color::White, Color::Black] {
        if let Err(e) = seats.ready(seat(c)) {
            let detail = format!("{} engine failed to start a game: {e}", c.name());
            return end(
                game,
                Some(loses(c)),
                Termination::Crash {
                    loser: c,
                    detail: detail.clone(),
                },
                detail,
            );
        }
    }
    let mut clock = match limits {
        Limits::Clock { base, .. } => [base, base],
        Limits::Nodes { .. } => [Duration::ZERO; 2],
    };
    loop {
        if let Some(o) = game.outcome() {
            let d = o.describe(variant);
            return end(game, None, Termination::Rules(o), d);
        }
        if let Some(r) = game.claimable_draw() {
            let d = format!("draw by {} (adjudicated)", r.describe(variant));
            return end(
                game,
                Some(Outcome::Draw(r)),
                Termination::ClaimableDraw(r),
                d,
            );
        }
        if game.turns().len() >= max_turns {
            let d = format!("draw: adjudicated after {max_turns} turns");
            return end(
                game,
                Some(Outcome::Draw(DrawReason::Agreement)),
                Termination::MaxLength(max_turns),
                d,
            );
        }
        let side = game.position().turn();
        let ci = usize::from(side == Color::Black);
        let pos_cmd = position_command(&game);
        let (go, limit) = match limits {
            Limits::Clock { inc, margin, .. } => (
                format!(
                    "go wtime {} btime {} winc {} binc {}",
                    ms(clock[0]),
                    ms(clock[1]),
                    ms(inc),
                    ms(inc)
                ),
                clock[ci] + margin,
            ),
            Limits::Nodes { nodes, timeout } => (format!("go nodes {nodes}"), timeout),
        };
        let engine = seats.engines[seat(side)]
            .as_mut()
            .expect("engines are started");
        let (answer, used) = engine.think(&pos_cmd, &go, limit);
        let flag = |game: Game, detail: String| {
            let pos = *game.position();
            let (o, d) = if can_win(&pos, side.other()) {
                (
                    Outcome::Win {
                        winner: side.other(),
                        reason: WinReason::Timeout,
                    },
                    format!("{} loses on time: {detail}", side.name()),
                )
            } else {
                (
                    Outcome::Draw(DrawReason::TimeoutVsInsufficientMaterial),
                    format!(
                        "draw: {} ran out of time ({detail}) but {} cannot win",
                        side.name(),
                        side.other().name()
                    ),
                )
            };
            end(
                game,
                Some(o),
                Termination::Time {
                    loser: side,
                    drawn: o.winner().is_none(),
                    detail: d.clone(),
                },
                d,
            )
        };
        let thought = match answer {
            Ok(t) => t,
            Err(Fault::Timeout) => {
                seats.engines[seat(side)] = None; // still thinking: restart it for the next game
                return match limits {
                    Limits::Clock { .. } => {
                        flag(game, format!("no bestmove within its {} ms", ms(limit)))
                    }
                    Limits::Nodes { .. } => {
                        let d = format!(
                            "{} loses: no bestmove within {} s",
                            side.name(),
                            limit.as_secs_f64()
                        );
                        end(
                            game,
                            Some(loses(side)),
                            Termination::Crash {
                                loser: side,
                                detail: d.clone(),
                            },
                            d,
                        )
                    }
                };
            }
            Err(Fault::Crash(c)) => {
                seats.engines[seat(side)] = None;
                let d = format!("{} loses: its engine crashed ({c})", side.name());
                return end(
                    game,
                    Some(loses(side)),
                    Termination::Crash {
                        loser: side,
                        detail: d.clone(),
                    },
                    d,
                );
            }
        };
        if let Limits::Clock { inc, margin, .. } = limits {
            if used > clock[ci] + margin {
                return flag(
                    game,
                    format!("used {} ms of {} ms", ms(used), ms(clock[ci])),
                );
            }
            clock[ci] = clock[ci].saturating_sub(used) + inc;
        }
        let turn = thought.turn;
        if let Err(e) = game.play_turn_text(&turn, false) {
            let d = if turn.is_empty() {
                format!("{} loses: bestmove without a turn", side.name())
            } else {
                format!("{} loses by an illegal turn: {e}", side.name())
            };
            return end(
                game,
                Some(loses(side)),
                Termination::Illegal {
                    loser: side,
                    detail: d.clone(),
                },
                d,
            );
        }
        notes.push(Some(thought.report.comment(used)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_controls() {
        let m = Duration::ZERO;
        assert_eq!(
            Limits::parse_tc("10+0.1", m).unwrap(),
            Limits::Clock {
                base: Duration::from_secs(10),
                inc: Duration::from_millis(100),
                margin: m
            }
        );
        assert_eq!(Limits::parse_tc("10+0.1", m).unwrap().pgn_tag(), "10+0.1");
        assert_eq!(Limits::parse_tc("1.5", m).unwrap().pgn_tag(), "1.5");
        assert_eq!(Limits::parse_tc("60+1", m).unwrap().pgn_tag(), "60+1");
        assert!(Limits::parse_tc("0+1", m).is_err());
        assert!(Limits::parse_tc("ab", m).is_err());
        assert!(Limits::parse_tc("5+-1", m).is_err());
    }

    #[test]
    fn position_commands() {
        let mut g = Game::new(Position::start(Variant::TwoMove));
        assert_eq!(position_command(&g), "position startpos");
        g.play_turn_text("g1f3", false).unwrap();
        g.play_turn_text("e7e6,d7d5", false).unwrap();
        assert_eq!(
            position_command(&g),
            "position startpos moves g1f3 e7e6,d7d5"
        );
        let f = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1";
        let g = Game::new(Position::from_fen(Variant::Chess, f).unwrap());
        assert_eq!(position_command(&g), format!("position fen {f}"));
    }
}
