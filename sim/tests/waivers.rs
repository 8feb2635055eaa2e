//! Each waiver of the checker quotes the sentence of README.md or docs/ that admits its
//! limit to a user: the sentence must be there, word for word (line breaks aside), so a
//! doc that stops admitting it takes the waiver with it.

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
