//! A served game: what is stored ([`GameData`]), the live game built from it ([`Live`]), and every
//! change a player can make (moves, clocks, takebacks, draws, resignation, abort). The rules crate
//! decides legality and results; this module adds who may act, the clocks and the bookkeeping.

use crate::error::ApiError;
use rules::notation::{parse_uci, san};
use rules::outcome::{can_win, DrawReason, Outcome, WinReason};
use rules::{Color, Game, Move, Phase, Position, Variant};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::Instant;

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A game against a person that waits for the second player.
    Waiting,
    Started,
    Finished,
    Aborted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Waiting => "waiting",
            Status::Started => "started",
            Status::Finished => "finished",
            Status::Aborted => "aborted",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClockData {
    pub limit_ms: i64,
    pub increment_ms: i64,
    /// Time left per side (white, black) as of the last move or event.
    pub remaining_ms: [i64; 2],
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TakebackRecord {
    pub by: String,
    /// Number of moves before and after.
    pub from_ply: usize,
    pub to_ply: usize,
    pub at_ms: i64,
}

/// A result decided off the board, stored by name.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Imposed {
    pub winner: Option<String>,
    pub reason: String,
}

/// Everything stored about a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameData {
    pub id: String,
    pub variant: String,
    pub initial_fen: String,
    /// Moves in UCI; a `*` suffix marks the first half of a Double Move.
    pub moves: Vec<String>,
    pub status: Status,
    pub imposed: Option<Imposed>,
    /// `Some(level)` for a game against the engine.
    pub engine_level: Option<u8>,
    /// The engine's colour in a game against the engine.
    pub engine_color: Option<String>,
    /// Player tokens (white, black); `None` for the engine or a seat not yet taken.
    pub tokens: [Option<String>; 2],
    pub invite: Option<String>,
    /// Listed in the open games with its invite, so that anyone may join.
    pub public: bool,
    pub clock: Option<ClockData>,
    /// Clock of the mover after each completed turn (for PGN `%clk`).
    pub turn_clocks: Vec<Option<i64>>,
    pub draw_offer: Option<String>,
    pub takeback_offer: Option<String>,
    pub takebacks: Vec<TakebackRecord>,
    pub takebacks_used: [u32; 2],
    pub created_at: i64,
    pub updated_at: i64,
}

pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

pub fn parse_color(s: &str) -> Option<Color> {
    match s {
        "white" => Some(Color::White),
        "black" => Some(Color::Black),
        _ => None,
    }
}

pub fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Start => "start",
        Phase::Response => "response",
        Phase::Second => "second",
    }
}

fn reason_code(o: &Outcome) -> &'static str {
    match o {
        Outcome::Win { reason, .. } => match reason {
            WinReason::Checkmate => "checkmate",
            WinReason::KingCaptured => "king_captured",
            WinReason::Resignation => "resignation",
            WinReason::Timeout => "timeout",
        },
        Outcome::Draw(r) => match r {
            DrawReason::Stalemate => "stalemate",
            DrawReason::DeadPosition => "dead_position",
            DrawReason::FivefoldRepetition => "fivefold_repetition",
            DrawReason::SeventyFiveMoveRule => "seventy_five_move_rule",
            DrawReason::ThreefoldRepetition => "threefold_repetition",
            DrawReason::FiftyMoveRule => "fifty_move_rule",
            DrawReason::Agreement => "agreement",
            DrawReason::TimeoutVsInsufficientMaterial => "timeout_vs_insufficient_material",
        },
    }
}

fn outcome_from(i: &Imposed) -> Option<Outcome> {
    let win = |reason| {
        Some(Outcome::Win {
            winner: parse_color(i.winner.as_deref()?)?,
            reason,
        })
    };
    let draw = |r| Some(Outcome::Draw(r));
    match i.reason.as_str() {
        "checkmate" => win(WinReason::Checkmate),
        "king_captured" => win(WinReason::KingCaptured),
        "resignation" => win(WinReason::Resignation),
        "timeout" => win(WinReason::Timeout),
        "stalemate" => draw(DrawReason::Stalemate),
        "dead_position" => draw(DrawReason::DeadPosition),
        "fivefold_repetition" => draw(DrawReason::FivefoldRepetition),
        "seventy_five_move_rule" => draw(DrawReason::SeventyFiveMoveRule),
        "threefold_repetition" => draw(DrawReason::ThreefoldRepetition),
        "fifty_move_rule" => draw(DrawReason::FiftyMoveRule),
        "agreement" => draw(DrawReason::Agreement),
        "timeout_vs_insufficient_material" => draw(DrawReason::TimeoutVsInsufficientMaterial),
        _ => None,
    }
}

