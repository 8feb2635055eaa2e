//! The module's allocator (lol_alloc's free list, made in `src/browser/ffi.rs`): many
//! blocks of many sizes and alignments, freed in a scrambled order and made again, keep
//! their bytes, and a heap that is emptied and filled again the same way does not grow.
//! This binary is built without the `browser` feature, whose global allocator that is, so
//! the blocks come from an instance of the same allocator of the test's own (std's
//! allocator serves the rest of the binary).

use core::alloc::{GlobalAlloc, Layout};
use lol_alloc::{AssumeSingleThreaded, FreeListAllocator};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

// SAFETY: wasm-bindgen-test runs the tests one at a time, on the page's one thread.
static ALLOC: AssumeSingleThreaded<FreeListAllocator> =
    unsafe { AssumeSingleThreaded::new(FreeListAllocator::new()) };

/// Block `i` from [`ALLOC`], filled with its own bytes; given back when dropped.
struct Block {
    i: u32,
    ptr: *mut u8,
    layout: Layout,
}

impl Block {
    fn new(i: u32, len: u32) -> Block {
        let layout = Layout::from_size_align(len as usize, [1, 4, 8, 16][i as usize % 4]).unwrap();
        // SAFETY: every layout made here has a size of 1 byte or more.
        let ptr = unsafe { ALLOC.alloc(layout) };
        assert!(!ptr.is_null(), "block {i} of {len} bytes was refused");
        assert_eq!(
            ptr as usize % layout.align(),
            0,
            "block {i} is not aligned to {}",
            layout.align()
        );
        // SAFETY: `ptr` holds `len` bytes, ours until dropped.
        let bytes = unsafe { core::slice::from_raw_parts_mut(ptr, layout.size()) };
        for (j, b) in bytes.iter_mut().enumerate() {
            *b = byte(i, j);
        }
        Block { i, ptr, layout }
    }

    /// Whether the block still holds the bytes it was filled with.
    fn intact(&self) -> bool {
        // SAFETY: as in `new`.
        let bytes = unsafe { core::slice::from_raw_parts(self.ptr, self.layout.size()) };
        bytes.iter().enumerate().all(|(j, &b)| b == byte(self.i, j))
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: allocated by `ALLOC` with this layout, and given back once.
        unsafe { ALLOC.dealloc(self.ptr, self.layout) }
    }
}

/// Byte `j` of block `i`.
fn byte(i: u32, j: usize) -> u8 {
    (i.wrapping_mul(31) ^ j as u32) as u8
}

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
    let mut live: Vec<Block> = Vec::new();
    for i in 0..400 {
        let len = [1 + r.next(64), 1 + r.next(4096), 1 + r.next(40_960)][r.next(3) as usize];
        live.push(Block::new(i, len));
    }
    for i in 400..800 {
        let gone = r.next(live.len() as u32) as usize;
        live.swap_remove(gone);
        let len = 1 + r.next(8192);
        live.push(Block::new(i, len));
    }
    for b in &live {
        assert!(b.intact(), "block {} was overwritten", b.i);
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
