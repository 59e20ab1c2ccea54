//! The hand-written bindings do not drift from include/corealloc.h: the
//! same functions, and the crate's version is the library's.
use std::collections::BTreeSet;

fn functions(text: &str, prefix: &str) -> BTreeSet<String> {
    text.split(prefix)
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            rest[name.len()..].starts_with('(').then(|| name)
        })
        .collect()
}

#[test]
fn bindings_match_the_header() {
    let header = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../include/corealloc.h"));
    let bindings = include_str!("../src/lib.rs");
    let declared = functions(header, "corealloc_");
    let bound = functions(bindings, "fn corealloc_");
    assert!(declared.len() > 10, "no functions found in the header: {:?}", declared);
    assert_eq!(declared, bound, "include/corealloc.h and corealloc-sys differ");
}

#[test]
fn crate_version_is_the_library_s() {
    let version = unsafe { std::ffi::CStr::from_ptr(corealloc_sys::corealloc_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
