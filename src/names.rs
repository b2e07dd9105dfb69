//! Names, each rule in one place: the prefixes of everything cephbench makes
//! in a pool (so it can tell its own objects and images from anyone else's),
//! the names it accepts from the user (run names, group names and agent ids
//! are tokens; namespaces are a little wider), and this host's name, cleaned
//! into a token before it goes into an image or agent name.
#![forbid(unsafe_code)]

/// Every data object cephbench writes starts with this.
pub const DATA_PREFIX: &str = "cephbench_data.";
/// Every metadata object cephbench writes starts with this.
pub const META_PREFIX: &str = "cephbench_meta.";
/// Every image cephbench creates starts with this.
pub const IMAGE_PREFIX: &str = "cephbench_img.";
/// Every object of the group protocol starts with this.
pub const GROUP_PREFIX: &str = "cephbench_group.";

/// This host's name (`/proc/sys/kernel/hostname`), as `osd metadata` names
/// the host of each OSD.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// A new, unique image name: `cephbench_img.<host>.<pid>.<unix time>`, and
/// `.<n>` for the n-th after the first of this process (a suite comparing
/// two data pools makes both images in one pool within the same second).
pub fn new_image_name() -> String {
    static MADE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let name = format!(
        "{IMAGE_PREFIX}{}.{}.{now}",
        host_token(&hostname()),
        std::process::id()
    );
    if n == 0 {
        name
    } else {
        format!("{name}.{n}")
    }
}

/// Checks a token given as `what` (`--run-name`, `--group`, `--agent-id`):
/// 1–64 characters of `[A-Za-z0-9_-]`, safe in object names, caps strings
/// and shells alike.
pub fn validate_token(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "{what} '{name}' must be 1 to 64 letters, digits, '_' or '-'"
        ));
    }
    Ok(())
}

/// Checks a `-N/--namespace`: up to 128 characters of `[A-Za-z0-9_.-]`
/// ("" is the default namespace). Ceph allows more; these names survive
/// shells, caps strings (`namespace=NS`) and `ceph osd map` alike.
pub fn validate_namespace(ns: &str) -> Result<(), String> {
    if ns.len() > 128
        || !ns
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "--namespace '{ns}' must be at most 128 letters, digits, '_', '-' or '.'"
        ));
    }
    Ok(())
}

/// `host` as a token part: letters, digits and '-' kept, anything else
/// '_', at most 48 characters (room for what follows it in a name).
pub fn host_token(host: &str) -> String {
    host.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_namespaces_and_hosts() {
        assert!(validate_token("--run-name", "ok_Run-1").is_ok());
        assert_eq!(
            validate_token("--group", "a.b").unwrap_err(),
            "--group 'a.b' must be 1 to 64 letters, digits, '_' or '-'"
        );
        assert!(validate_token("--run-name", "").is_err());
        assert!(validate_token("--run-name", &"x".repeat(64)).is_ok());
        assert!(validate_token("--run-name", &"x".repeat(65)).is_err());
        assert!(validate_namespace("").is_ok());
        assert!(validate_namespace("bench.ns-1_a").is_ok());
        assert!(validate_namespace("a b").is_err());
        assert!(validate_namespace("a\u{1}").is_err());
        assert!(validate_namespace(&"n".repeat(128)).is_ok());
        assert!(validate_namespace(&"n".repeat(129)).is_err());
        assert_eq!(host_token("node-1.example.com"), "node-1_example_com");
        assert_eq!(host_token(&"h".repeat(60)).len(), 48);
        assert!(validate_token("--agent-id", &format!("{}-1", host_token("ä.b c"))).is_ok());
        let image = new_image_name();
        assert!(image.starts_with(IMAGE_PREFIX) && image.len() > IMAGE_PREFIX.len());
    }
}
