//! `--seed-archive N`: N finished games written through the server's own store
//! (`server::store::open` and `Store::create`, realistic header and move rows), and `--startup`:
//! how long a spawned `doublemove serve` takes until `/readyz` answers on that database, and its RSS
//! then. Start-up reads only live games, so neither figure should grow with the archive.

use super::sequences;
use super::sys::{mib, rss_kib, ServerChild};
use futures_util::StreamExt;
use rules::rng::SplitMix64;
use rules::{Color, Position, Variant};
use server::game::{Action, Actor, Live, Meta, MoveAction};
use server::store::{Status, StoreError, StoredGame};
use std::time::{Duration, Instant};

const ID_ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

fn token(rng: &mut SplitMix64) -> String {
    format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64())
}

fn game_id(rng: &mut SplitMix64) -> String {
    (0..10)
        .map(|_| ID_ALPHABET[rng.below(ID_ALPHABET.len())] as char)
        .collect()
}

/// A finished human-vs-human game: the sequence played through the game core (`Live::apply`, as
/// the server does), then the side to move resigns.
fn template(variant: Variant, seq: &[super::Turn], now: i64) -> Result<Live, String> {
    let meta = Meta::new(None, [Some("w".repeat(32)), Some("b".repeat(32))]);
    let mut live = Live::new(
        "template00".into(),
        Position::start(variant),
        meta,
        Status::Started,
        now,
    );
    for (i, t) in seq.iter().enumerate() {
        let color = if i % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        let action = Action::Move(MoveAction {
            turn: Some(t.text.clone()),
            ..Default::default()
        });
        live.apply(Actor::Player(color), &action, now + 1000 * i as i64)
            .map_err(|e| format!("template turn {}: {e:?}", t.text))?;
    }
    let mover = if seq.len().is_multiple_of(2) {
        Color::White
    } else {
        Color::Black
    };
    live.apply(
        Actor::Player(mover),
        &Action::Resign,
        now + 1000 * seq.len() as i64,
    )
    .map_err(|e| format!("template resignation: {e:?}"))?;
    if live.status != Status::Finished {
        return Err(format!(
            "the template game is {:?}, not finished",
            live.status
        ));
    }
    Ok(live)
}

/// Inserts `count` finished games of `turns` turns into `db`, `concurrency` creates in flight.
pub async fn seed(
    db: &str,
    variant: Variant,
    turns: usize,
    count: usize,
    concurrency: usize,
) -> Result<(), String> {
    let store = server::store::open(db, "loadtest-seed")
        .await
        .map_err(|e| format!("opening {db}: {e:#}"))?;
    let now = server::hub::now_ms();
    let templates: Vec<StoredGame> = sequences(variant, turns, 16)
        .iter()
        .map(|s| template(variant, s, now).map(|l| l.to_stored()))
        .collect::<Result<_, _>>()?;
    let moves_per_game =
        templates.iter().map(|t| t.moves.len()).sum::<usize>() as f64 / templates.len() as f64;
    println!(
        "seed: {count} finished {} games of {turns} turns (≈{moves_per_game:.0} moves each) into \
         the {} store {db}, {concurrency} at a time",
        variant.name(),
        store.backend()
    );
    let started = Instant::now();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let day = 86_400_000;
    let mut done = 0usize;
    let mut last_print = Instant::now();
    let mut results = futures_util::stream::iter(0..count)
        .map(|i| {
            let store = store.clone();
            let mut g = templates[i % templates.len()].clone();
            async move {
                let mut rng =
                    SplitMix64::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                // Spread over the last 30 days, keeping each game's own move times relative.
                let shift = -(rng.below(30) as i64) * day - rng.below(day as usize) as i64;
                let mut meta: Meta =
                    serde_json::from_str(&g.row.meta).map_err(|e| e.to_string())?;
                meta.tokens = [Some(token(&mut rng)), Some(token(&mut rng))];
                g.row.meta = serde_json::to_string(&meta).map_err(|e| e.to_string())?;
                g.row.created_at += shift;
                g.row.updated_at += shift;
                for m in &mut g.moves {
                    m.at += shift;
                }
                for _ in 0..5 {
                    g.row.id = game_id(&mut rng);
                    match store.create(&g).await {
                        Ok(()) => return Ok(()),
                        Err(StoreError::Conflict) => continue,
                        Err(e) => return Err(e.to_string()),
                    }
                }
                Err("five id collisions in a row".to_string())
            }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some(r) = results.next().await {
        r.map_err(|e| format!("seeding after {done} games: {e}"))?;
        done += 1;
        if last_print.elapsed() >= Duration::from_secs(10) {
            last_print = Instant::now();
            println!(
                "seed: {done} of {count} in {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "seed: {done} finished games written in {secs:.1} s ({:.0} games/s)",
        done as f64 / secs
    );
    store.close().await;
    Ok(())
}

/// One start-up measure: spawn, time until `/readyz` answers 200, RSS then. Returns (seconds, KiB).
pub async fn startup(
    http: &reqwest::Client,
    db: &str,
    run: usize,
) -> Result<(f64, Option<u64>), String> {
    let mut c = ServerChild::start(db, &format!("loadtest-startup-{run}"))?;
    let t = c.ready(http, Duration::from_secs(600)).await?;
    // RSS once the node answers, and again a moment later (allocations right after start-up).
    let rss = rss_kib(c.pid());
    let live = super::sys::live_games(http, c.addr).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_later = rss_kib(c.pid());
    println!(
        "startup: {:.3} s from spawn to /readyz 200, RSS {} then ({} 0.5 s later), {} live games \
         resumed, database {db}",
        t.as_secs_f64(),
        rss.map_or("?".into(), mib),
        rss_later.map_or("?".into(), mib),
        live.map_or("?".into(), |n| n.to_string())
    );
    c.kill();
    Ok((t.as_secs_f64(), rss))
}
