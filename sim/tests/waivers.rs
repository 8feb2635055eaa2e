//! Each waiver of the checker quotes the sentence of README.md or docs/ that admits its
//! limit to a user: the sentence must be there, word for word (line breaks aside), so a
//! doc that stops admitting it takes the waiver with it. So does each seed the regression
//! list keeps failing on purpose.

use idemkey_sim::waiver::{ALL, NAMES};

/// `text` with every run of white space made one space.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_waiver_quotes_its_docs() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for w in ALL {
        let (file, quote) = w.doc();
        assert!(
            file == "README.md" || file.starts_with("docs/"),
            "{}: {file} is not a user doc",
            w.name()
        );
        let text = std::fs::read_to_string(format!("{root}/{file}"))
            .unwrap_or_else(|e| panic!("{}: cannot read {file}: {e}", w.name()));
        assert!(
            words(&text).contains(&words(quote)),
            "{}: {file} no longer says: {quote}",
            w.name()
        );
    }
}

#[test]
fn every_waiver_is_listed_once() {
    let mut names: Vec<&str> = ALL.iter().map(|w| w.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), NAMES.len());
    for (i, w) in ALL.iter().enumerate() {
        assert_eq!(w.index(), i, "{}", w.name());
    }
}

/// The sentences the comment lines of `block` quote as `admits: FILE: "..."` (a quote may
/// run over several comment lines), with their files.
fn admitted(block: &[&str]) -> Vec<(String, String)> {
    let text = block
        .iter()
        .map(|l| l.trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("admits: ") {
        rest = &rest[at + "admits: ".len()..];
        let Some((file, quoted)) = rest.split_once(": \"") else {
            break;
        };
        let Some((quote, after)) = quoted.split_once('"') else {
            break;
        };
        out.push((file.to_string(), quote.to_string()));
        rest = after;
    }
    out
}

/// Each seed sim/regressions.txt lists as failing on purpose (`SEED fails PROPERTY`) is a
/// promise withdrawn: the comment block it stands in quotes the sentence of README.md or
/// docs/ that admits the limit to a user, word for word, as a waiver does.
#[test]
fn every_known_failure_stands_beside_the_docs_sentence_that_admits_it() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let list = include_str!("../regressions.txt");
    let mut block: Vec<&str> = Vec::new();
    for line in list.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with('#') {
            block.push(line);
            continue;
        }
        if w.get(1) == Some(&"fails") {
            let quotes = admitted(&block);
            assert!(
                !quotes.is_empty(),
                "seed {}: no `admits:` sentence beside it",
                w[0]
            );
            for (file, quote) in quotes {
                assert!(
                    file == "README.md" || file.starts_with("docs/"),
                    "seed {}: {file} is not a user doc",
                    w[0]
                );
                let text = std::fs::read_to_string(format!("{root}/{file}"))
                    .unwrap_or_else(|e| panic!("seed {}: cannot read {file}: {e}", w[0]));
                assert!(
                    words(&text).contains(&words(&quote)),
                    "seed {}: {file} no longer says: {quote}",
                    w[0]
                );
            }
            continue;
        }
        block.clear();
    }
}
