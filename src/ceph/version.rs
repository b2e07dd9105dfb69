//! Which librados and librbd the dynamic loader gave this process, and
//! whether they are new enough: `cephbench --version` prints them, and every
//! command that talks to a cluster refuses to start on a Ceph older than 16.2
//! (pacific), the release cephbench is built and tested against.
//!
//! librados' own version (`rados_version`) has stayed 3.0.0 since luminous,
//! so it says nothing about the release; librbd's (`rbd_version`) moves with
//! it (1.15 octopus, 1.16 pacific, 1.18 reef, ...), so the check reads
//! librbd's. Both libraries come from one Ceph source package and are
//! installed in lockstep (Debian's librbd1 depends on its own version of
//! librados2). The Ceph release string (`16.2.15`) is read, when it can be,
//! from `ceph_version_to_str` in libceph-common, the private library librados
//! itself loads; it is only printed, never required.
//!
//! A library that is missing altogether, or so old that a symbol cephbench
//! needs is not in it, stops the dynamic loader before `main` runs: the
//! package's `/usr/bin/cephbench` wrapper checks for that first
//! (`packaging/cephbench.sh`).

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;

use ceph_sys as sys;

/// The oldest librbd cephbench runs with: Ceph 16.2 (pacific)'s, 1.16.
pub const MIN_LIBRBD: (i32, i32) = (1, 16);

/// The libraries this process runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Libraries {
    /// `rados_version`: major, minor, extra.
    pub librados: (i32, i32, i32),
    /// `rbd_version`: major, minor, extra.
    pub librbd: (i32, i32, i32),
    /// The Ceph release of the loaded libceph-common (e.g. `16.2.15`), when
    /// it says.
    pub ceph: Option<String>,
    /// The file librados was loaded from.
    pub librados_path: Option<PathBuf>,
    /// The file librbd was loaded from.
    pub librbd_path: Option<PathBuf>,
}

impl Libraries {
    /// Asks the loaded libraries.
    pub fn loaded() -> Libraries {
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: rados_version only writes three ints through valid pointers.
        unsafe { sys::rados_version(&mut a, &mut b, &mut c) };
        let librados = (a, b, c);
        let (mut a, mut b, mut c) = (0, 0, 0);
        // SAFETY: rbd_version only writes three ints through valid pointers.
        unsafe { sys::rbd_version(&mut a, &mut b, &mut c) };
        let librbd = (a, b, c);
        Libraries {
            librados,
            librbd,
            ceph: ceph_version(),
            librados_path: file_of(sys::rados_version as *const c_void),
            librbd_path: file_of(sys::rbd_version as *const c_void),
        }
    }

    /// `None` when the libraries are new enough; else the one-line reason
    /// and what to install.
    pub fn too_old(&self) -> Option<String> {
        let (major, minor, _) = self.librbd;
        if (major, minor) >= MIN_LIBRBD {
            return None;
        }
        let ceph = match &self.ceph {
            Some(v) => format!(" (Ceph {v})"),
            None => String::new(),
        };
        Some(format!(
            "librbd {}{ceph}{} is older than Ceph 16.2 (pacific, librbd {}.{}), the oldest \
             cephbench runs with: install librados2 and librbd1 16.2 or newer \
             (`apt install librados2 librbd1`)",
            dotted(self.librbd),
            self.librbd_path
                .as_ref()
                .map(|p| format!(" from {}", p.display()))
                .unwrap_or_default(),
            MIN_LIBRBD.0,
            MIN_LIBRBD.1,
        ))
    }

    /// Two lines for `--version`: each library's version and file, the Ceph
    /// release on librados' line.
    pub fn describe(&self) -> String {
        let from = |p: &Option<PathBuf>| match p {
            Some(p) => format!(" from {}", p.display()),
            None => String::new(),
        };
        let ceph = match &self.ceph {
            Some(v) => format!(" (Ceph {v})"),
            None => String::new(),
        };
        format!(
            "librados {}{}{ceph}\nlibrbd {}{}",
            dotted(self.librados),
            from(&self.librados_path),
            dotted(self.librbd),
            from(&self.librbd_path),
        )
    }
}

fn dotted((a, b, c): (i32, i32, i32)) -> String {
    format!("{a}.{b}.{c}")
}

