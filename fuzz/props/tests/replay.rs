//! Every committed fuzz input, replayed through its target's properties on every
//! `cargo test`: the corpus (`fuzz/corpus/<target>/`) and the crash inputs libFuzzer
//! saved (`fuzz/artifacts/<target>/`), so a crash found once can never come back unseen.

use std::path::{Path, PathBuf};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(d) => d
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn every_corpus_and_crash_input_keeps_its_properties() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (name, check) in idemkey_props::TARGETS {
        let corpus = inputs(&fuzz.join("corpus").join(name));
        assert!(
            !corpus.is_empty(),
            "no committed corpus for fuzz target {name}"
        );
        for path in corpus
            .iter()
            .chain(&inputs(&fuzz.join("artifacts").join(name)))
        {
            let data = std::fs::read(path).unwrap();
            let run = std::panic::catch_unwind(|| check(&data));
            assert!(run.is_ok(), "{name}: {} breaks a property", path.display());
        }
    }
}

#[test]
fn every_target_has_a_fuzz_binary() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml")).unwrap();
    for (name, _) in idemkey_props::TARGETS {
        assert!(
            fuzz.join("fuzz_targets")
                .join(format!("{name}.rs"))
                .is_file()
                && manifest.contains(&format!("name = \"{name}\"")),
            "fuzz target {name} is missing from fuzz/"
        );
    }
}
