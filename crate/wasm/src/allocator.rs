//! The heap's allocator: dlmalloc, as the standard library's default on wasm32, but growing the
//! WebAssembly memory [`GROWTH`] at a time instead of by what each allocation needs (a 64 KiB
//! page at a time, often).
//!
//! A `memory.grow` costs about the same whatever its size, and it is not cheap: in V8 (Node 20,
//! the engine of Chromium) 3,000 grows of one 64 KiB page took 755 ms, 0.25 ms each — the engine
//! replaces the memory's `ArrayBuffer` and accounts the new bytes to its GC every time. With the
//! standard allocator a scan whose heap climbs to 200 MB paid for thousands of grows: on a hive
//! dataset's count (84 files, 2,208 small tasks) `dlmalloc::malloc` was 2.1 s of a 7.8 s profile,
//! the GC 2.9 s. Growing 16 MiB at a time makes that a dozen grows. The memory reserved but not
//! yet used is never touched, so the engine commits no pages for it.
//!
//! WebAssembly without threads (this build) runs one thread per instance, so the allocator needs
//! no lock.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::addr_of_mut;

use dlmalloc::Dlmalloc;

/// Bytes the WebAssembly memory grows by, at least, when the heap needs more.
pub const GROWTH: usize = 16 << 20;

static mut HEAP: Dlmalloc = const {
    let mut heap = Dlmalloc::new();
    assert!(heap.set_granularity(GROWTH));
    heap
};

/// The global allocator of the WebAssembly build.
pub struct Allocator;

#[global_allocator]
static GLOBAL: Allocator = Allocator;

// SAFETY: dlmalloc is a correct allocator for one thread, and a wasm32 instance without the
// atomics feature has exactly one: no two calls can overlap, so the `static mut` is never aliased.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { (*addr_of_mut!(HEAP)).malloc(layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { (*addr_of_mut!(HEAP)).free(ptr, layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { (*addr_of_mut!(HEAP)).calloc(layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { (*addr_of_mut!(HEAP)).realloc(ptr, layout.size(), layout.align(), new_size) }
    }
}
