//! idemkey-server: reference backend (work in progress).
fn main() {}