fn imposed_of(o: &Outcome) -> Imposed {
    Imposed {
        winner: o.winner().map(|c| color_name(c).to_string()),
        reason: reason_code(o).to_string(),
    }
}

fn encode_move(m: Move) -> String {
    if m.starts_double() {
        format!("{}*", m.uci())
    } else {
        m.uci()
    }
}

/// A player's action on a game.
pub enum Play {
    Move { uci: String, double: bool },
    Turn(String),
}

/// A game in memory: its stored record and the rules' game built from it.
#[derive(Clone)]
pub struct Live {
    pub data: GameData,
    pub game: Game,
    /// When the side to move began thinking (since the last move or since loading).
    pub since: Instant,
    /// Bumped on every change, so that an engine reply computed for an old state is dropped.
    pub generation: u64,
}

impl Live {
    /// Rebuilds a game from its record (at start-up or after creation).
    pub fn from_data(data: GameData) -> Result<Live, String> {
        let variant: Variant = data.variant.parse().map_err(|e| format!("{e}"))?;
        let start = Position::from_fen(variant, &data.initial_fen).map_err(|e| e.to_string())?;
        let mut game = Game::new(start);
        for text in &data.moves {
            let (uci, double) = match text.strip_suffix('*') {
                Some(u) => (u, true),
                None => (text.as_str(), false),
            };
            let mv = parse_uci(game.position(), uci).map_err(|e| e.0)?;
            let mv = if double { mv.as_double_start() } else { mv };
            game.play(mv)
                .map_err(|e| format!("stored move {text}: {e}"))?;
        }
        if let Some(i) = &data.imposed {
            if let Some(o) = outcome_from(i) {
                game.set_outcome(o);
            }
        }
        Ok(Live {
            data,
            game,
            since: Instant::now(),
            generation: 0,
        })
    }

    pub fn variant(&self) -> Variant {
        self.game.variant()
    }

    pub fn color_of_token(&self, token: &str) -> Option<Color> {
        for c in [Color::White, Color::Black] {
            if let Some(t) = &self.data.tokens[c.index()] {
                if ct_eq(t.as_bytes(), token.as_bytes()) {
                    return Some(c);
                }
            }
        }
        None
    }

    pub fn engine_color(&self) -> Option<Color> {
        self.data.engine_color.as_deref().and_then(parse_color)
    }

    /// Whether it is the engine's turn in a running game.
    pub fn engine_to_move(&self) -> bool {
        self.data.status == Status::Started
            && self.engine_color() == Some(self.game.position().turn())
    }

    /// Turns each side has completed.
    pub fn completed_turns(&self) -> [u32; 2] {
        let mut n = [0, 0];
        let turns = self.game.turns();
        let open = self.game.position().phase() == Phase::Second;
        for (i, t) in turns.iter().enumerate() {
            if !(open && i + 1 == turns.len()) {
                n[t.color.index()] += 1;
            }
        }
        n
    }

    /// A side's clock runs from its second turn on (lichess style).
    fn clock_runs_for(&self, c: Color) -> bool {
        self.data.clock.is_some()
            && self.data.status == Status::Started
            && self.completed_turns()[c.index()] >= 1
    }

    /// The side whose clock is running now, if any.
    pub fn running_clock(&self) -> Option<Color> {
        let c = self.game.position().turn();
        (self.game.outcome().is_none() && self.clock_runs_for(c)).then_some(c)
    }

    /// Time left per side, counting the running clock up to now.
    pub fn clock_now(&self) -> Option<[i64; 2]> {
        let clock = self.data.clock.as_ref()?;
        let mut r = clock.remaining_ms;
        if let Some(c) = self.running_clock() {
            r[c.index()] -= self.since.elapsed().as_millis() as i64;
        }
        Some(r)
    }

    fn touch(&mut self) {
        self.data.updated_at = now_ms();
        self.generation += 1;
    }

    fn finish(&mut self, o: Outcome, imposed: bool) {
        if imposed {
            self.game.set_outcome(o);
            self.data.imposed = Some(imposed_of(&o));
        }
        self.data.status = Status::Finished;
        self.data.draw_offer = None;
        self.data.takeback_offer = None;
    }

