//! Builds libcorealloc.a with the repository's own CMake build (the one
//! `make` runs), so the archive is the one C programs link: a single object
//! whose internals are hidden, defining the whole malloc family.
//!
//! CMake is run directly, not through the cmake crate: with no dependency
//! from crates.io the crates build offline, and with Debian 12's cargo,
//! which reaches the crates.io index only through GitHub.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(command: &mut Command) {
    let status = command.status().unwrap_or_else(|e| panic!("cannot run {:?}: {}", command, e));
    assert!(status.success(), "{:?} failed: {}", command, status);
}

fn main() {
    let target = env::var("TARGET").unwrap();
    assert_eq!(target, env::var("HOST").unwrap(),
               "corealloc-sys builds the library for the machine it builds on only");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for input in ["CMakeLists.txt", "cmake", "include", "src"] {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    let build = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("build");
    run(Command::new("cmake").arg("-S").arg(&root).arg("-B").arg(&build).args([
        // An allocator is built optimised whatever the Rust profile.
        "-DCMAKE_BUILD_TYPE=Release",
        // The library alone; warnings stay warnings with compilers the
        // project's own builds do not use.
        "-DCOREALLOC_BUILD_TESTS=OFF",
        "-DCOREALLOC_TOOLS=OFF",
        "-DCOREALLOC_BENCH=OFF",
        "-DCOREALLOC_MAN_PAGES=OFF",
        "-DCOREALLOC_ABLATIONS=OFF",
        "-DCOREALLOC_WERROR=OFF",
    ]));
    let jobs = env::var("NUM_JOBS").unwrap_or_else(|_| "1".to_string());
    run(Command::new("cmake").arg("--build").arg(&build)
        .args(["--target", "corealloc_static", "--parallel", &jobs]));
    println!("cargo:rustc-link-search=native={}", build.join("src").display());
    println!("cargo:rustc-link-lib=static=corealloc");
}
