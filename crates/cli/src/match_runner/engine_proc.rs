//! One engine as a child process speaking (our dialect of) UCI over pipes: start-up handshake with the
//! options it lists, new games, and one timed `go` … `bestmove` at a time. A reader thread turns the
//! engine's standard output into timestamped lines, so every wait has a deadline.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long an engine may take to answer `uci` and `isready`.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// What to start and how to configure it.
#[derive(Clone, Debug)]
pub struct EngineSpec {
    /// The command line as given (for messages and as a fallback name).
    pub command: String,
    pub argv: Vec<String>,
    /// `setoption` pairs sent after the handshake, in order.
    pub options: Vec<(String, String)>,
}

impl EngineSpec {
    /// Splits a shell-like command line; a program named `doublemove` is this very executable.
    pub fn parse(command: &str, options: &[String]) -> Result<EngineSpec, String> {
        let mut argv = shlex::split(command).ok_or_else(|| {
            format!("cannot split the engine command '{command}' (unbalanced quotes?)")
        })?;
        if argv.is_empty() {
            return Err("empty engine command".into());
        }
        if argv[0] == "doublemove" {
            if let Ok(exe) = std::env::current_exe() {
                argv[0] = exe.to_string_lossy().into_owned();
            }
        }
        let mut opts = Vec::new();
        for o in options {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| format!("engine option '{o}' is not NAME=VALUE"))?;
            opts.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(EngineSpec {
            command: command.to_string(),
            argv,
            options: opts,
        })
    }
}

/// An engine's answer to `go`: the turn, and what its last `info` lines said about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thought {
    pub turn: String,
    pub report: Report,
}

/// A search score as UCI reports it, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Cp(i32),
    /// Mate in this many (negative: being mated); turns in our dialect, moves in orthodox UCI.
    Mate(i32),
}

/// The latest score and depth seen in `info` lines during one search (a line with a bound,
/// `lowerbound`/`upperbound`, does not replace an exact score of the same search).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub score: Option<Score>,
    pub depth: Option<u32>,
}

impl Report {
    /// Takes what it understands from one `info` line; anything unreadable is ignored (a
    /// report is only a PGN comment, never a reason to fault an engine).
    pub fn read_info(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.get(1) == Some(&"string")
            || words.contains(&"lowerbound")
            || words.contains(&"upperbound")
        {
            return;
        }
        // The word after `key`, and the one after that.
        let after = |key: &str| {
            let i = words.iter().position(|w| *w == key)?;
            Some((*words.get(i + 1)?, words.get(i + 2).copied()))
        };
        let score = after("score").and_then(|(kind, value)| {
            let value = value?.parse().ok()?;
            match kind {
                "cp" => Some(Score::Cp(value)),
                "mate" => Some(Score::Mate(value)),
                _ => None,
            }
        });
        if let Some(sc) = score {
            self.score = Some(sc);
            self.depth = after("depth")
                .and_then(|(d, _)| d.parse().ok())
                .or(self.depth);
        }
    }

    /// The PGN comment in the form other match tools write: the score in pawns for the side
    /// that moved (`+0.35`, `-M3`), `/depth`, then the time used (`0.251s`).
    pub fn comment(&self, used: Duration) -> String {
        let score = match self.score {
            Some(Score::Cp(c)) => format!("{:+.2}", f64::from(c) / 100.0),
            Some(Score::Mate(m)) if m < 0 => format!("-M{}", -m),
            Some(Score::Mate(m)) => format!("+M{m}"),
            None => String::new(),
        };
        let depth = match (self.score, self.depth) {
            (Some(_), Some(d)) => format!("/{d}"),
            _ => String::new(),
        };
        let sep = if score.is_empty() { "" } else { " " };
        format!("{score}{depth}{sep}{:.3}s", used.as_secs_f64())
    }
}

/// Why an engine could not give an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// No answer before the deadline.
    Timeout,
    /// The process ended or closed its pipes.
    Crash(String),
}

enum Event {
    Line(String, Instant),
    Eof,
}

/// An option the engine listed in its `uci` reply.
#[derive(Clone, Debug, Default)]
pub struct UciOption {
    pub name: String,
    /// The `var` values of a combo option.
    pub vars: Vec<String>,
}

pub struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Event>,
    pub name: String,
    pub listed: Vec<UciOption>,
    /// Warnings from the handshake (unknown options, a variant the engine does not list).
    pub warnings: Vec<String>,
}

