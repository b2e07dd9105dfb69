//! Keys stay secret: cephbench never reads key material itself (librados
//! does), never prints config values that could hold one, and warns when a
//! keyring it uses is readable by other users.
#![forbid(unsafe_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Warnings for keyring files (a comma- or space-separated list, as the
/// `keyring` option holds) that exist and are readable by group or others.
pub fn keyring_warnings(keyring_option: &str) -> Vec<String> {
    keyring_option
        .split([',', ' ', ';'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            let mode = std::fs::metadata(Path::new(p)).ok()?.permissions().mode();
            (mode & 0o077 != 0).then(|| {
                format!(
                    "keyring {p} is readable by group/others (mode {:04o}); restrict it: chmod 600 {p}",
                    mode & 0o7777
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_keyrings_are_flagged_and_private_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open.keyring");
        let private = dir.path().join("private.keyring");
        std::fs::write(&open, "x").unwrap();
        std::fs::write(&private, "x").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
        let list = format!("{},{},/nonexistent/k", open.display(), private.display());
        let w = keyring_warnings(&list);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("open.keyring") && w[0].contains("0644") && w[0].contains("chmod 600")
        );
    }
}
