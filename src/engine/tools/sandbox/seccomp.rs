//! The sandbox's seccomp filters, compiled by `seccompiler` (the rust-vmm crate Firecracker uses)
//! from a few rules, one filter per answer: the kernel runs every filter a process has and
//! takes the strictest answer, and the filters here refuse disjoint calls, so each call gets the
//! one answer its rule gives.
//!
//! - *Refused with `EPERM`*: `setsid` and `setpgid` (nothing a command starts leaves its process
//!   group); `unshare`, `setns` and every call that mounts, unmounts or moves a mount (`mount`,
//!   `umount2`, `pivot_root` and the new mount API), so a command cannot leave or undo the
//!   read-only mounts it was started under; `ioctl` with `TIOCSTI` or `TIOCLINUX` (they push
//!   input into a terminal); and, when the file system cannot be made read-only by a mount
//!   ([`Rules::freeze_metadata`]), every call that changes a file's mode, owner, times or
//!   extended attributes (`chmod` … `fchmodat2`, `chown` …, `utimensat` …, `setxattr` …), which no
//!   Landlock right covers.
//! - *Refused with `ENOSYS`*: the `io_uring` calls (its operations would bypass the filter), so
//!   programs fall back to plain calls.
//! - *Refused with `EACCES`, network off*: `socket`, whatever its family: internet sockets, and
//!   Unix sockets too, because a Unix socket can reach a service outside the sandbox (a tmux
//!   server, ssh-agent, D-Bus, dockerd, the system log) and have it act unconfined, and a
//!   filter cannot read the address it is sent to; `socketpair` unless it makes a Unix *stream*
//!   pair (its type masked of `SOCK_NONBLOCK` and `SOCK_CLOEXEC`): two connected stream ends
//!   reach nothing else, but a datagram end can still `sendto` any datagram socket by its path,
//!   and a sequenced-packet pair is refused with it.
//!
//! Every filter kills a process that makes a call of another architecture; on x86-64 the x32
//! numbers of the refused calls (the same calls under another number, which the architecture
//! check lets through) are refused as their native twins are. Everything else is allowed.
//! Arguments are compared on their low 32 bits, which is what the kernel reads for these.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The numbers the filters are built from: one architecture's system calls and constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub arch: TargetArch,
    /// The bit that gives another ABI of the same architecture (x86-64's x32): the refused
    /// calls' numbers with it are refused too.
    pub foreign_bit: Option<i64>,
    pub socket: i64,
    pub socketpair: i64,
    /// `ioctl`, under every number it has (x32 has its own).
    pub ioctl: Vec<i64>,
    /// Refused with `EPERM`: `setsid`, `setpgid`.
    pub group_calls: Vec<i64>,
    /// Refused with `EPERM`: `unshare`, `setns` and the mount calls.
    pub mount_calls: Vec<i64>,
    /// Refused with `EPERM` when metadata is frozen: mode, owner, times, extended attributes.
    pub metadata_calls: Vec<i64>,
    /// Refused with `ENOSYS`: `io_uring_setup`, `_enter`, `_register`.
    pub io_uring: Vec<i64>,
    /// Refused ioctl requests.
    pub refused_ioctls: Vec<u64>,
    pub af_unix: u64,
    pub sock_stream: u64,
    pub eperm: u32,
    pub eacces: u32,
    pub enosys: u32,
}

/// What the filters refuse besides the fixed rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rules {
    /// Refuse `socket` for every family and `socketpair` but for Unix stream pairs.
    pub block_network: bool,
    /// Refuse every call that changes a file's metadata (used where no read-only mount keeps the
    /// files outside the writable places as they are, in read-only mode).
    pub freeze_metadata: bool,
}

/// The bits of a socket type that name the type (`SOCK_TYPE_MASK`); the rest are flags.
const SOCK_TYPE_MASK: u64 = 0xf;

