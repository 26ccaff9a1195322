//! The TCP ports a job listens on: the sockets of every process in its process group, matched
//! against the kernel's tables of listening sockets (Linux `/proc`; elsewhere none are found).

use std::collections::HashSet;

/// The TCP ports the processes of group `pgid` listen on, lowest first.
pub(crate) fn listening(pgid: u32) -> Vec<u16> {
    #[cfg(target_os = "linux")]
    {
        let inodes = socket_inodes(pgid);
        if inodes.is_empty() {
            return Vec::new();
        }
        let mut ports: Vec<u16> = ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .flat_map(|table| listeners(&table))
            .filter(|(_, inode)| inodes.contains(inode))
            .map(|(port, _)| port)
            .collect();
        ports.sort_unstable();
        ports.dedup();
        ports
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        Vec::new()
    }
}

/// The socket inodes open in the processes of group `pgid`.
#[cfg(target_os = "linux")]
fn socket_inodes(pgid: u32) -> HashSet<u64> {
    let mut out = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in procs.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if group_of(&stat) != Some(pgid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && let Some(inode) = target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
                    .and_then(|t| t.parse().ok())
            {
                out.insert(inode);
            }
        }
    }
    out
}

/// The process group in a `/proc/<pid>/stat` line (the fifth field; the command name in
/// parentheses may hold spaces).
fn group_of(stat: &str) -> Option<u32> {
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// `(port, inode)` of each listening socket of a `/proc/net/tcp` table.
fn listeners(table: &str) -> Vec<(u16, u64)> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is `ADDR:PORT` in hex; state 0A is LISTEN; the inode is field 9.
            let port = f.get(1)?.rsplit_once(':')?.1;
            if *f.get(3)? != "0A" {
                return None;
            }
            Some((u16::from_str_radix(port, 16).ok()?, f.get(9)?.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_and_stat_lines_are_read() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 424242 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 424243 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(listeners(table), [(8080, 424242)]);
        assert_eq!(group_of("123 (a b) S 1 777 777 0"), Some(777));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_listening_child_is_found_by_its_group() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // This test process's own group holds the listener.
        let pgid = u32::try_from(unsafe { libc::getpgrp() }).unwrap();
        assert!(listening(pgid).contains(&port), "{port}");
    }
}
