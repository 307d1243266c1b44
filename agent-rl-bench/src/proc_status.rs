//! The process's memory figures, read from `/proc/self/status` (Linux).

use std::io::{Error, ErrorKind};

/// The process's peak resident set so far, in bytes (`VmHWM`).
///
/// # Errors
/// When `/proc/self/status` cannot be read or has no such line.
pub fn peak_rss_bytes() -> std::io::Result<u64> {
    status_bytes("VmHWM")
}

/// The process's resident set now, in bytes (`VmRSS`).
///
/// # Errors
/// When `/proc/self/status` cannot be read or has no such line.
pub fn rss_bytes() -> std::io::Result<u64> {
    status_bytes("VmRSS")
}

/// The `field` line of `/proc/self/status` (given in kB there), in bytes.
fn status_bytes(field: &str) -> std::io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    parse_kib_line(&status, field)
        .map(|kib| kib * 1024)
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidData,
                format!("no {field} line in /proc/self/status"),
            )
        })
}

/// The number of kB on the `field:` line of a status text.
fn parse_kib_line(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_line_only() {
        let status = "VmHWMx:\t1 kB\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(parse_kib_line(status, "VmHWM"), Some(2048));
        assert_eq!(parse_kib_line(status, "VmRSS"), Some(1024));
        assert_eq!(parse_kib_line(status, "VmSwap"), None);
        assert_eq!(parse_kib_line("VmHWM:\tmany kB\n", "VmHWM"), None);
    }

    #[test]
    fn this_process_has_a_peak_at_least_its_resident_set() -> std::io::Result<()> {
        let now = rss_bytes()?;
        assert!(now > 0);
        assert!(peak_rss_bytes()? >= now);
        Ok(())
    }
}
