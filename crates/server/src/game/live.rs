//! A game being played: the rules' [`Game`] rebuilt from the stored moves, the stored [`Meta`], and
//! [`Live::apply`], the one place where an [`Action`] changes a game (who may act, clocks, offers,
//! takebacks, results). Changes are made on a copy; [`Live::change_since`] gives what to store.

use super::action::{Action, Actor, DrawAction, MoveAction, TakebackAction};
use super::clock::Clock;
use super::error::GameError;
use super::record::{EngineSeat, Imposed, Meta, PlayerRef, Rematch, Side, TakebackRecord, DAY_MS};
use crate::store::{Change, GameRow, MoveRow, Status, StoredGame};
use rules::notation::{parse_uci, san};
use rules::outcome::{can_win, DrawReason, Outcome, WinReason};
use rules::{Color, Game, Move, Phase, Position, Variant};

/// A game in memory.
#[derive(Clone, Debug)]
pub struct Live {
    pub id: String,
    pub status: Status,
    pub created_at: i64,
    pub updated_at: i64,
    /// The stored version this state is (1 when created, +1 per change).
    pub version: i64,
    pub initial_fen: String,
    pub meta: Meta,
    pub game: Game,
    /// The stored move rows, one per move of `game`.
    pub moves: Vec<MoveRow>,
    /// SAN of each move, computed once when it is played (a state lists every turn's SAN, and SAN
    /// needs move generation: recomputing it for the whole game on every change costs O(game)).
    pub san: Vec<String>,
}

fn encode_move(m: Move) -> String {
    if m.starts_double() {
        format!("{}*", m.uci())
    } else {
        m.uci()
    }
}

impl Live {
    /// A new game (version 1).
    pub fn new(id: String, start: Position, meta: Meta, status: Status, now: i64) -> Live {
        Live {
            id,
            status,
            created_at: now,
            updated_at: now,
            version: 1,
            initial_fen: start.fen(),
            meta,
            game: Game::new(start),
            moves: Vec::new(),
            san: Vec::new(),
        }
    }

    /// Rebuilds a game from its stored rows.
    pub fn from_stored(s: StoredGame) -> Result<Live, String> {
        let variant: Variant = s.row.variant.parse().map_err(|e| format!("{e}"))?;
        let start = Position::from_fen(variant, &s.row.initial_fen).map_err(|e| e.to_string())?;
        Live::replay(Game::new(start), Vec::new(), s)
    }

    /// This game brought up to a newer stored state (another node's change): only the moves
    /// after the common prefix are replayed, not the whole game.
    pub fn refreshed(&self, s: StoredGame) -> Result<Live, String> {
        if s.row.initial_fen != self.initial_fen || s.row.variant != self.variant().name() {
            return Live::from_stored(s);
        }
        let common = self
            .moves
            .iter()
            .zip(&s.moves)
            .take_while(|(a, b)| a.uci == b.uci)
            .count();
        let mut game = self.game.clone();
        game.undo(self.moves.len() - common);
        Live::replay(game, self.san[..common].to_vec(), s)
    }

    /// `game` with its first `sans.len()` moves equal to the stored ones: plays the rest.
    fn replay(mut game: Game, mut sans: Vec<String>, s: StoredGame) -> Result<Live, String> {
        let row = s.row;
        let meta: Meta =
            serde_json::from_str(&row.meta).map_err(|e| format!("stored record: {e}"))?;
        for m in &s.moves[sans.len()..] {
            let (uci, double) = match m.uci.strip_suffix('*') {
                Some(u) => (u, true),
                None => (m.uci.as_str(), false),
            };
            let mv = parse_uci(game.position(), uci).map_err(|e| e.0)?;
            let mv = if double { mv.as_double_start() } else { mv };
            sans.push(san(game.position(), mv));
            game.play(mv)
                .map_err(|e| format!("stored move {}: {e}", m.uci))?;
        }
        if let Some(o) = meta.imposed.and_then(|i| i.outcome()) {
            game.set_outcome(o);
        }
        Ok(Live {
            id: row.id,
            status: row.status,
            created_at: row.created_at,
            updated_at: row.updated_at,
            version: row.version,
            initial_fen: row.initial_fen,
            meta,
            game,
            moves: s.moves,
            san: sans,
        })
    }