    /// Ends the game on time if the side to move has run out. Returns whether it did.
    pub fn check_flag(&mut self) -> bool {
        let Some(c) = self.running_clock() else {
            return false;
        };
        let left = self.clock_now().map_or(1, |r| r[c.index()]);
        if left > 0 {
            return false;
        }
        if let Some(clock) = self.data.clock.as_mut() {
            clock.remaining_ms[c.index()] = 0;
        }
        let o = if can_win(self.game.position(), c.other()) {
            Outcome::Win {
                winner: c.other(),
                reason: WinReason::Timeout,
            }
        } else {
            Outcome::Draw(DrawReason::TimeoutVsInsufficientMaterial)
        };
        self.finish(o, true);
        self.touch();
        true
    }

    fn require_running(&self) -> Result<(), ApiError> {
        match self.data.status {
            Status::Started => Ok(()),
            Status::Waiting => Err(ApiError::conflict("the game waits for a second player")),
            Status::Finished | Status::Aborted => Err(ApiError::conflict(format!(
                "the game is over: {}",
                self.outcome_text()
            ))),
        }
    }

    fn outcome_text(&self) -> String {
        match (self.data.status, self.game.outcome()) {
            (Status::Aborted, _) => "aborted".into(),
            (_, Some(o)) => o.describe(self.variant()),
            _ => "in progress".into(),
        }
    }

    /// Plays a move or a whole turn for `by`.
    pub fn play(&mut self, by: Color, play: &Play) -> Result<(), ApiError> {
        self.require_running()?;
        let pos = *self.game.position();
        if pos.turn() != by {
            return Err(ApiError::conflict(format!(
                "it is not your turn: {} is to move",
                color_name(pos.turn())
            )));
        }
        if self.check_flag() {
            return Err(ApiError::conflict(format!(
                "the game is over: {}",
                self.outcome_text()
            )));
        }
        let before = self.game.moves().len();
        let mut next = self.game.clone();
        match play {
            Play::Move { uci, double } => {
                let mv = parse_uci(&pos, uci).map_err(|e| ApiError::bad_request(e.0))?;
                let mv = if *double {
                    if pos.variant() != Variant::DoubleMove {
                        return Err(ApiError::bad_request(
                            "\"double\" is only for Double Move Chess",
                        ));
                    }
                    if pos.phase() != Phase::Start {
                        return Err(ApiError::bad_request(
                            "a Double Move can only begin on the first move of a turn",
                        ));
                    }
                    mv.as_double_start()
                } else {
                    mv
                };
                next.play(mv).map_err(|reason| {
                    ApiError::bad_request(format!("illegal move {}: {reason}", uci.trim()))
                })?;
            }
            Play::Turn(text) => {
                next.play_turn_text(text, false)
                    .map_err(|e| ApiError::bad_request(format!("illegal turn: {e}")))?;
            }
        }
        // The clock: charge the thinking time of this move; the increment once the turn passes.
        let charged = self.clock_runs_for(by);
        let elapsed = self.since.elapsed().as_millis() as i64;
        self.game = next;
        for &m in &self.game.moves()[before..] {
            self.data.moves.push(encode_move(m));
        }
        self.since = Instant::now();
        let after = *self.game.position();
        let passed = after.turn() != by || self.game.outcome().is_some();
        let mut left = None;
        if let Some(clock) = self.data.clock.as_mut() {
            if charged {
                clock.remaining_ms[by.index()] -= elapsed;
                if passed {
                    clock.remaining_ms[by.index()] += clock.increment_ms;
                }
            }
            left = Some(clock.remaining_ms[by.index()]);
        }
        self.data.takeback_offer = None;
        if passed {
            let n = self.completed_turns();
            let total = (n[0] + n[1]) as usize;
            self.data.turn_clocks.resize(total.saturating_sub(1), None);
            self.data.turn_clocks.push(left);
            if self.data.draw_offer.as_deref() == Some(color_name(by.other())) {
                self.data.draw_offer = None;
            }
        }
        if let Some(o) = self.game.outcome() {
            self.finish(o, false);
        }
        self.touch();
        Ok(())
    }

    pub fn resign(&mut self, by: Color) -> Result<(), ApiError> {
        self.require_running()?;
        self.finish(
            Outcome::Win {
                winner: by.other(),
                reason: WinReason::Resignation,
            },
            true,
        );
        self.touch();
        Ok(())
    }

    /// Abort: only before both sides have completed a turn.
    pub fn abort(&mut self, _by: Color) -> Result<(), ApiError> {
        if !matches!(self.data.status, Status::Started | Status::Waiting) {
            return Err(ApiError::conflict("the game is already over"));
        }
        let n = self.completed_turns();
        if n[0] >= 1 && n[1] >= 1 {
            return Err(ApiError::conflict(
                "a game can only be aborted before both sides have played a turn",
            ));
        }
        self.data.status = Status::Aborted;
        self.data.draw_offer = None;
        self.data.takeback_offer = None;
        self.touch();
        Ok(())
    }

