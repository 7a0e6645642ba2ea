//! The heap's allocator: dlmalloc, as the standard library's default on wasm32, but growing the
//! WebAssembly memory [`GROWTH`] at a time instead of by what each allocation needs (a 64 KiB
//! page at a time, often), never past a limit the reader may set, and remembering an allocation
//! it could not make, so that the trap that follows reads as what it is.
//!
//! A `memory.grow` costs about the same whatever its size, and it is not cheap: in V8 (Node 20,
//! the engine of Chromium) 3,000 grows of one 64 KiB page took 755 ms, 0.25 ms each — the engine
//! replaces the memory's `ArrayBuffer` and accounts the new bytes to its GC every time. With the
//! standard allocator a scan whose heap climbs to 200 MB paid for thousands of grows: on a hive
//! dataset's count (84 files, 2,208 small tasks) `dlmalloc::malloc` was 2.1 s of a 7.8 s profile,
//! the GC 2.9 s. Growing 16 MiB at a time makes that a dozen grows. The memory reserved but not
//! yet used is never touched, so the engine commits no pages for it.
//!
//! **Out of memory.** When the heap cannot grow (the engine's 4 GiB, or [`set_limit`]'s bound —
//! near which it grows a page at a time: [`finer`]), Rust's allocation-failure handler aborts:
//! the instance traps with a bare `unreachable`, and no panic hook runs (zlib-rs and zstd handle a
//! failed allocation themselves, as an error). A dataset that held every footer open failed that way after 23–102 s — as
//! `INTERNAL: unreachable`, which says nothing of memory. So a failed allocation records its size
//! ([`take_failure`]) before the abort: the JS side asks after a trap, and reports
//! `OUT_OF_MEMORY` with the size and the memory in use.
//!
//! WebAssembly without threads (this build) runs one thread per instance, so the allocator needs
//! no lock.

use core::alloc::{GlobalAlloc, Layout};
use core::arch::wasm32;
use core::ptr::{addr_of_mut, null_mut};
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use dlmalloc::Dlmalloc;

/// Bytes the WebAssembly memory grows by, at least, when the heap needs more.
pub const GROWTH: usize = 16 << 20;

/// Bytes of a WebAssembly page.
const PAGE: usize = 64 << 10;

/// The most bytes the memory may grow to ([`set_limit`]); `usize::MAX`: the engine's own limit.
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The size of the last allocation that failed, 0 if none since it was last taken.
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// The memory below dlmalloc: what its own wasm system allocator does (grow the memory, never give
/// it back), refusing to grow past [`LIMIT`]. (dlmalloc's also hands out the part of the initial
/// memory the linker left after the data, under 64 KiB: not worth an `extern` of linker symbols.)
struct Memory;

// SAFETY: `alloc` returns either null (allowed) or a fresh region from `memory.grow` that nothing
// else owns; the others refuse everything (as dlmalloc's own wasm allocator does), which is allowed.
unsafe impl dlmalloc::Allocator for Memory {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let pages = size.div_ceil(PAGE);
        let now = wasm32::memory_size(0).saturating_mul(PAGE);
        if now.saturating_add(pages.saturating_mul(PAGE)) > LIMIT.load(Ordering::Relaxed) {
            return (null_mut(), 0, 0);
        }
        let previous = wasm32::memory_grow(0, pages);
        if previous == usize::MAX {
            return (null_mut(), 0, 0);
        }
        let base = previous * PAGE;
        let size = pages * PAGE;
        // The region must not end at the very top of the address space (a pointer one past it would
        // wrap to 0): keep its last bytes back, as dlmalloc's own does.
        if base.wrapping_add(size) == 0 {
            return (base as *mut u8, size - 16, 0);
        }
        (base as *mut u8, size, 0)
    }

    fn remap(&self, _ptr: *mut u8, _oldsize: usize, _newsize: usize, _can_move: bool) -> *mut u8 {
        null_mut()
    }

    fn free_part(&self, _ptr: *mut u8, _oldsize: usize, _newsize: usize) -> bool {
        false
    }

    fn free(&self, _ptr: *mut u8, _size: usize) -> bool {
        false
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        false
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        PAGE
    }
}

static mut HEAP: Dlmalloc<Memory> = const {
    let mut heap = Dlmalloc::new_with_allocator(Memory);
    assert!(heap.set_granularity(GROWTH));
    heap
};

/// Bounds the WebAssembly memory to `bytes`: past it an allocation fails as if the engine's limit
/// were reached. A bound below what the memory has already only stops it growing (memory never
/// shrinks).
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// The size of the last allocation that failed since the last call (taken), if any.
pub fn take_failure() -> Option<usize> {
    match FAILED.swap(0, Ordering::Relaxed) {
        0 => None,
        size => Some(size),
    }
}

/// Whether the growth step was turned down to a page (see [`finer`]).
static FINE: AtomicBool = AtomicBool::new(false);

/// Under a limit, the first time the heap cannot grow, turns its growth step down from
/// [`GROWTH`] to one page, and says whether the allocation is worth trying again: 16 MiB steps
/// would stop up to 16 MiB short of the limit (a 32 MiB limit held 17 MiB). Further growth is a
/// page at a time, which costs only near the limit.
fn finer(heap: &mut Dlmalloc<Memory>) -> bool {
    if LIMIT.load(Ordering::Relaxed) == usize::MAX || FINE.swap(true, Ordering::Relaxed) {
        return false;
    }
    heap.set_granularity(PAGE)
}

/// `call` (a dlmalloc allocation) on the heap; once more in page steps if it failed under a
/// limit ([`finer`]); and a failure that stands is noted with `size` (the abort that follows
/// cannot say it).
#[inline]
fn allocate(size: usize, mut call: impl FnMut(&mut Dlmalloc<Memory>) -> *mut u8) -> *mut u8 {
    // SAFETY: see the `GlobalAlloc` impl: one thread, no overlapping calls, so this is the only
    // reference to the heap while it lives.
    let heap = unsafe { &mut *addr_of_mut!(HEAP) };
    let ptr = call(heap);
    if !ptr.is_null() {
        return ptr;
    }
    let ptr = if finer(heap) { call(heap) } else { ptr };
    if ptr.is_null() {
        failed(size)
    } else {
        ptr
    }
}

/// Notes a failed allocation of `size` bytes.
#[cold]
fn failed(size: usize) -> *mut u8 {
    FAILED.store(size.max(1), Ordering::Relaxed);
    null_mut()
}

/// The global allocator of the WebAssembly build.
pub struct Allocator;

#[global_allocator]
static GLOBAL: Allocator = Allocator;

// SAFETY: dlmalloc is a correct allocator for one thread, and a wasm32 instance without the
// atomics feature has exactly one: no two calls can overlap, so the `static mut` is never aliased.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: dlmalloc's `malloc` with the layout's size and alignment.
        allocate(layout.size(), |heap| unsafe {
            heap.malloc(layout.size(), layout.align())
        })
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { (*addr_of_mut!(HEAP)).free(ptr, layout.size(), layout.align()) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: dlmalloc's `calloc` with the layout's size and alignment.
        allocate(layout.size(), |heap| unsafe {
            heap.calloc(layout.size(), layout.align())
        })
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's block and layout; a failed realloc leaves the block as it was, so
        // trying again is sound.
        allocate(new_size, |heap| unsafe {
            heap.realloc(ptr, layout.size(), layout.align(), new_size)
        })
    }
}
