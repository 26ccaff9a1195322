//! The sandbox's seccomp program: classic BPF over `struct seccomp_data`, built as plain data on
//! every platform (so it can be read and tested anywhere) and installed on Linux.
//!
//! The program, in order: a system call of another architecture kills the process (on x86-64
//! also the x32 numbers, which would otherwise reach the same kernel code under other numbers);
//! `setsid`, `setpgid` and the `io_uring` calls are refused; so are `unshare`, `setns` and every
//! call that mounts, unmounts or moves a mount (`mount`, `umount2`, `pivot_root` and the new mount
//! API), so a command cannot leave or undo the read-only mount of `.git` it was started under; with the network off, `socket` is
//! refused whatever its family: internet sockets, and Unix sockets too, because a Unix socket
//! can connect to a host service outside the sandbox (a tmux server, ssh-agent, D-Bus, dockerd)
//! and have it act unconfined, and neither this filter (it cannot read the address) nor Landlock
//! before ABI 9 can stop a connection to a socket by its path. `socketpair` is another system
//! call and stays allowed: its two ends are connected to each other and to nothing else, which is
//! what programs use them for (event loops, child processes' pipes). `ioctl` is refused for
//! `TIOCSTI` and `TIOCLINUX` (they push input into a terminal); everything else is allowed.
//! Arguments are compared on their low 32 bits, which is what the kernel reads for an ioctl
//! number.

/// One classic BPF instruction, laid out as the kernel's `struct sock_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// `BPF_LD | BPF_W | BPF_ABS`: load the 32-bit word at offset `k` of `seccomp_data`.
pub(crate) const LD_ABS_W: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
pub(crate) const JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
pub(crate) const JGE_K: u16 = 0x35;
/// `BPF_RET | BPF_K`.
pub(crate) const RET_K: u16 = 0x06;

/// `SECCOMP_RET_KILL_PROCESS`.
pub(crate) const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// `SECCOMP_RET_ERRNO`; the errno is in the low 16 bits.
pub(crate) const RET_ERRNO: u32 = 0x0005_0000;
/// `SECCOMP_RET_ALLOW`.
pub(crate) const RET_ALLOW: u32 = 0x7fff_0000;

/// Offsets in `struct seccomp_data`: `nr` (int), `arch` (u32), `instruction_pointer` (u64),
/// then `args[6]` (u64 each; the low word first on little-endian machines).
pub(crate) const OFFSET_NR: u32 = 0;
pub(crate) const OFFSET_ARCH: u32 = 4;
pub(crate) const fn offset_arg_low(i: u32) -> u32 {
    16 + 8 * i
}

/// The numbers a program is built from: one architecture's system calls and constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `AUDIT_ARCH_*` of the native system-call ABI.
    pub arch: u32,
    /// Numbers at or above this are another ABI of the same architecture (x86-64's x32 bit).
    pub foreign_from: Option<u32>,
    pub socket: u32,
    pub ioctl: u32,
    /// Refused with `EPERM`: `setsid`, `setpgid`.
    pub group_calls: Vec<u32>,
    /// Refused with `EPERM`: `unshare`, `setns` and the mount calls.
    pub mount_calls: Vec<u32>,
    /// Refused with `ENOSYS`, so programs fall back: `io_uring_setup`, `_enter`, `_register`.
    pub io_uring: Vec<u32>,
    /// Refused ioctl requests.
    pub refused_ioctls: Vec<u32>,
    pub eperm: u32,
    pub eacces: u32,
    pub enosys: u32,
}

/// What the program refuses besides the fixed rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rules {
    /// Refuse `socket` for every family (`socketpair` stays allowed).
    pub block_network: bool,
}

/// The program for `target` under `rules`.
pub(crate) fn program(target: &Target, rules: Rules) -> Vec<Insn> {
    let mut p = vec![
        load(OFFSET_ARCH),
        jump_eq(target.arch, 1, 0),
        ret(RET_KILL_PROCESS),
        load(OFFSET_NR),
    ];
    if let Some(from) = target.foreign_from {
        p.push(Insn {
            code: JGE_K,
            jt: 0,
            jf: 1,
            k: from,
        });
        p.push(ret(RET_KILL_PROCESS));
    }
    for &nr in &target.group_calls {
        p.extend(refuse(nr, RET_ERRNO | target.eperm));
    }
    for &nr in &target.mount_calls {
        p.extend(refuse(nr, RET_ERRNO | target.eperm));
    }
    for &nr in &target.io_uring {
        p.extend(refuse(nr, RET_ERRNO | target.enosys));
    }
    if rules.block_network {
        p.extend(refuse(target.socket, RET_ERRNO | target.eacces));
    }
    p.extend(argument_block(
        target.ioctl,
        1,
        &target.refused_ioctls,
        RET_ERRNO | target.eperm,
        RET_ALLOW,
    ));
    p.push(ret(RET_ALLOW));
    p
}

