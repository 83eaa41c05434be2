//! The network's tool chain through the real binary: `datagen` writes (and resumes) a data file,
//! `train` makes a network from it, and the engine loads that network (`EvalFile`) and plays with it.

mod common;
use common::run;
use std::io::Write;

#[test]
fn datagen_train_and_load_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.bin");
    let data = data.to_str().unwrap();
    let net = dir.path().join("n.nnue");
    let net = net.to_str().unwrap();

    let gen = |positions: &str| {
        run(
            &[
                "datagen",
                "--out",
                data,
                "--positions",
                positions,
                "--nodes",
                "200",
                "--threads",
                "2",
            ],
            None,
        )
    };
    let (code, out, err) = gen("300");
    assert_eq!(code, 0, "{out}{err}");
    let first = std::fs::metadata(data).unwrap().len();
    assert!(
        first >= 300 * 32 && first.is_multiple_of(32),
        "{first} bytes"
    );
    // A torn last record is dropped and the run goes on where the file ends.
    std::fs::OpenOptions::new()
        .append(true)
        .open(data)
        .unwrap()
        .write_all(b"torn")
        .unwrap();
    let (code, out, _) = gen("600");
    assert_eq!(code, 0);
    assert!(out.contains(&format!("({} there)", first / 32)), "{out}");
    let second = std::fs::metadata(data).unwrap().len();
    assert!(second >= 600 * 32 && second.is_multiple_of(32));

    let (code, out, err) = run(
        &[
            "train",
            "--data",
            data,
            "--out",
            net,
            "--epochs",
            "3",
            "--batch",
            "64",
            "--validation",
            "10",
        ],
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("validation 0.").count(), 3, "{out}");
    let first_loss = loss_after(&out, "(validation loss ");
    let provenance = std::fs::read_to_string(format!("{net}.txt")).unwrap();
    assert!(provenance.contains("epoch   3"), "{provenance}");

    let session = format!(
        "uci\nsetoption name UCI_Variant value double-move\nsetoption name UseNNUE value true\n\
         setoption name EvalFile value {net}\nisready\nposition startpos\ngo depth 3\nisready\nquit\n"
    );
    let (code, out, _) = run(&["uci"], Some(&session));
    assert_eq!(code, 0);
    assert!(!out.contains("error"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");

    // A file that is not a network is refused with its reason; the engine keeps playing.
    let (_, out, _) = run(
        &["uci"],
        Some(&format!(
            "setoption name EvalFile value {data}\nposition startpos\ngo depth 2\nisready\nquit\n"
        )),
    );
    assert!(out.contains("info string error: EvalFile"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("bestmove ")), "{out}");
    let (code, _, err) = run(&["train", "--data", net, "--out", net], None);
    assert_ne!(code, 0);
    assert!(err.contains("record"), "{err}");

    // Fine-tuning: a run can start from a network's weights; a file that is not one is refused.
    let tuned = format!("{net}.tuned");
    let (code, out, err) = run(
        &[
            "train",
            "--data",
            data,
            "--out",
            &tuned,
            "--epochs",
            "1",
            "--batch",
            "64",
            "--validation",
            "10",
            "--init",
            net,
        ],
        None,
    );
    assert_eq!(code, 0, "{out}{err}");
    // Before training, the run measures the network it starts from on the same validation
    // positions: what the first run reported for that network (in floats; the file is quantised).
    let initial = loss_after(&out, "epoch   0  initial weights  validation ");
    assert!(
        (initial - first_loss).abs() <= 0.1 * first_loss,
        "initial {initial}, first run {first_loss}\n{out}"
    );
    let provenance = std::fs::read_to_string(format!("{tuned}.txt")).unwrap();
    assert!(
        provenance.contains(&format!("initial weights: {net}")),
        "{provenance}"
    );
    let (code, _, err) = run(
        &["train", "--data", data, "--out", &tuned, "--init", data],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains(data), "{err}");
}

/// The number that follows `prefix` in `out`.
fn loss_after(out: &str, prefix: &str) -> f64 {
    let at = out
        .find(prefix)
        .unwrap_or_else(|| panic!("no {prefix:?} in {out}"))
        + prefix.len();
    let text: String = out[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    text.parse()
        .unwrap_or_else(|e| panic!("{text:?} after {prefix:?}: {e}"))
}