    /// The header row of this state.
    pub fn row(&self) -> GameRow {
        GameRow {
            id: self.id.clone(),
            variant: self.variant().name().to_string(),
            status: self.status,
            created_at: self.created_at,
            updated_at: self.updated_at,
            version: self.version,
            initial_fen: self.initial_fen.clone(),
            meta: serde_json::to_string(&self.meta).expect("the record serialises"),
            flag_at: self.flag_at(),
            engine_to_move: self.engine_to_move(),
            white_user: self.meta.players[0].as_ref().map(PlayerRef::id),
            black_user: self.meta.players[1].as_ref().map(PlayerRef::id),
            rated: self.meta.rated,
            winner: match (self.status, self.game.outcome()) {
                (Status::Finished, Some(o)) => Some(
                    o.winner()
                        .map_or("draw", |c| Side::from(c).name())
                        .to_string(),
                ),
                _ => None,
            },
        }
    }

    pub fn to_stored(&self) -> StoredGame {
        StoredGame {
            row: self.row(),
            moves: self.moves.clone(),
        }
    }

    /// What to store to go from `before` to this state: moves cut back to the common prefix, the
    /// new moves appended, the header replaced.
    pub fn change_since(&self, before: &Live) -> Change {
        let common = before
            .moves
            .iter()
            .zip(&self.moves)
            .take_while(|(a, b)| a == b)
            .count();
        Change {
            row: self.row(),
            truncate_to: (common < before.moves.len()).then_some(common as i32),
            append: self.moves[common..].to_vec(),
            ratings: Vec::new(),
        }
    }

    pub fn variant(&self) -> Variant {
        self.game.variant()
    }

    pub fn is_live(&self) -> bool {
        self.status.is_live()
    }

    /// The colour whose token this is (compared in constant time).
    pub fn color_of_token(&self, token: &str) -> Option<Color> {
        let mut found = None;
        for c in [Color::White, Color::Black] {
            if let Some(t) = &self.meta.tokens[c.index()] {
                if ct_eq(t.as_bytes(), token.as_bytes()) {
                    found = Some(c);
                }
            }
        }
        found
    }

    /// The colour of the account `user_id` (a lowercase username) in this game.
    pub fn color_of_user(&self, user_id: &str) -> Option<Color> {
        [Color::White, Color::Black].into_iter().find(|c| {
            self.meta.players[c.index()]
                .as_ref()
                .is_some_and(|p| p.id() == user_id)
        })
    }

    pub fn engine(&self) -> Option<EngineSeat> {
        self.meta.engine
    }

    pub fn engine_color(&self) -> Option<Color> {
        self.meta.engine.map(|e| e.color.color())
    }

    /// Whether it is the engine's turn in a running game.
    pub fn engine_to_move(&self) -> bool {
        self.status == Status::Started
            && self.game.outcome().is_none()
            && self.engine_color() == Some(self.game.position().turn())
    }

    /// Epoch ms at which the side to move runs out of time, if its clock runs (or its
    /// correspondence deadline).
    pub fn flag_at(&self) -> Option<i64> {
        if self.status != Status::Started || self.game.outcome().is_some() {
            return None;
        }
        self.meta
            .clock
            .as_ref()
            .and_then(Clock::flag_at)
            .or(self.meta.deadline)
    }

    /// Correspondence: the side to move has `days` from `now` (none once the game is over).
    fn new_deadline(&mut self, now: i64) {
        let running = self.status == Status::Started && self.game.outcome().is_none();
        self.meta.deadline = match self.meta.days {
            Some(d) if running => Some(now + i64::from(d) * DAY_MS),
            _ => None,
        };
    }

