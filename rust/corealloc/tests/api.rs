//! corealloc's GlobalAlloc for every kind of layout, and the rest of the
//! safe API. (corealloc is this program's malloc too: the crate links it.)
use std::alloc::{GlobalAlloc, Layout};

use corealloc::Corealloc;

fn layouts() -> Vec<Layout> {
    let mut all = Vec::new();
    for align in [1, 2, 4, 8, 16, 32, 64, 4096, 65536] {
        for size in [1, 7, 8, 9, 16, 24, 100, 4096, 40000, 1 << 20] {
            all.push(Layout::from_size_align(size, align).unwrap());
        }
    }
    all
}

#[test]
fn blocks_are_aligned_usable_and_corealloc_s() {
    for layout in layouts() {
        unsafe {
            let p = Corealloc.alloc(layout);
            assert!(!p.is_null(), "{:?}", layout);
            assert_eq!(p as usize % layout.align(), 0, "{:?}", layout);
            assert!(corealloc::usable_size(p) >= layout.size(), "{:?}", layout);
            p.write_bytes(0xa5, layout.size());
            Corealloc.dealloc(p, layout);
        }
    }
}

#[test]
fn zeroed_blocks_are_zero() {
    for layout in layouts() {
        unsafe {
            // Dirty a block of the same size first, so a reused one is caught.
            let dirty = Corealloc.alloc(layout);
            dirty.write_bytes(0xff, layout.size());
            Corealloc.dealloc(dirty, layout);
            let p = Corealloc.alloc_zeroed(layout);
            assert!(std::slice::from_raw_parts(p, layout.size()).iter().all(|&b| b == 0), "{:?}", layout);
            assert_eq!(p as usize % layout.align(), 0, "{:?}", layout);
            Corealloc.dealloc(p, layout);
        }
    }
}

#[test]
fn realloc_keeps_contents_and_alignment() {
    for layout in layouts() {
        for new_size in [layout.size() / 2 + 1, layout.size() * 3] {
            unsafe {
                let p = Corealloc.alloc(layout);
                for i in 0..layout.size() {
                    *p.add(i) = i as u8;
                }
                let q = Corealloc.realloc(p, layout, new_size);
                assert_eq!(q as usize % layout.align(), 0, "{:?} to {}", layout, new_size);
                for i in 0..layout.size().min(new_size) {
                    assert_eq!(*q.add(i), i as u8, "{:?} to {}", layout, new_size);
                }
                Corealloc.dealloc(q, Layout::from_size_align(new_size, layout.align()).unwrap());
            }
        }
    }
}

#[test]
fn foreign_pointers_have_no_usable_size() {
    let on_the_stack = 0u64;
    assert_eq!(corealloc::usable_size(&on_the_stack as *const u64 as *const u8), 0);
}

#[test]
fn trim_returns_freed_memory() {
    // Large blocks freed stay resident (retained for reuse) until trimmed.
    let layout = Layout::from_size_align(4 << 20, 16).unwrap();
    unsafe {
        let p = Corealloc.alloc(layout);
        p.write_bytes(1, layout.size());
        Corealloc.dealloc(p, layout);
    }
    assert!(corealloc::trim() > 0);
}

#[test]
fn reports_and_version() {
    assert!(corealloc::stats_text().starts_with("corealloc statistics"));
    let json = corealloc::stats_json();
    assert!(json.starts_with('{') && json.trim_end().ends_with('}'), "{}", json);
    // The crates carry the library's version.
    assert_eq!(corealloc::version(), env!("CARGO_PKG_VERSION"));
}