    pub fn draw(&mut self, by: Color, action: &str) -> Result<(), ApiError> {
        self.require_running()?;
        let me = color_name(by);
        let them = color_name(by.other());
        match action {
            "offer" | "accept" if self.data.draw_offer.as_deref() == Some(them) => {
                self.finish(Outcome::Draw(DrawReason::Agreement), true);
            }
            "offer" if self.engine_color().is_some() => {
                return Err(ApiError::conflict("the engine declines draw offers"));
            }
            "offer" => self.data.draw_offer = Some(me.to_string()),
            "accept" => return Err(ApiError::conflict("there is no draw offer to accept")),
            "decline" if self.data.draw_offer.as_deref() == Some(them) => {
                self.data.draw_offer = None
            }
            "decline" => return Err(ApiError::conflict("there is no draw offer to decline")),
            "claim" => match self.game.claimable_draw() {
                Some(r) if self.game.position().turn() == by => {
                    self.finish(Outcome::Draw(r), true)
                }
                Some(_) => {
                    return Err(ApiError::conflict(
                        "only the player to move may claim a draw",
                    ))
                }
                None => {
                    return Err(ApiError::conflict(
                        "no draw can be claimed now (neither threefold repetition nor the fifty-move rule)",
                    ))
                }
            },
            _ => return Err(ApiError::not_found(format!("unknown draw action '{action}'"))),
        }
        self.touch();
        Ok(())
    }

    pub fn takeback(&mut self, by: Color, action: &str) -> Result<(), ApiError> {
        self.require_running()?;
        let me = color_name(by);
        let them = color_name(by.other());
        match action {
            "propose" if self.engine_color().is_some() => self.take_back_for(by)?,
            "propose" | "accept" if self.data.takeback_offer.as_deref() == Some(them) => {
                self.take_back_for(by.other())?
            }
            "propose" => {
                self.target_ply(by)?;
                self.data.takeback_offer = Some(me.to_string())
            }
            "accept" => {
                return Err(ApiError::conflict(
                    "there is no takeback proposal to accept",
                ))
            }
            "decline" if self.data.takeback_offer.as_deref() == Some(them) => {
                self.data.takeback_offer = None
            }
            "decline" => {
                return Err(ApiError::conflict(
                    "there is no takeback proposal to decline",
                ))
            }
            _ => {
                return Err(ApiError::not_found(format!(
                    "unknown takeback action '{action}'"
                )))
            }
        }
        self.touch();
        Ok(())
    }

    /// The number of moves at the start of `c`'s last turn.
    fn target_ply(&self, c: Color) -> Result<usize, ApiError> {
        self.game
            .turns()
            .iter()
            .rev()
            .find(|t| t.color == c)
            .map(|t| t.start)
            .ok_or_else(|| ApiError::conflict("you have no turn to take back"))
    }

    fn take_back_for(&mut self, c: Color) -> Result<(), ApiError> {
        let to = self.target_ply(c)?;
        let from = self.game.moves().len();
        self.game.undo(from - to);
        self.data.moves.truncate(to);
        let n = self.completed_turns();
        self.data.turn_clocks.truncate((n[0] + n[1]) as usize);
        self.data.takebacks.push(TakebackRecord {
            by: color_name(c).to_string(),
            from_ply: from,
            to_ply: to,
            at_ms: now_ms(),
        });
        self.data.takebacks_used[c.index()] += 1;
        self.data.takeback_offer = None;
        self.data.draw_offer = None;
        self.since = Instant::now();
        Ok(())
    }

