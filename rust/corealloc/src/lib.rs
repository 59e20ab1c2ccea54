//! corealloc, a per-CPU (rseq) malloc for Linux, as Rust's global allocator:
//!
//! ```no_run
//! #[global_allocator]
//! static GLOBAL: corealloc::Corealloc = corealloc::Corealloc;
//!
//! fn main() {
//!     let v = vec![1u64; 1000]; // from corealloc
//!     println!("{} bytes usable", corealloc::usable_size(v.as_ptr() as *const u8));
//!     println!("{}", corealloc::stats_json());
//! }
//! ```
//!
//! The library is built from this repository and linked statically
//! (corealloc-sys). Linking it makes it the process's `malloc` as well, so
//! the C code of the process allocates from it too; the `COREALLOC_*`
//! environment variables of corealloc(3) tune it.
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

use corealloc_sys as sys;

/// corealloc as a [`GlobalAlloc`].
pub struct Corealloc;

/// Whether `corealloc_malloc` gives the alignment: blocks are 16-aligned,
/// and those of up to 8 bytes 8-aligned (std's System reasons the same way
/// about glibc's malloc).
#[inline]
fn malloc_aligns(layout: &Layout) -> bool {
    layout.align() <= 16 && layout.align() <= layout.size()
}

unsafe impl GlobalAlloc for Corealloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if malloc_aligns(&layout) {
            sys::corealloc_malloc(layout.size()) as *mut u8
        } else {
            sys::corealloc_aligned_alloc(layout.align(), layout.size()) as *mut u8
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if malloc_aligns(&layout) {
            // calloc knows which memory is fresh from the OS and skips clearing it.
            return sys::corealloc_calloc(1, layout.size()) as *mut u8;
        }
        let p = self.alloc(layout);
        if !p.is_null() {
            ptr::write_bytes(p, 0, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        sys::corealloc_free(ptr as *mut c_void)
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if malloc_aligns(&new_layout) {
            return sys::corealloc_realloc(ptr as *mut c_void, new_size) as *mut u8;
        }
        let q = self.alloc(new_layout);
        if !q.is_null() {
            ptr::copy_nonoverlapping(ptr, q, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        q
    }
}

/// The usable size of the block starting at `ptr`: at least what was asked
/// for. 0 for a pointer corealloc did not hand out; the pointer is never
/// dereferenced, so any value is safe to pass.
pub fn usable_size(ptr: *const u8) -> usize {
    unsafe { sys::corealloc_usable_size(ptr as *const c_void) }
}

/// Returns to the operating system every free byte that can go back,
/// including the contents of every CPU's cache; returns how many.
pub fn trim() -> usize {
    unsafe { sys::corealloc_trim() }
}

/// The statistics report as one JSON object (corealloc(3)).
pub fn stats_json() -> String {
    report(true)
}

/// The statistics report as text, as `COREALLOC_STATS=1` prints it at exit.
pub fn stats_text() -> String {
    report(false)
}

fn report(json: bool) -> String {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let room = buf.len();
        let needed = unsafe { sys::corealloc_stats_snprint(buf.as_mut_ptr() as *mut c_char, room, json as c_int) };
        if needed < room {
            buf.truncate(needed);
            return String::from_utf8_lossy(&buf).into_owned();
        }
        // The report may grow between calls (this buffer is one allocation more).
        buf.resize(needed + 1024, 0);
    }
}

/// The library's version, such as "0.1.0".
pub fn version() -> &'static str {
    unsafe { CStr::from_ptr(sys::corealloc_version()) }.to_str().unwrap_or("")
}
