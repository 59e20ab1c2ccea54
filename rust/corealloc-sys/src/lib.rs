//! The raw API of corealloc, a per-CPU (rseq) malloc for Linux: the
//! functions of `include/corealloc.h` (its man page is corealloc(3)), with
//! the library built from this repository and linked statically.
//!
//! Linking corealloc makes it the process's `malloc` as well: its archive
//! defines the whole malloc family, as `libcorealloc.a` does for a C
//! program, so the C code of the process allocates from it too.
use std::os::raw::{c_char, c_int, c_void};

extern "C" {
    pub fn corealloc_malloc(size: usize) -> *mut c_void;
    pub fn corealloc_calloc(count: usize, size: usize) -> *mut c_void;
    pub fn corealloc_realloc(ptr: *mut c_void, size: usize) -> *mut c_void;
    pub fn corealloc_free(ptr: *mut c_void);
    pub fn corealloc_free_sized(ptr: *mut c_void, size: usize);
    pub fn corealloc_aligned_alloc(alignment: usize, size: usize) -> *mut c_void;
    pub fn corealloc_posix_memalign(out: *mut *mut c_void, alignment: usize, size: usize) -> c_int;
    pub fn corealloc_free_aligned_sized(ptr: *mut c_void, alignment: usize, size: usize);
    pub fn corealloc_memalign(alignment: usize, size: usize) -> *mut c_void;
    pub fn corealloc_valloc(size: usize) -> *mut c_void;
    pub fn corealloc_pvalloc(size: usize) -> *mut c_void;
    pub fn corealloc_reallocarray(ptr: *mut c_void, count: usize, size: usize) -> *mut c_void;
    pub fn corealloc_usable_size(ptr: *const c_void) -> usize;

    /// For any pointer into a live block of corealloc's (interior pointers
    /// included): the block's first byte; for any other pointer, null.
    pub fn corealloc_object_start(ptr: *const c_void) -> *mut c_void;
    /// As corealloc_object_start, the block's usable size (0 for others).
    pub fn corealloc_object_size(ptr: *const c_void) -> usize;

    /// Returns every free byte that can go back to the OS; returns how many.
    pub fn corealloc_trim() -> usize;

    /// The statistics report, as text (`json == 0`) or JSON, snprintf-like.
    pub fn corealloc_stats_snprint(buf: *mut c_char, size: usize, json: c_int) -> usize;
    /// The statistics report written to a file descriptor: 0, or -1 and errno.
    pub fn corealloc_stats_write(fd: c_int, json: c_int) -> c_int;

    /// The library's version, a NUL-terminated string such as "0.1.0".
    pub fn corealloc_version() -> *const c_char;
    /// The front end in use: "rseq", "per-thread", or an ablation's name.
    pub fn corealloc_frontend() -> *const c_char;

    /// With COREALLOC_PROFILE=1: writes a heap profile to `path` (a
    /// NUL-terminated file name; null: the next numbered file), which
    /// `corealloc prof --dump` reads. 0, or -1 and errno (ENOTSUP when
    /// profiling is off).
    pub fn corealloc_profile_dump(path: *const c_char) -> c_int;
}