    /// The full state sent to clients.
    pub fn state(&self, kind: &str) -> Value {
        let pos = self.game.position();
        let variant = self.variant();
        let turns = self.game.turns();
        let open = pos.phase() == Phase::Second;
        let turn_list: Vec<Value> = turns
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let start = &self.game.positions()[t.start];
                let kind = turn_kind(variant, start, t.moves.len());
                json!({
                    "color": color_name(t.color),
                    "fullmove": t.fullmove,
                    "uci": t.moves.iter().map(|m| m.uci()).collect::<Vec<_>>().join(","),
                    "san": self.game.turn_san(t),
                    "kind": kind,
                    "complete": !(open && i + 1 == turns.len()),
                    "clock_ms": self.data.turn_clocks.get(i).copied().flatten(),
                })
            })
            .collect();
        let outcome = if self.data.status == Status::Aborted {
            None
        } else {
            self.game.outcome()
        };
        let clock = self.data.clock.as_ref().map(|c| {
            let now = self.clock_now().unwrap_or(c.remaining_ms);
            json!({
                "limit_ms": c.limit_ms,
                "increment_ms": c.increment_ms,
                "white_ms": now[0].max(0),
                "black_ms": now[1].max(0),
                "running": self.running_clock().map(color_name),
            })
        });
        let st = pos.state();
        let double_move = (variant == Variant::DoubleMove)
            .then(|| json!({"white": st.double_move[0], "black": st.double_move[1]}));
        let legal = if self.data.status == Status::Started && outcome.is_none() {
            legal_json(pos)
        } else {
            json!({"dests": {}, "promotions": []})
        };
        let who = |c: Color| {
            if self.engine_color() == Some(c) {
                json!({"kind": "engine", "level": self.data.engine_level})
            } else {
                json!({"kind": "human", "joined": self.data.tokens[c.index()].is_some()})
            }
        };
        json!({
            "type": kind,
            "id": self.data.id,
            "variant": variant.name(),
            "initial_fen": self.data.initial_fen,
            "fen": pos.fen(),
            "turn": color_name(pos.turn()),
            "phase": phase_name(pos.phase()),
            "fullmove": pos.fullmove(),
            "check": pos.in_check(),
            "white": who(Color::White),
            "black": who(Color::Black),
            "moves": self.data.moves.iter().map(|m| m.trim_end_matches('*')).collect::<Vec<_>>(),
            "turns": turn_list,
            "status": self.data.status.as_str(),
            "result": outcome.map(|o| o.result()).or((self.data.status == Status::Aborted).then_some("*")),
            "winner": outcome.and_then(|o| o.winner()).map(color_name),
            "reason": outcome.map(|o| reason_code(&o)).or((self.data.status == Status::Aborted).then_some("aborted")),
            "reason_text": outcome.map(|o| o.describe(variant)),
            "clock": clock,
            "offers": {"draw": self.data.draw_offer, "takeback": self.data.takeback_offer},
            "claimable_draw": self.game.claimable_draw().map(|r| reason_code(&Outcome::Draw(r))),
            "takebacks": self.data.takebacks,
            "takebacks_used": {"white": self.data.takebacks_used[0], "black": self.data.takebacks_used[1]},
            "double_move": double_move,
            "legal": legal,
            "created_at": self.data.created_at,
            "updated_at": self.data.updated_at,
        })
    }

    /// A short summary for game lists.
    pub fn summary(&self) -> Value {
        let mut s = self.state("summary");
        if let Value::Object(m) = &mut s {
            for k in ["legal", "turns", "takebacks"] {
                m.remove(k);
            }
            if self.data.public && self.data.status == Status::Waiting {
                m.insert("invite".into(), json!(self.data.invite));
            }
        }
        s
    }
}

fn turn_kind(variant: Variant, start: &Position, n: usize) -> &'static str {
    match variant {
        Variant::Chess => "normal",
        Variant::TwoMove if start.phase() == Phase::Response => "response",
        Variant::TwoMove if n == 1 => "single",
        Variant::TwoMove => "normal",
        Variant::DoubleMove | Variant::Twinmove if n == 2 => "double",
        _ => "normal",
    }
}

/// Legal destinations by origin square, for the side to move (the second half's when mid-turn).
pub fn legal_json(pos: &Position) -> Value {
    let mut dests: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut double: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut promos: Vec<String> = Vec::new();
    for &m in pos.legal_moves().iter() {
        let map = if m.starts_double() {
            &mut double
        } else {
            &mut dests
        };
        let e = map.entry(m.from().to_string()).or_default();
        let to = m.to().to_string();
        if !e.contains(&to) {
            e.push(to);
        }
        if m.promotion().is_some() {
            let p = format!("{}{}", m.from(), m.to());
            if !promos.contains(&p) {
                promos.push(p);
            }
        }
    }
    let mut out = Map::new();
    out.insert("dests".into(), json!(dests));
    if pos.variant() == Variant::DoubleMove && pos.phase() == Phase::Start {
        out.insert("double_dests".into(), json!(double));
    }
    out.insert("promotions".into(), json!(promos));
    Value::Object(out)
}

/// SAN of each move from a position (for imported games).
pub fn san_of(pos: &Position, m: Move) -> String {
    san(pos, m)
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