impl Engine {
    /// Starts the engine, runs `uci` … `uciok`, sets `UCI_Variant` (only if the engine lists it) and
    /// the user's options, then `isready` … `readyok`.
    pub fn start(spec: &EngineSpec, variant: &str) -> Result<Engine, String> {
        let mut child = Command::new(&spec.argv[0])
            .args(&spec.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start '{}': {e}", spec.command))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = String::new();
            loop {
                buf.clear();
                match reader.read_line(&mut buf) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Event::Eof);
                        return;
                    }
                    Ok(_) => {
                        let line = buf.trim_end_matches(['\n', '\r']).to_string();
                        if tx.send(Event::Line(line, Instant::now())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut e = Engine {
            child,
            stdin,
            rx,
            name: String::new(),
            listed: Vec::new(),
            warnings: Vec::new(),
        };
        let fail = |what: &str, f: Fault| match f {
            Fault::Timeout => format!(
                "'{}' did not answer {what} within {} s",
                spec.command,
                HANDSHAKE_TIMEOUT.as_secs()
            ),
            Fault::Crash(c) => format!("'{}' failed during {what}: {c}", spec.command),
        };
        e.send("uci").map_err(|f| fail("uci", f))?;
        let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
        loop {
            let (line, _) = e.next_line(deadline).map_err(|f| fail("uci", f))?;
            let line = line.trim();
            if line == "uciok" {
                break;
            }
            if let Some(n) = line.strip_prefix("id name ") {
                e.name = n.trim().to_string();
            } else if let Some(o) = parse_option(line) {
                e.listed.push(o);
            }
        }
        if e.name.is_empty() {
            e.name = spec.command.clone();
        }
        if let Some(o) = e.option("UCI_Variant") {
            if !o.vars.is_empty() && !o.vars.iter().any(|v| v == variant) {
                e.warnings
                    .push(format!("{} does not list the variant {variant}", e.name));
            }
            e.send(&format!("setoption name UCI_Variant value {variant}"))
                .map_err(|f| fail("setoption", f))?;
        } else if variant != "chess" {
            e.warnings.push(format!(
                "{} lists no UCI_Variant option; it is expected to play {variant} anyway",
                e.name
            ));
        }
        for (k, v) in &spec.options {
            if e.option(k).is_none() {
                e.warnings
                    .push(format!("{} lists no option '{k}' (sent anyway)", e.name));
            }
            e.send(&format!("setoption name {k} value {v}"))
                .map_err(|f| fail("setoption", f))?;
        }
        e.sync(HANDSHAKE_TIMEOUT).map_err(|f| fail("isready", f))?;
        Ok(e)
    }

    pub fn option(&self, name: &str) -> Option<&UciOption> {
        self.listed
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(name))
    }

    pub fn send(&mut self, line: &str) -> Result<(), Fault> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(Fault::Crash("its input is closed".into()));
        };
        let r = stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush());
        r.map_err(|e| Fault::Crash(self.exit_detail(&format!("writing to it failed ({e})"))))
    }

    fn next_line(&mut self, deadline: Instant) -> Result<(String, Instant), Fault> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(wait) {
            Ok(Event::Line(l, t)) => Ok((l, t)),
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                Err(Fault::Crash(self.exit_detail("it closed its output")))
            }
            Err(RecvTimeoutError::Timeout) => Err(Fault::Timeout),
        }
    }

    /// `isready` … `readyok`.
    pub fn sync(&mut self, timeout: Duration) -> Result<(), Fault> {
        self.send("isready")?;
        let deadline = Instant::now() + timeout;
        loop {
            let (l, _) = self.next_line(deadline)?;
            if l.trim() == "readyok" {
                return Ok(());
            }
        }
    }

    pub fn new_game(&mut self) -> Result<(), Fault> {
        self.send("ucinewgame")?;
        self.sync(HANDSHAKE_TIMEOUT)
    }

    /// Sends `position` and `go`, waits for `bestmove` until `limit` has passed, and returns the turn
    /// (with the last score and depth the engine reported) and the time between writing `go` and
    /// reading `bestmove`.
    pub fn think(
        &mut self,
        position: &str,
        go: &str,
        limit: Duration,
    ) -> (Result<Thought, Fault>, Duration) {
        if let Err(f) = self.send(position) {
            return (Err(f), Duration::ZERO);
        }
        let start = Instant::now();
        if let Err(f) = self.send(go) {
            return (Err(f), start.elapsed());
        }
        let deadline = start + limit;
        let mut report = Report::default();
        loop {
            match self.next_line(deadline) {
                Ok((l, t)) => {
                    let mut words = l.split_whitespace();
                    match words.next() {
                        Some("bestmove") => {
                            let turn = words.next().unwrap_or("").to_string();
                            let thought = Thought { turn, report };
                            return (Ok(thought), t.saturating_duration_since(start));
                        }
                        Some("info") => report.read_info(&l),
                        _ => {}
                    }
                }
                Err(f) => return (Err(f), start.elapsed()),
            }
        }
    }

    /// What became of the process, for a crash report.
    fn exit_detail(&mut self, what: &str) -> String {
        // Give a dying process a moment to be reaped.
        for _ in 0..20 {
            if let Ok(Some(st)) = self.child.try_wait() {
                return format!("{what}; {st}");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        what.to_string()
    }

    /// Asks the engine to quit, and kills it if it does not within a short while.
    pub fn quit(mut self) {
        let _ = self.send("quit");
        self.stdin = None;
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Drop kills it.
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// `option name NAME type TYPE [default X] [var A var B ...]`.
fn parse_option(line: &str) -> Option<UciOption> {
    let rest = line.strip_prefix("option name ")?;
    let (name, tail) = match rest.find(" type ") {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut vars = Vec::new();
    let mut words = tail.split_whitespace().peekable();
    while let Some(w) = words.next() {
        if w == "var" {
            if let Some(v) = words.next() {
                vars.push(v.to_string());
            }
        }
    }
    Some(UciOption {
        name: name.trim().to_string(),
        vars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_parsed() {
        let o = parse_option(
            "option name UCI_Variant type combo default chess var chess var two-move var twinmove",
        )
        .unwrap();
        assert_eq!(o.name, "UCI_Variant");
        assert_eq!(o.vars, ["chess", "two-move", "twinmove"]);
        let o =
            parse_option("option name Move Overhead type spin default 10 min 0 max 5000").unwrap();
        assert_eq!(o.name, "Move Overhead");
        assert!(o.vars.is_empty());
        assert!(parse_option("id name x").is_none());
    }

    #[test]
    fn commands_are_split() {
        let s =
            EngineSpec::parse("'/usr/games/stockfish' --x \"a b\"", &["Hash=16".into()]).unwrap();
        assert_eq!(s.argv, ["/usr/games/stockfish", "--x", "a b"]);
        assert_eq!(s.options, [("Hash".to_string(), "16".to_string())]);
        let s = EngineSpec::parse("doublemove uci --level 1", &[]).unwrap();
        assert_ne!(s.argv[0], "doublemove");
        assert_eq!(&s.argv[1..], ["uci", "--level", "1"]);
        assert!(EngineSpec::parse("", &[]).is_err());
        assert!(EngineSpec::parse("x", &["novalue".into()]).is_err());
    }

    #[test]
    fn info_lines_make_the_comment() {
        let mut r = Report::default();
        assert_eq!(r.comment(Duration::from_millis(5)), "0.005s");
        r.read_info("info depth 1 seldepth 1 score cp 18 nodes 20 pv e2e4");
        r.read_info("info depth 12 seldepth 17 multipv 1 score cp -35 nodes 9000 pv d2d4");
        assert_eq!(r.score, Some(Score::Cp(-35)));
        assert_eq!(r.comment(Duration::from_millis(251)), "-0.35/12 0.251s");
        // A bound from an aspiration failure and an `info string` do not replace the exact score.
        r.read_info("info depth 13 score cp 90 lowerbound nodes 10000");
        r.read_info("info string score cp 500 depth 40");
        r.read_info("info depth 13 currmove e2e4 currmovenumber 3");
        assert_eq!(r.comment(Duration::from_millis(300)), "-0.35/12 0.300s");
        r.read_info("info depth 14 score mate 3 pv a1a8");
        assert_eq!(r.comment(Duration::from_secs(1)), "+M3/14 1.000s");
        r.read_info("info depth x score mate -2");
        assert_eq!(r.comment(Duration::ZERO), "-M2/14 0.000s");
        r.read_info("info score cp nonsense depth 15");
        assert_eq!(r.score, Some(Score::Mate(-2)));
        r.read_info("info depth 0 score cp 1234567");
        assert_eq!(r.comment(Duration::ZERO), "+12345.67/0 0.000s");
    }
}
