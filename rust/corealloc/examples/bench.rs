//! Box, Vec and String churn timed on the system allocator (glibc's malloc)
//! and on corealloc, each in a process of its own, on one thread and on
//! every CPU:
//!
//!     cargo run --release --example bench [-- ROUNDS]
//!
//! Linking corealloc makes it the process's malloc, so std's System would
//! be corealloc here as well: the system allocator is glibc's malloc,
//! reached through dlsym(RTLD_NEXT) as a program without corealloc reaches
//! it, behind std's System logic.
use std::alloc::{GlobalAlloc, Layout};
use std::os::raw::{c_char, c_void};
use std::process::Command;
use std::ptr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use corealloc::Corealloc;

/// The parent sets it in each child's environment: "system" or "corealloc".
const ALLOCATOR_VARIABLE: &[u8] = b"CHURN_ALLOCATOR\0";
const ALLOCATORS: [&str; 2] = ["system", "corealloc"];
const WORKLOADS: [(&str, fn(usize) -> usize); 3] = [("box", boxes), ("vec", vecs), ("string", strings)];

extern "C" {
    fn getenv(name: *const c_char) -> *const c_char;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;

const UNDECIDED: u8 = 0;
const SYSTEM: u8 = 1;
const COREALLOC: u8 = 2;
static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// glibc's functions, found with the choice, at the first allocation
/// (before main, on one thread).
static GLIBC_MALLOC: AtomicUsize = AtomicUsize::new(0);
static GLIBC_CALLOC: AtomicUsize = AtomicUsize::new(0);
static GLIBC_REALLOC: AtomicUsize = AtomicUsize::new(0);
static GLIBC_ALIGNED_ALLOC: AtomicUsize = AtomicUsize::new(0);
static GLIBC_FREE: AtomicUsize = AtomicUsize::new(0);

fn choice() -> u8 {
    let c = CHOICE.load(Relaxed);
    if c != UNDECIDED {
        return c;
    }
    let value = unsafe { getenv(ALLOCATOR_VARIABLE.as_ptr() as *const c_char) };
    let system = !value.is_null() && unsafe { std::ffi::CStr::from_ptr(value) }.to_bytes() == b"system";
    if system {
        for (slot, name) in [(&GLIBC_MALLOC, "malloc\0"), (&GLIBC_CALLOC, "calloc\0"),
                             (&GLIBC_REALLOC, "realloc\0"), (&GLIBC_ALIGNED_ALLOC, "aligned_alloc\0"),
                             (&GLIBC_FREE, "free\0")] {
            let f = unsafe { dlsym(RTLD_NEXT, name.as_ptr() as *const c_char) };
            if f.is_null() {
                std::process::abort(); // no glibc below us: nothing to compare with
            }
            slot.store(f as usize, Relaxed);
        }
    }
    let c = if system { SYSTEM } else { COREALLOC };
    CHOICE.store(c, Relaxed);
    c
}

/// std's System on glibc: malloc when its 16-byte alignment suffices.
struct Glibc;

impl Glibc {
    fn malloc_aligns(layout: &Layout) -> bool {
        layout.align() <= 16 && layout.align() <= layout.size()
    }
}

unsafe impl GlobalAlloc for Glibc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::malloc_aligns(&layout) {
            let malloc: unsafe extern "C" fn(usize) -> *mut c_void = std::mem::transmute(GLIBC_MALLOC.load(Relaxed));
            malloc(layout.size()) as *mut u8
        } else {
            let aligned_alloc: unsafe extern "C" fn(usize, usize) -> *mut c_void =
                std::mem::transmute(GLIBC_ALIGNED_ALLOC.load(Relaxed));
            aligned_alloc(layout.align(), layout.size()) as *mut u8
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !Self::malloc_aligns(&layout) {
            let p = self.alloc(layout);
            if !p.is_null() {
                ptr::write_bytes(p, 0, layout.size());
            }
            return p;
        }
        let calloc: unsafe extern "C" fn(usize, usize) -> *mut c_void = std::mem::transmute(GLIBC_CALLOC.load(Relaxed));
        calloc(1, layout.size()) as *mut u8
    }

    unsafe fn dealloc(&self, p: *mut u8, _layout: Layout) {
        let free: unsafe extern "C" fn(*mut c_void) = std::mem::transmute(GLIBC_FREE.load(Relaxed));
        free(p as *mut c_void)
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        if Self::malloc_aligns(&new_layout) {
            let realloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void =
                std::mem::transmute(GLIBC_REALLOC.load(Relaxed));
            return realloc(p as *mut c_void, new_size) as *mut u8;
        }
        let q = self.alloc(new_layout);
        if !q.is_null() {
            ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
            self.dealloc(p, layout);
        }
        q
    }
}

