//! The module's allocator (lol_alloc's free list, `src/lib.rs`), which this test binary
//! links too: many blocks of many sizes, freed in a scrambled order and made again, keep
//! their bytes, and a heap that is emptied and filled again the same way does not grow.

// Linked for its `#[global_allocator]`: a test that names nothing of the crate would run
// on std's allocator.
extern crate idemkey;

use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

/// A xorshift generator: the same scramble on every run.
struct Scramble(u32);

impl Scramble {
    fn next(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0 % n
    }
}

/// Block `i`'s bytes: its length and contents both follow from `i`.
fn block(i: u32, len: u32) -> Vec<u8> {
    (0..len).map(|j| (i.wrapping_mul(31) ^ j) as u8).collect()
}

/// The wasm memory's size in bytes.
fn memory_bytes() -> f64 {
    let m: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    m.buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

/// One round: 400 blocks of 1 byte to 40 KiB, half freed at random and made again with
/// other sizes, every survivor checked; then all freed. Returns the memory size at the end.
fn round(r: &mut Scramble) -> f64 {
    let mut live: Vec<(u32, Vec<u8>)> = Vec::new();
    for i in 0..400 {
        let len = [1 + r.next(64), 1 + r.next(4096), 1 + r.next(40_960)][r.next(3) as usize];
        live.push((i, block(i, len)));
    }
    for i in 400..800 {
        let gone = r.next(live.len() as u32) as usize;
        live.swap_remove(gone);
        let len = 1 + r.next(8192);
        live.push((i, block(i, len)));
    }
    for (i, bytes) in &live {
        assert_eq!(
            *bytes,
            block(*i, bytes.len() as u32),
            "block {i} was overwritten"
        );
    }
    drop(live);
    memory_bytes()
}

#[wasm_bindgen_test]
fn blocks_keep_their_bytes_and_freed_memory_is_reused() {
    let first = round(&mut Scramble(0x9e37_79b9));
    for _ in 0..5 {
        // The same scramble each time: the same blocks, which fit where the last ones were.
        let again = round(&mut Scramble(0x9e37_79b9));
        assert_eq!(again, first, "the heap grew from {first} to {again} bytes");
    }
}