    /// Starts a game whose seats are all taken (a seek or challenge accepted): the first
    /// correspondence deadline runs from `now`.
    pub fn begin(&mut self, now: i64) {
        self.status = Status::Started;
        self.new_deadline(now);
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

    /// The side whose clock should run now: the side to move of a running game, from its second
    /// turn on (its first turn is clockless, lichess style).
    fn clock_side(&self) -> Option<Color> {
        let c = self.game.position().turn();
        (self.meta.clock.is_some()
            && self.status == Status::Started
            && self.game.outcome().is_none()
            && self.completed_turns()[c.index()] >= 1)
            .then_some(c)
    }

    /// Time left per side at `now`.
    pub fn clock_now(&self, now: i64) -> Option<[i64; 2]> {
        self.meta.clock.as_ref().map(|c| c.remaining(now))
    }

    pub fn outcome_text(&self) -> String {
        match (self.status, self.game.outcome()) {
            (Status::Aborted, _) => "aborted".into(),
            (_, Some(o)) => o.describe(self.variant()),
            _ => "in progress".into(),
        }
    }

    fn touch(&mut self, now: i64) {
        self.updated_at = now.max(self.updated_at);
        self.version += 1;
    }

    fn finish(&mut self, o: Outcome, imposed: bool, now: i64) {
        if imposed {
            self.game.set_outcome(o);
            self.meta.imposed = Some(Imposed::of(&o));
        }
        self.status = Status::Finished;
        self.meta.draw_offer = None;
        self.meta.takeback_offer = None;
        self.meta.deadline = None;
        if let Some(c) = self.meta.clock.as_mut() {
            c.run(None, now);
        }
    }

    fn require_running(&self) -> Result<(), GameError> {
        match self.status {
            Status::Started => Ok(()),
            Status::Waiting => Err(GameError::NotStarted),
            Status::Finished | Status::Aborted => Err(GameError::Over(self.outcome_text())),
        }
    }

    /// Applies an action by `by` at `now` (epoch ms). On success the version is bumped; a refused
    /// action leaves the game as it was, except that a flag fall found on the way is kept (the
    /// version says so).
    pub fn apply(&mut self, by: Actor, action: &Action, now: i64) -> Result<(), GameError> {
        match (by, action) {
            (Actor::Server, Action::Flag) => {
                self.check_flag(now);
                Ok(())
            }
            (Actor::Server, Action::EngineTurn { turn, version }) => {
                if *version != self.version || !self.engine_to_move() {
                    // The game changed meanwhile (takeback, resignation, time): drop the reply.
                    return Ok(());
                }
                let c = self.game.position().turn();
                self.play(
                    c,
                    &MoveAction {
                        turn: Some(turn.clone()),
                        ..MoveAction::default()
                    },
                    now,
                )
            }
            (
                Actor::Guest,
                Action::Join {
                    invite,
                    token,
                    player,
                },
            ) => self.join(invite, token, player.as_ref(), now),
            (Actor::Player(c), Action::Rematch { next_id }) => self.rematch(c, next_id, now),
            (Actor::Player(c), Action::RematchDecline) => self.rematch_decline(c, now),
            (Actor::Player(c), Action::Move(m)) => self.play(c, m, now),
            (Actor::Player(c), Action::Resign) => self.resign(c, now),
            (Actor::Player(_), Action::Abort) => self.abort(now),
            (Actor::Player(c), Action::Draw { action }) => self.draw(c, *action, now),
            (Actor::Player(c), Action::Takeback { action }) => self.takeback(c, *action, now),
            (Actor::Player(_) | Actor::Guest, _) => Err(GameError::NotAPlayer),
            (Actor::Server, _) => Err(GameError::BadRequest(
                "not an action of the server".to_string(),
            )),
        }
    }

    fn join(
        &mut self,
        invite: &str,
        token: &str,
        player: Option<&PlayerRef>,
        now: i64,
    ) -> Result<(), GameError> {
        if self.status != Status::Waiting {
            return Err(GameError::NotWaiting);
        }
        if self.meta.rated && player.is_none() {
            return Err(GameError::AccountNeeded);
        }
        if let Some(p) = player {
            if self.color_of_user(&p.id()).is_some() {
                return Err(GameError::OwnGame);
            }
        }
        let ok = self
            .meta
            .invite
            .as_deref()
            .is_some_and(|i| ct_eq(i.as_bytes(), invite.as_bytes()));
        if !ok {
            return Err(GameError::WrongInvite);
        }
        let c = if self.meta.tokens[0].is_none() && self.meta.players[0].is_none() {
            0
        } else {
            1
        };
        self.meta.tokens[c] = Some(token.to_string());
        self.meta.players[c] = player.cloned();
        self.status = Status::Started;
        self.sync_clock(now);
        self.new_deadline(now);
        self.touch(now);
        Ok(())
    }

    /// Whether a seat is taken (by a token or an account).
    fn seated(&self, c: Color) -> bool {
        self.meta.tokens[c.index()].is_some() || self.meta.players[c.index()].is_some()
    }

    /// The seat a join would take.
    pub fn free_seat(&self) -> Option<Color> {
        if !self.seated(Color::White) && self.engine_color() != Some(Color::White) {
            Some(Color::White)
        } else if !self.seated(Color::Black) && self.engine_color() != Some(Color::Black) {
            Some(Color::Black)
        } else {
            None
        }
    }

    /// Starts the clock of the side that should run, from `now` (an imported game).
    pub fn restart_clock(&mut self, now: i64) {
        self.sync_clock(now);
    }

    /// Starts or stops the clocks to match the position (after a change).
    fn sync_clock(&mut self, now: i64) {
        let side = self.clock_side();
        if let Some(c) = self.meta.clock.as_mut() {
            if c.running_side() != side {
                c.run(side, now);
            }
        }
    }

    /// Ends the game on time if the side to move has run out at `now`. Returns whether it did.
    pub fn check_flag(&mut self, now: i64) -> bool {
        if self.status != Status::Started || self.game.outcome().is_some() {
            return false;
        }
        let to_move = self.game.position().turn();
        let late = self.meta.deadline.is_some_and(|d| now >= d);
        let flagged = self.meta.clock.as_ref().and_then(|k| k.flagged(now));
        let Some(c) = flagged.or(late.then_some(to_move)) else {
            return false;
        };
        if let Some(clock) = self.meta.clock.as_mut() {
            clock.zero(c);
        }
        let o = if can_win(self.game.position(), c.other()) {
            Outcome::Win {
                winner: c.other(),
                reason: WinReason::Timeout,
            }
        } else {
            Outcome::Draw(DrawReason::TimeoutVsInsufficientMaterial)
        };
        self.finish(o, true, now);
        self.touch(now);
        true
    }

    fn play(&mut self, by: Color, m: &MoveAction, now: i64) -> Result<(), GameError> {
        self.require_running()?;
        let pos = *self.game.position();
        if pos.turn() != by {
            return Err(GameError::NotYourTurn {
                to_move: Side::from(pos.turn()).name(),
            });
        }
        if self.check_flag(now) {
            return Err(GameError::Over(self.outcome_text()));
        }
        let before = self.game.moves().len();
        let mut next = self.game.clone();
        match (&m.mv, &m.turn) {
            (Some(uci), None) => {
                let mv = parse_uci(&pos, uci).map_err(|e| GameError::BadRequest(e.0))?;
                let mv = if m.double {
                    if pos.variant() != Variant::DoubleMove {
                        return Err(GameError::BadRequest(
                            "\"double\" is only for Double Move Chess".into(),
                        ));
                    }
                    if pos.phase() != Phase::Start {
                        return Err(GameError::BadRequest(
                            "a Double Move can only begin on the first move of a turn".into(),
                        ));
                    }
                    mv.as_double_start()
                } else {
                    mv
                };
                next.play(mv).map_err(|reason| GameError::IllegalMove {
                    uci: uci.trim().to_string(),
                    reason,
                })?;
            }
            (None, Some(text)) if !m.double => {
                next.play_turn_text(text, false)
                    .map_err(|e| GameError::IllegalTurn(e.to_string()))?;
            }
            (None, Some(_)) => {
                return Err(GameError::BadRequest(
                    "\"double\" goes with \"move\"; a turn of two moves is a Double Move by itself"
                        .into(),
                ))
            }
            _ => {
                return Err(GameError::BadRequest(
                    "send either {\"move\": \"e2e4\"} or {\"turn\": \"g1f3,e2e4\"}".into(),
                ))
            }
        }
        self.game = next;
        let passed = self.game.position().turn() != by || self.game.outcome().is_some();
        if let Some(o) = self.game.outcome() {
            self.finish(o, false, now);
        }
        // The clock: charge the thinking time; the increment once, when the turn passes.
        let next_side = self.clock_side();
        let mut left = None;
        if let Some(clock) = self.meta.clock.as_mut() {
            if passed {
                clock.end_turn(by, next_side, now);
            } else {
                clock.charge(now);
            }
            left = Some(clock.remaining_ms[by.index()]);
        }
        let new = &self.game.moves()[before..];
        for (i, &mv) in new.iter().enumerate() {
            self.san.push(san(&self.game.positions()[before + i], mv));
            let last = i + 1 == new.len();
            self.moves.push(MoveRow {
                ply: (before + i) as i32,
                uci: encode_move(mv),
                clock_ms: if last && passed { left } else { None },
                at: now,
            });
        }
        self.meta.takeback_offer = None;
        if passed && self.meta.draw_offer == Some(Side::from(by.other())) {
            self.meta.draw_offer = None;
        }
        if passed {
            self.new_deadline(now);
        }
        self.touch(now);
        Ok(())
    }

    fn resign(&mut self, by: Color, now: i64) -> Result<(), GameError> {
        self.require_running()?;
        self.finish(
            Outcome::Win {
                winner: by.other(),
                reason: WinReason::Resignation,
            },
            true,
            now,
        );
        self.touch(now);
        Ok(())
    }

    /// Abort: only before both sides have completed a turn.
    fn abort(&mut self, now: i64) -> Result<(), GameError> {
        if !self.status.is_live() {
            return Err(GameError::Over(self.outcome_text()));
        }
        let n = self.completed_turns();
        if n[0] >= 1 && n[1] >= 1 {
            return Err(GameError::AbortTooLate);
        }
        self.status = Status::Aborted;
        self.meta.deadline = None;
        self.meta.draw_offer = None;
        self.meta.takeback_offer = None;
        if let Some(c) = self.meta.clock.as_mut() {
            c.run(None, now);
        }
        self.touch(now);
        Ok(())
    }

    fn draw(&mut self, by: Color, action: DrawAction, now: i64) -> Result<(), GameError> {
        self.require_running()?;
        let me = Side::from(by);
        let them = Side::from(by.other());
        let offered = self.meta.draw_offer == Some(them);
        match action {
            DrawAction::Offer | DrawAction::Accept if offered => {
                self.finish(Outcome::Draw(DrawReason::Agreement), true, now);
            }
            DrawAction::Offer if self.engine_color().is_some() => {
                return Err(GameError::EngineDeclinesDraw)
            }
            DrawAction::Offer => self.meta.draw_offer = Some(me),
            DrawAction::Accept => {
                return Err(GameError::NoOffer {
                    what: "draw offer",
                    verb: "accept",
                })
            }
            DrawAction::Decline if offered => self.meta.draw_offer = None,
            DrawAction::Decline => {
                return Err(GameError::NoOffer {
                    what: "draw offer",
                    verb: "decline",
                })
            }
            DrawAction::Claim => match self.game.claimable_draw() {
                Some(r) if self.game.position().turn() == by => {
                    self.finish(Outcome::Draw(r), true, now)
                }
                Some(_) => return Err(GameError::OnlyMoverClaims),
                None => return Err(GameError::NoDrawToClaim),
            },
        }
        self.touch(now);
        Ok(())
    }

    fn takeback(&mut self, by: Color, action: TakebackAction, now: i64) -> Result<(), GameError> {
        self.require_running()?;
        let me = Side::from(by);
        let them = Side::from(by.other());
        let proposed = self.meta.takeback_offer == Some(them);
        match action {
            TakebackAction::Propose if self.engine_color().is_some() => {
                self.take_back_for(by, now)?
            }
            TakebackAction::Propose | TakebackAction::Accept if proposed => {
                self.take_back_for(by.other(), now)?
            }
            TakebackAction::Propose => {
                self.target_ply(by)?;
                self.meta.takeback_offer = Some(me)
            }
            TakebackAction::Accept => {
                return Err(GameError::NoOffer {
                    what: "takeback proposal",
                    verb: "accept",
                })
            }
            TakebackAction::Decline if proposed => self.meta.takeback_offer = None,
            TakebackAction::Decline => {
                return Err(GameError::NoOffer {
                    what: "takeback proposal",
                    verb: "decline",
                })
            }
        }
        self.touch(now);
        Ok(())
    }

    /// A rematch offer by `by` after the game; if the opponent offered one already, the rematch
    /// is agreed and will be the game `next_id` (the caller creates it when this applies).
    fn rematch(&mut self, by: Color, next_id: &str, now: i64) -> Result<(), GameError> {
        if self.is_live() {
            return Err(GameError::NotOver);
        }
        if self.meta.rematch.game_id.is_some() {
            return Err(GameError::RematchStarted);
        }
        // Against the engine the rematch starts at once: no offer to wait for.
        if self.engine_color().is_some() {
            self.meta.rematch.game_id = Some(next_id.to_string());
            self.touch(now);
            return Ok(());
        }
        let me = Side::from(by);
        if self.meta.rematch.offer == Some(Side::from(by.other())) {
            self.meta.rematch = Rematch {
                offer: None,
                game_id: Some(next_id.to_string()),
            };
        } else if self.meta.rematch.offer == Some(me) {
            return Ok(());
        } else {
            self.meta.rematch.offer = Some(me);
        }
        self.touch(now);
        Ok(())
    }

    fn rematch_decline(&mut self, by: Color, now: i64) -> Result<(), GameError> {
        if self.meta.rematch.offer != Some(Side::from(by.other())) {
            return Err(GameError::NoOffer {
                what: "rematch offer",
                verb: "decline",
            });
        }
        self.meta.rematch.offer = None;
        self.touch(now);
        Ok(())
    }

    /// The number of moves at the start of `c`'s last turn.
    fn target_ply(&self, c: Color) -> Result<usize, GameError> {
        self.game
            .turns()
            .iter()
            .rev()
            .find(|t| t.color == c)
            .map(|t| t.start)
            .ok_or(GameError::NothingToTakeBack)
    }

    /// Takes the game back to the start of `c`'s last turn. Clocks: the time spent stays spent;
    /// the clock of the side now to move runs from now.
    fn take_back_for(&mut self, c: Color, now: i64) -> Result<(), GameError> {
        let to = self.target_ply(c)?;
        let from = self.game.moves().len();
        if let Some(k) = self.meta.clock.as_mut() {
            k.charge(now);
        }
        self.game.undo(from - to);
        self.moves.truncate(to);
        self.san.truncate(to);
        self.meta.takebacks.push(TakebackRecord {
            by: Side::from(c),
            from_ply: from,
            to_ply: to,
            at_ms: now,
        });
        self.meta.takebacks_used[c.index()] += 1;
        self.meta.takeback_offer = None;
        self.meta.draw_offer = None;
        self.sync_clock(now);
        self.new_deadline(now);
        Ok(())
    }

    /// SAN of a turn's moves joined by commas (`Nf3,e4`), from the cache.
    pub fn turn_san(&self, t: &rules::game::TurnRecord) -> String {
        self.san[t.start..t.start + t.moves.len()].join(",")
    }

    /// The mover's clock after each completed turn (for the state and PGN `%clk`).
    pub fn turn_clocks(&self) -> Vec<Option<i64>> {
        self.game
            .turns()
            .iter()
            .map(|t| {
                let last = t.start + t.moves.len();
                self.moves
                    .get(last.wrapping_sub(1))
                    .and_then(|m| m.clock_ms)
            })
            .collect()
    }
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    // Constant time for equal lengths (token lengths are public).
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
