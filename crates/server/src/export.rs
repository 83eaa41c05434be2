//! A served game as PGN: the Seven Tag Roster, variant, time control, termination, and the mover's
//! clock after each turn as `%clk`.

use crate::game::Live;
use crate::store::Status;
use rules::pgn::write_pgn;
use rules::Color;

fn clk(ms: i64) -> String {
    let s = (ms.max(0) + 999) / 1000;
    format!("[%clk {}:{:02}:{:02}]", s / 3600, s / 60 % 60, s % 60)
}

/// The UTC date of a time in Unix milliseconds, as PGN writes it (`YYYY.MM.DD`).
fn pgn_date(ms: i64) -> String {
    let d = time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .date();
    format!("{:04}.{:02}.{:02}", d.year(), u8::from(d.month()), d.day())
}

/// The game as PGN, with clock comments per turn.
pub fn game_pgn(live: &Live) -> String {
    let name = |c: Color| match live.engine_color() {
        Some(e) if e == c => format!(
            "doublemove engine level {}",
            live.engine().map_or(8, |e| e.level)
        ),
        _ => live.meta.players[c.index()]
            .as_ref()
            .map_or_else(|| "Anonymous".to_string(), |p| p.username.clone()),
    };
    // Correspondence: PGN's "moves/seconds" form, one turn per period.
    let days = live
        .meta
        .days
        .map(|d| format!("1/{}", i64::from(d) * 86_400));
    let tc = live
        .meta
        .clock
        .as_ref()
        .map_or(days.unwrap_or("-".into()), |c| {
            if c.increment_ms > 0 {
                format!("{}+{}", c.limit_ms / 1000, c.increment_ms / 1000)
            } else {
                format!("{}", c.limit_ms / 1000)
            }
        });
    let termination = match (live.status, live.game.outcome()) {
        (Status::Aborted, _) => "Aborted".to_string(),
        (_, Some(o)) => o.describe(live.variant()),
        _ => "Unterminated".to_string(),
    };
    let mut tags: Vec<(String, String)> = vec![
        ("Event".into(), "doublemove server game".into()),
        ("Site".into(), format!("doublemove game {}", live.id)),
        ("Date".into(), pgn_date(live.created_at)),
        ("Round".into(), "-".into()),
        ("White".into(), name(Color::White)),
        ("Black".into(), name(Color::Black)),
        ("TimeControl".into(), tc),
        ("Termination".into(), termination),
    ];
    for (c, tag) in [(Color::White, "WhiteElo"), (Color::Black, "BlackElo")] {
        if let Some(r) = live.meta.players[c.index()].as_ref().and_then(|p| p.rating) {
            tags.push((tag.into(), r.to_string()));
        }
    }
    if live.meta.players.iter().any(Option::is_some) {
        let mode = if live.meta.rated { "Rated" } else { "Casual" };
        tags.push(("Mode".into(), mode.into()));
    }
    let comments: Vec<Option<String>> = live.turn_clocks().iter().map(|c| c.map(clk)).collect();
    write_pgn(&live.game, &tags, &comments)
}

#[cfg(test)]
mod tests {
    use super::pgn_date;

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(pgn_date(0), "1970.01.01");
        assert_eq!(pgn_date(951_782_400_000), "2000.02.29");
        assert_eq!(pgn_date(1_735_689_599_999), "2024.12.31");
        assert_eq!(pgn_date(-1), "1969.12.31");
    }
}