/// The filters for `target` under `rules`, in the order they are installed.
pub fn programs(
    target: &Target,
    rules: Rules,
) -> Result<Vec<BpfProgram>, seccompiler::BackendError> {
    let mut eperm: Vec<(i64, Vec<SeccompRule>)> = Vec::new();
    for &nr in target.group_calls.iter().chain(&target.mount_calls) {
        eperm.push((nr, Vec::new()));
    }
    if rules.freeze_metadata {
        eperm.extend(target.metadata_calls.iter().map(|&nr| (nr, Vec::new())));
    }
    let ioctl_rules = target
        .refused_ioctls
        .iter()
        .map(|&request| SeccompRule::new(vec![low_word(1, SeccompCmpOp::Eq, request)?]))
        .collect::<Result<Vec<_>, _>>()?;
    eperm.extend(target.ioctl.iter().map(|&nr| (nr, ioctl_rules.clone())));
    let enosys: Vec<(i64, Vec<SeccompRule>)> =
        target.io_uring.iter().map(|&nr| (nr, Vec::new())).collect();
    let mut out = vec![
        build(target, eperm, target.eperm)?,
        build(target, enosys, target.enosys)?,
    ];
    if rules.block_network {
        let eacces = vec![
            (target.socket, Vec::new()),
            (target.socketpair, socketpair_refusals(target)?),
        ];
        out.push(build(target, eacces, target.eacces)?);
    }
    Ok(out)
}

/// `socketpair` is refused unless its domain is `AF_UNIX` and its type, masked of the flags,
/// `SOCK_STREAM`: one rule for another domain, one for each other type.
fn socketpair_refusals(target: &Target) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let mut rules = vec![SeccompRule::new(vec![low_word(
        0,
        SeccompCmpOp::Ne,
        target.af_unix,
    )?])?];
    for kind in (0..=SOCK_TYPE_MASK).filter(|&k| k != target.sock_stream) {
        rules.push(SeccompRule::new(vec![low_word(
            1,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            kind,
        )?])?);
    }
    Ok(rules)
}

/// A condition on the low 32 bits of argument `arg`.
fn low_word(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// One filter: the calls of `rules` (and their foreign twins) refused with `errno`, everything
/// else allowed.
fn build(
    target: &Target,
    rules: Vec<(i64, Vec<SeccompRule>)>,
    errno: u32,
) -> Result<BpfProgram, seccompiler::BackendError> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, chain) in rules {
        if let Some(bit) = target.foreign_bit {
            map.insert(nr | bit, chain.clone());
        }
        map.insert(nr, chain);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        target.arch,
    )?;
    filter.try_into()
}

/// This machine's numbers, where the sandbox knows them (x86-64 and aarch64 Linux).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub fn native() -> Option<Target> {
    /// The calls new enough that libc does not name them; their numbers are the same on every
    /// architecture (the table was unified at 424).
    const SETXATTRAT: i64 = 463;
    const REMOVEXATTRAT: i64 = 466;
    const FILE_SETATTR: i64 = 469;
    let c = |v: libc::c_int| u32::try_from(v).ok();
    let u = |v: libc::c_int| u64::try_from(v).ok();
    #[cfg(target_arch = "x86_64")]
    let (arch, foreign_bit, x32_ioctl) = (TargetArch::x86_64, Some(0x4000_0000_i64), vec![514]);
    #[cfg(target_arch = "aarch64")]
    let (arch, foreign_bit, x32_ioctl) = (TargetArch::aarch64, None, Vec::<i64>::new());
    let mut ioctl = vec![libc::SYS_ioctl];
    ioctl.extend(x32_ioctl);
    let mut metadata_calls = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchmodat2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SETXATTRAT,
        REMOVEXATTRAT,
        FILE_SETATTR,
    ];
    #[cfg(target_arch = "x86_64")]
    metadata_calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    Some(Target {
        arch,
        foreign_bit,
        socket: libc::SYS_socket,
        socketpair: libc::SYS_socketpair,
        ioctl,
        group_calls: vec![libc::SYS_setsid, libc::SYS_setpgid],
        mount_calls: vec![
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_pivot_root,
            libc::SYS_open_tree,
            libc::SYS_move_mount,
            libc::SYS_fsopen,
            libc::SYS_fsconfig,
            libc::SYS_fsmount,
            libc::SYS_fspick,
            libc::SYS_mount_setattr,
        ],
        metadata_calls,
        io_uring: vec![
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ],
        refused_ioctls: vec![
            u64::from(libc::TIOCSTI as u32),
            u64::from(libc::TIOCLINUX as u32),
        ],
        af_unix: u(libc::AF_UNIX)?,
        sock_stream: u(libc::SOCK_STREAM)?,
        eperm: c(libc::EPERM)?,
        eacces: c(libc::EACCES)?,
        enosys: c(libc::ENOSYS)?,
    })
}

/// Other machines: no filter.
#[cfg(all(
    target_os = "linux",
    not(any(target_arch = "x86_64", target_arch = "aarch64"))
))]
pub fn native() -> Option<Target> {
    None
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
