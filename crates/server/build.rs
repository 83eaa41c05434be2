//! Embeds the web UI's build output (`web/dist` at the workspace root) when it exists: writes a table
//! of `(path, bytes)` with `include_bytes!` into OUT_DIR. Without `web/dist` the table is empty and the
//! server serves a placeholder page, so the build never depends on the UI being built.

use std::fs;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, base: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            walk(&p, base, out);
        } else if let Ok(rel) = p.strip_prefix(base) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((rel, p.canonicalize().unwrap_or(p.clone())));
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dist = manifest.join("../../web/dist");
    // Watching a missing path would make every build dirty: without web/dist, only build.rs is
    // watched (touch it, or run `cargo clean -p doublemove-server`, after the first UI build).
    println!("cargo:rerun-if-changed=build.rs");
    if dist.is_dir() {
        println!("cargo:rerun-if-changed={}", dist.display());
    } else if dist.parent().is_some_and(Path::is_dir) {
        // web/ exists but is not built yet: watching web/ notices when web/dist appears.
        println!(
            "cargo:rerun-if-changed={}",
            dist.parent().unwrap().display()
        );
    }
    let mut files = Vec::new();
    walk(&dist, &dist, &mut files);
    let mut code = String::from("pub static ASSETS: &[(&str, &[u8])] = &[\n");
    for (rel, path) in files {
        code += &format!(
            "    ({rel:?}, include_bytes!({:?})),\n",
            path.display().to_string()
        );
    }
    code += "];\n";
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("assets.rs");
    fs::write(out, code).unwrap();
}