/// This process's global allocator: glibc's or corealloc, as chosen.
struct Chosen;

unsafe impl GlobalAlloc for Chosen {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if choice() == SYSTEM { Glibc.alloc(layout) } else { Corealloc.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if choice() == SYSTEM { Glibc.alloc_zeroed(layout) } else { Corealloc.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if choice() == SYSTEM { Glibc.dealloc(p, layout) } else { Corealloc.dealloc(p, layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if choice() == SYSTEM { Glibc.realloc(p, layout, new_size) } else { Corealloc.realloc(p, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Chosen = Chosen;

/// Keeps the optimiser from removing an allocation it could prove unused.
fn black_box<T>(x: T) -> T {
    unsafe {
        let y = ptr::read_volatile(&x);
        std::mem::forget(x);
        y
    }
}

/// Boxed slices of 16 to 1015 bytes replacing each other in a ring of 1024.
fn boxes(rounds: usize) -> usize {
    let mut ring: Vec<Option<Box<[u8]>>> = (0..1024).map(|_| None).collect();
    let mut sum = 0;
    for i in 0..rounds {
        let size = 16 + i * 7919 % 1000;
        let b = black_box(vec![i as u8; size].into_boxed_slice());
        sum += b[size - 1] as usize;
        ring[i % 1024] = Some(b);
    }
    sum
}

/// Vectors grown one push at a time to 1 to 64 elements, then dropped.
fn vecs(rounds: usize) -> usize {
    let (mut pushed, mut sum, mut i) = (0, 0, 0);
    while pushed < rounds {
        let n = 1 + i * 31 % 64;
        let mut v = Vec::new();
        for j in 0..n {
            v.push(j as u64);
        }
        sum += black_box(v).len();
        pushed += n;
        i += 1;
    }
    sum
}

/// Formatted strings, extended, kept in batches of 256.
fn strings(rounds: usize) -> usize {
    let mut words = Vec::with_capacity(256);
    let mut sum = 0;
    for i in 0..rounds {
        let mut s = i.to_string();
        s.push_str("-churn");
        words.push(black_box(s));
        if words.len() == 256 {
            sum += words.iter().map(|w| w.len()).sum::<usize>();
            words.clear();
        }
    }
    sum
}

/// Best of three runs of `work` on `threads` threads, in milliseconds.
fn time(work: fn(usize) -> usize, threads: usize, rounds: usize) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..threads).map(|_| s.spawn(move || work(rounds))).collect();
                for h in handles {
                    black_box(h.join().unwrap());
                }
            });
            start.elapsed().as_secs_f64() * 1000.0
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let rounds: usize = std::env::args().nth(1).map_or(2_000_000, |r| r.parse().expect("ROUNDS is a number"));
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let thread_counts = if cpus > 1 { vec![1, cpus] } else { vec![1] };
    if unsafe { !getenv(ALLOCATOR_VARIABLE.as_ptr() as *const c_char).is_null() } {
        // A child: one line per workload and thread count.
        for (name, work) in WORKLOADS {
            for &threads in &thread_counts {
                println!("{} {} {}", name, threads, time(work, threads, rounds));
            }
        }
        return;
    }
    let variable = std::str::from_utf8(&ALLOCATOR_VARIABLE[..ALLOCATOR_VARIABLE.len() - 1]).unwrap();
    let results: Vec<Vec<f64>> = ALLOCATORS
        .iter()
        .map(|allocator| {
            let out = Command::new(std::env::current_exe().unwrap()).arg(rounds.to_string())
                .env(variable, allocator).output().expect("cannot run the benchmark's child");
            assert!(out.status.success(), "{}: {}", allocator, String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).lines()
                .map(|line| line.rsplit(' ').next().unwrap().parse().unwrap()).collect()
        })
        .collect();
    println!("{} rounds per thread, best of 3 (ms)", rounds);
    println!("{:<8} {:>7} {:>10} {:>10} {:>8}", "workload", "threads", "system", "corealloc", "speedup");
    let rows = WORKLOADS.iter().flat_map(|(name, _)| thread_counts.iter().map(move |t| (*name, *t)));
    for (i, (name, threads)) in rows.enumerate() {
        let (system, corealloc) = (results[0][i], results[1][i]);
        println!("{:<8} {:>7} {:>10.1} {:>10.1} {:>7.2}x", name, threads, system, corealloc, system / corealloc);
    }
}