fn load(offset: u32) -> Insn {
    Insn {
        code: LD_ABS_W,
        jt: 0,
        jf: 0,
        k: offset,
    }
}

fn ret(action: u32) -> Insn {
    Insn {
        code: RET_K,
        jt: 0,
        jf: 0,
        k: action,
    }
}

fn jump_eq(k: u32, jt: u8, jf: u8) -> Insn {
    Insn {
        code: JEQ_K,
        jt,
        jf,
        k,
    }
}

/// `nr` → return `action`; anything else falls through.
fn refuse(nr: u32, action: u32) -> [Insn; 2] {
    [jump_eq(nr, 0, 1), ret(action)]
}

/// For system call `nr`: load the low word of argument `arg`; if it is one of `values` return
/// `matched`, else `other`. Any other call skips the block (the accumulator is reloaded only
/// inside it, and every path inside returns).
fn argument_block(nr: u32, arg: u32, values: &[u32], matched: u32, other: u32) -> Vec<Insn> {
    let n = values.len();
    // Layout: JEQ nr; LD arg; JEQ v_i (n of them); RET other; RET matched.
    let skip = u8::try_from(n + 3).unwrap_or(u8::MAX);
    let mut b = vec![jump_eq(nr, 0, skip), load(offset_arg_low(arg))];
    for (i, &v) in values.iter().enumerate() {
        // From value i, `RET matched` is (n - i) instructions ahead.
        let to_matched = u8::try_from(n - i).unwrap_or(u8::MAX);
        b.push(jump_eq(v, to_matched, 0));
    }
    b.push(ret(other));
    b.push(ret(matched));
    b
}

/// This machine's numbers, where the sandbox knows them (x86-64 and aarch64 Linux).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
pub fn native() -> Option<Target> {
    // Every value is a small non-negative constant; a failed conversion would mean a broken libc.
    let n = |v: libc::c_long| u32::try_from(v).ok();
    let c = |v: libc::c_int| u32::try_from(v).ok();
    #[cfg(target_arch = "x86_64")]
    let (arch, foreign_from) = (0xC000_003E_u32, Some(0x4000_0000_u32));
    #[cfg(target_arch = "aarch64")]
    let (arch, foreign_from) = (0xC000_00B7_u32, None);
    Some(Target {
        arch,
        foreign_from,
        socket: n(libc::SYS_socket)?,
        ioctl: n(libc::SYS_ioctl)?,
        group_calls: vec![n(libc::SYS_setsid)?, n(libc::SYS_setpgid)?],
        mount_calls: vec![
            n(libc::SYS_unshare)?,
            n(libc::SYS_setns)?,
            n(libc::SYS_mount)?,
            n(libc::SYS_umount2)?,
            n(libc::SYS_pivot_root)?,
            n(libc::SYS_open_tree)?,
            n(libc::SYS_move_mount)?,
            n(libc::SYS_fsopen)?,
            n(libc::SYS_fsconfig)?,
            n(libc::SYS_fsmount)?,
            n(libc::SYS_fspick)?,
            n(libc::SYS_mount_setattr)?,
        ],
        io_uring: vec![
            n(libc::SYS_io_uring_setup)?,
            n(libc::SYS_io_uring_enter)?,
            n(libc::SYS_io_uring_register)?,
        ],
        refused_ioctls: vec![
            u32::try_from(libc::TIOCSTI).ok()?,
            u32::try_from(libc::TIOCLINUX).ok()?,
        ],
        eperm: c(libc::EPERM)?,
        eacces: c(libc::EACCES)?,
        enosys: c(libc::ENOSYS)?,
    })
}

/// Other machines: no filter.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub fn native() -> Option<Target> {
    None
}

#[cfg(test)]
#[path = "seccomp_tests.rs"]
mod tests;
