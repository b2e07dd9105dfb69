//! Generates raw bindings to librados and librbd from the system headers.
//!
//! Search order, as libsqlite3-sys and zstd-sys do it:
//! 1. `CEPH_INCLUDE_DIR` / `CEPH_LIB_DIR` from the environment;
//! 2. the default system paths (`/usr/include`, `/usr/local/include`).
//!
//! When the headers are missing the build stops with a message naming the
//! Debian packages that provide them.
//!
//! Besides the bindings it compiles one small C++ file, `shim/bufptr.cc`:
//! zero-copy RADOS writes, which librados offers only through its C++ API
//! (`rados/librados.hpp`, Debian's libradospp-dev). Its C functions
//! (`cephsys_*`, declared in `shim/bufptr.h`) are bound like the rest.

use std::env;
use std::path::{Path, PathBuf};

const HEADERS: [&str; 3] = ["rados/librados.h", "rbd/librbd.h", "rados/librados.hpp"];
const DEFAULT_INCLUDE_DIRS: [&str; 2] = ["/usr/include", "/usr/local/include"];

fn main() {
    println!("cargo:rerun-if-env-changed=CEPH_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=CEPH_LIB_DIR");
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=shim/bufptr.h");
    println!("cargo:rerun-if-changed=shim/bufptr.cc");

    let include_dir = find_include_dir();
    if let Some(lib_dir) = env::var_os("CEPH_LIB_DIR") {
        println!(
            "cargo:rustc-link-search=native={}",
            PathBuf::from(lib_dir).display()
        );
    }
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .include(&include_dir)
        .include("shim")
        .warnings(true)
        .file("shim/bufptr.cc")
        .compile("cephsys_shim");
    println!("cargo:rustc-link-lib=dylib=rados");
    println!("cargo:rustc-link-lib=dylib=rbd");
    println!("cargo:include={}", include_dir.display());

    let bindings = bindgen::Builder::default()
        .header("wrapper.h")
        .header("shim/bufptr.h")
        .clang_arg(format!("-I{}", include_dir.display()))
        .allowlist_function("rados_.*")
        .allowlist_function("rbd_.*")
        .allowlist_function("cephsys_.*")
        .allowlist_type("rados_.*")
        .allowlist_type("rbd_.*")
        .allowlist_var("LIBRADOS_.*")
        .allowlist_var("LIBRBD_.*")
        .allowlist_var("RBD_.*")
        .use_core()
        .ctypes_prefix("core::ffi")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .layout_tests(true)
        .generate()
        .unwrap_or_else(|e| {
            panic!(
                "bindgen failed on the Ceph headers in {}: {e}. \
                 Is libclang installed? On Debian: apt-get install libclang-dev clang",
                include_dir.display()
            )
        });

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("writing bindings.rs into OUT_DIR");
}

fn has_headers(dir: &Path) -> bool {
    HEADERS.iter().all(|h| dir.join(h).is_file())
}

fn find_include_dir() -> PathBuf {
    if let Some(dir) = env::var_os("CEPH_INCLUDE_DIR") {
        let dir = PathBuf::from(dir);
        if has_headers(&dir) {
            return dir;
        }
        panic!(
            "CEPH_INCLUDE_DIR={} does not contain {}. Point it at the directory holding \
             rados/ and rbd/, or unset it to use the system headers.",
            dir.display(),
            HEADERS.join(" and ")
        );
    }
    for dir in DEFAULT_INCLUDE_DIRS {
        let dir = PathBuf::from(dir);
        if has_headers(&dir) {
            return dir;
        }
    }
    panic!(
        "librados/librbd headers not found ({} in {}). Install them: \
         `apt-get install librados-dev libradospp-dev librbd-dev` (Debian/Ubuntu), \
         or set CEPH_INCLUDE_DIR and CEPH_LIB_DIR.",
        HEADERS.join(", "),
        DEFAULT_INCLUDE_DIRS.join(" or ")
    );
}