/// The file of the shared object that holds `addr`.
fn file_of(addr: *const c_void) -> Option<PathBuf> {
    // SAFETY: Dl_info is plain data (pointers and ints); all zeroes is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr reads no memory at `addr` (it only looks the address up
    // in the loader's list of mapped objects) and writes `info`, a valid
    // Dl_info.
    let found = unsafe { libc::dladdr(addr, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: on success dli_fname points at the loader's NUL-terminated name
    // of a loaded object, which stays valid while that object is loaded (the
    // libraries this binary links are never unloaded).
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let name = name.to_str().ok()?;
    (!name.is_empty()).then(|| PathBuf::from(name))
}

/// `ceph_version_to_str()` of the loaded libceph-common (C++, no
/// arguments, returns the `const char *` of a static string), if it is there.
fn ceph_version() -> Option<String> {
    // The Itanium C++ ABI name of `const char *ceph_version_to_str()`. A
    // function returning std::string would carry the [abi:cxx11] tag in its
    // name (`B5cxx11`), so a symbol of this exact name returns a plain pointer.
    const SYMBOL: &CStr = c"_Z19ceph_version_to_strv";
    // SAFETY: dlsym with RTLD_DEFAULT searches the objects loaded at start-up
    // (libceph-common comes in with librados) and returns null when none has
    // the symbol; SYMBOL is NUL-terminated.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, SYMBOL.as_ptr()) };
    if f.is_null() {
        return None;
    }
    // SAFETY: the symbol is the function `const char *ceph_version_to_str()`
    // (see above); a C++ function without arguments returning a pointer is
    // called like the C function of that type.
    let f: unsafe extern "C" fn() -> *const c_char = unsafe { std::mem::transmute(f) };
    // SAFETY: it takes no arguments and returns a pointer to a static string.
    let p = unsafe { f() };
    if p.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated static string of libceph-common (CEPH_GIT_NICE_VER).
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy();
    let s: String = s.chars().take(64).collect();
    let ok = s.starts_with(|c: char| c.is_ascii_digit()) && s.chars().all(|c| c.is_ascii_graphic());
    ok.then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs(librbd: (i32, i32, i32), ceph: Option<&str>) -> Libraries {
        Libraries {
            librados: (3, 0, 0),
            librbd,
            ceph: ceph.map(String::from),
            librados_path: Some("/usr/lib/x86_64-linux-gnu/librados.so.2".into()),
            librbd_path: Some("/usr/lib/x86_64-linux-gnu/librbd.so.1".into()),
        }
    }

    #[test]
    fn pacific_and_newer_pass_octopus_does_not() {
        assert_eq!(libs((1, 16, 0), Some("16.2.15")).too_old(), None);
        assert_eq!(libs((1, 18, 0), Some("18.2.7")).too_old(), None);
        assert_eq!(libs((2, 0, 0), None).too_old(), None);
        let e = libs((1, 15, 0), Some("15.2.17")).too_old().unwrap();
        assert_eq!(
            e,
            "librbd 1.15.0 (Ceph 15.2.17) from /usr/lib/x86_64-linux-gnu/librbd.so.1 is older \
             than Ceph 16.2 (pacific, librbd 1.16), the oldest cephbench runs with: install \
             librados2 and librbd1 16.2 or newer (`apt install librados2 librbd1`)"
        );
        assert!(!e.contains('\n'));
    }

    #[test]
    fn describe_names_versions_and_files() {
        assert_eq!(
            libs((1, 16, 0), Some("16.2.15")).describe(),
            "librados 3.0.0 from /usr/lib/x86_64-linux-gnu/librados.so.2 (Ceph 16.2.15)\n\
             librbd 1.16.0 from /usr/lib/x86_64-linux-gnu/librbd.so.1"
        );
    }

    #[test]
    fn the_loaded_libraries_answer() {
        let l = Libraries::loaded();
        assert_eq!(l.librados.0, 3, "{l:?}");
        assert!(l.librbd >= (1, 16, 0), "{l:?}");
        assert!(
            l.librados_path.is_some() && l.librbd_path.is_some(),
            "{l:?}"
        );
        assert!(l.too_old().is_none(), "{l:?}");
    }
}
