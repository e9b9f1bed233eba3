//! Running out of memory: one line and exit 1, never an abort.
//!
//! Rust's default answer to a failed allocation is to print "memory allocation of N bytes
//! failed" and abort (SIGABRT, exit 134, a core dump where enabled); on stable Rust that
//! handler cannot be replaced. So the Python extension, satcc-linkd and satcc-pcap's
//! stand-alone binary install [`ExitOnOom`] as their global allocator: it is the system
//! allocator, except that a failed allocation writes one line to stderr and ends the process
//! with `_exit(1)` (no destructors, no atexit handlers: nothing that could allocate again or
//! wait for a lock the failing thread holds).
//!
//! Fallible reservations (`try_reserve`) must still see a null pointer, so that a caller with a
//! better message (the simulator's series, a trace's timestamps) can give it: they run inside
//! [`fallible`], which marks the thread, and the allocator returns null there as usual.
//!
//! Soundness: the wrapper forwards every call to `System` unchanged; the thread mark is a
//! `const`-initialised thread-local `Cell` without a destructor (no allocation, usable during
//! thread teardown); the failure path uses only `write(2)` and `_exit(2)`, both
//! async-signal-safe.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static FALLIBLE: Cell<u32> = const { Cell::new(0) };
}

/// The line written before exiting (the CLI's wording for `MemoryError`).
const MESSAGE: &[u8] = b"satcc: error: out of memory (a request for ";
const MESSAGE_END: &[u8] = b" bytes failed: the run needs more memory than this process may use)\n";

/// Run `f` with failed allocations returned as null (for `try_reserve` and its kind).
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    struct Unmark;
    impl Drop for Unmark {
        fn drop(&mut self) {
            FALLIBLE.with(|c| c.set(c.get() - 1));
        }
    }
    FALLIBLE.with(|c| c.set(c.get() + 1));
    let _unmark = Unmark;
    f()
}

fn in_fallible() -> bool {
    FALLIBLE.try_with(|c| c.get() > 0).unwrap_or(false)
}

#[cold]
fn out_of_memory(size: usize) -> ! {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // SAFETY: write(2) on fd 2 with valid buffers and _exit(2): async-signal-safe calls that
    // neither allocate nor take locks.
    unsafe {
        for part in [MESSAGE, &digits[i..], MESSAGE_END] {
            let _ = libc::write(2, part.as_ptr().cast(), part.len());
        }
        libc::_exit(1)
    }
}

/// The system allocator, with a failed allocation ending the process in one line (exit 1)
/// outside [`fallible`].
pub struct ExitOnOom;

// SAFETY: every method forwards to `System` with the same arguments and returns its result;
// the only addition is diverging (never returning) when that result is null outside `fallible`.
unsafe impl GlobalAlloc for ExitOnOom {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let p = unsafe { System.alloc(layout) };
        if p.is_null() && !in_fallible() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() && !in_fallible() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() && !in_fallible() {
            out_of_memory(new_size);
        }
        p
    }
}
