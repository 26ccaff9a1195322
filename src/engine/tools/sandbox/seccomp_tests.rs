//! The seccomp filters run by a small interpreter of the instructions `seccompiler` emits, over
//! made-up numbers (so the rules are checked whatever a libc calls them) and over this machine's
//! numbers; every filter runs, and the strictest answer wins, as in the kernel.

use super::*;
use seccompiler::sock_filter;

/// `BPF_LD | BPF_W | BPF_ABS`, `BPF_ALU | BPF_AND | BPF_K`, the jumps, `BPF_RET | BPF_K`.
const LD_ABS_W: u16 = 0x20;
const AND_K: u16 = 0x54;
const JA: u16 = 0x05;
const JEQ_K: u16 = 0x15;
const JGT_K: u16 = 0x25;
const JGE_K: u16 = 0x35;
const RET_K: u16 = 0x06;

const KILL_PROCESS: u32 = 0x8000_0000;
const ERRNO: u32 = 0x0005_0000;
const ALLOW: u32 = 0x7fff_0000;

/// `AUDIT_ARCH_X86_64` and `AUDIT_ARCH_I386`.
const X86_64: u32 = 0xC000_003E;
const I386: u32 = 0x4000_0003;

/// A system call as the filter sees it.
struct Call {
    arch: u32,
    nr: i64,
    args: [u64; 6],
}

fn call(nr: i64, args: &[u64]) -> Call {
    let mut a = [0u64; 6];
    for (slot, v) in a.iter_mut().zip(args) {
        *slot = *v;
    }
    Call {
        arch: X86_64,
        nr,
        args: a,
    }
}

/// The 32-bit word at `offset` of `seccomp_data` (little-endian).
fn word(c: &Call, offset: u32) -> u32 {
    match offset {
        0 => c.nr as u32,
        4 => c.arch,
        o if (16..16 + 48).contains(&o) && (o - 16) % 4 == 0 => {
            let v = c.args[((o - 16) / 8) as usize];
            if (o - 16) % 8 == 0 {
                v as u32
            } else {
                (v >> 32) as u32
            }
        }
        other => panic!("the program loads offset {other}, which no seccomp_data field starts at"),
    }
}

/// What one filter answers for `c`.
fn run(prog: &[sock_filter], c: &Call) -> u32 {
    let mut acc = 0u32;
    let mut pc = 0usize;
    for _ in 0..=prog.len() {
        let i = &prog[pc];
        let jump = |taken: bool| 1 + usize::from(if taken { i.jt } else { i.jf });
        pc += match i.code {
            LD_ABS_W => {
                acc = word(c, i.k);
                1
            }
            AND_K => {
                acc &= i.k;
                1
            }
            JA => 1 + i.k as usize,
            JEQ_K => jump(acc == i.k),
            JGT_K => jump(acc > i.k),
            JGE_K => jump(acc >= i.k),
            RET_K => return i.k,
            other => panic!("unknown instruction {other:#x} at {pc}"),
        };
    }
    panic!("the program ran off its end or looped")
}

/// What the kernel answers with every filter installed: the strictest action wins.
fn answer(progs: &[BpfProgram], c: &Call) -> u32 {
    progs
        .iter()
        .map(|p| run(p, c))
        .min_by_key(|&a| (a & 0xffff_0000) as i32)
        .expect("at least one filter")
}

/// Made-up numbers on x86-64 (x32 twins included).
fn fake() -> Target {
    Target {
        arch: TargetArch::x86_64,
        foreign_bit: Some(0x4000_0000),
        socket: 41,
        socketpair: 53,
        ioctl: vec![16, 514],
        group_calls: vec![112, 109],
        mount_calls: vec![272, 308, 165, 166],
        metadata_calls: vec![90, 91, 268, 452, 280, 188],
        io_uring: vec![425, 426, 427],
        refused_ioctls: vec![0x5412, 0x541C],
        af_unix: 1,
        sock_stream: 1,
        eperm: 1,
        eacces: 13,
        enosys: 38,
    }
}

const EPERM: u32 = ERRNO | 1;
const EACCES: u32 = ERRNO | 13;
const ENOSYS: u32 = ERRNO | 38;
const X32: i64 = 0x4000_0000;

fn all_rules() -> [Rules; 4] {
    [false, true]
        .map(|n| {
            [false, true].map(move |m| Rules {
                block_network: n,
                freeze_metadata: m,
            })
        })
        .concat()
        .try_into()
        .unwrap()
}

fn blocked() -> Vec<BpfProgram> {
    programs(
        &fake(),
        Rules {
            block_network: true,
            freeze_metadata: false,
        },
    )
    .unwrap()
}

#[test]
fn every_jump_lands_inside_each_program_and_it_ends_in_a_return() {
    for rules in all_rules() {
        for p in programs(&fake(), rules).unwrap() {
            assert!(p.len() < 4096, "BPF_MAXINSNS");
            for (pc, i) in p.iter().enumerate() {
                let targets: Vec<usize> = match i.code {
                    JA => vec![i.k as usize],
                    JEQ_K | JGT_K | JGE_K => vec![i.jt.into(), i.jf.into()],
                    _ => vec![],
                };
                for off in targets {
                    assert!(pc + 1 + off < p.len(), "jump at {pc} leaves");
                }
            }
            assert_eq!(p.last().map(|i| i.code), Some(RET_K));
        }
    }
}

#[test]
fn another_architecture_is_killed_and_x32_twins_are_refused_as_theirs() {
    for rules in all_rules() {
        let p = programs(&fake(), rules).unwrap();
        let mut c = call(0, &[]);
        c.arch = I386;
        assert_eq!(answer(&p, &c), KILL_PROCESS);
        assert_eq!(answer(&p, &call(X32 | 112, &[])), EPERM, "x32 setsid");
        assert_eq!(answer(&p, &call(X32 | 272, &[])), EPERM, "x32 unshare");
        assert_eq!(
            answer(&p, &call(514 | X32, &[0, 0x5412])),
            EPERM,
            "x32 TIOCSTI"
        );
        if rules.block_network {
            assert_eq!(answer(&p, &call(X32 | 41, &[1])), EACCES, "x32 socket");
            assert_eq!(
                answer(&p, &call(X32 | 53, &[1, 2])),
                EACCES,
                "x32 dgram pair"
            );
        }
    }
}

#[test]
fn leaving_the_process_group_is_refused_and_io_uring_is_missing() {
    for rules in all_rules() {
        let p = programs(&fake(), rules).unwrap();
        assert_eq!(answer(&p, &call(112, &[])), EPERM, "setsid");
        assert_eq!(answer(&p, &call(109, &[0, 0])), EPERM, "setpgid");
        for nr in [425, 426, 427] {
            assert_eq!(answer(&p, &call(nr, &[])), ENOSYS, "io_uring {nr}");
        }
    }
}

#[test]
fn namespaces_and_mounts_are_refused_and_neighbours_allowed() {
    for rules in all_rules() {
        let p = programs(&fake(), rules).unwrap();
        for nr in [272, 308, 165, 166] {
            assert_eq!(answer(&p, &call(nr, &[0, 0])), EPERM, "call {nr}");
        }
        for nr in [164, 167, 271, 273] {
            assert_eq!(answer(&p, &call(nr, &[0, 0])), ALLOW, "call {nr}");
        }
    }
}

#[test]
fn network_off_refuses_every_socket_family_unix_too() {
    let p = blocked();
    for family in [1, (7 << 32) | 1, 2, 10, 16, 17, 0, u64::from(u32::MAX)] {
        assert_eq!(
            answer(&p, &call(41, &[family, 2, 17])),
            EACCES,
            "family {family}"
        );
    }
}

#[test]
fn network_off_allows_a_unix_stream_pair_only() {
    let p = blocked();
    const NONBLOCK: u64 = 0o4000;
    const CLOEXEC: u64 = 0o2_000_000;
    for kind in [
        1,
        1 | NONBLOCK,
        1 | CLOEXEC,
        1 | NONBLOCK | CLOEXEC,
        (9 << 32) | 1,
    ] {
        assert_eq!(
            answer(&p, &call(53, &[1, kind, 0])),
            ALLOW,
            "stream {kind:#x}"
        );
    }
    for kind in [
        2,
        2 | CLOEXEC,
        5,
        5 | NONBLOCK,
        3,
        0,
        15,
        2 | NONBLOCK | CLOEXEC,
    ] {
        assert_eq!(
            answer(&p, &call(53, &[1, kind, 0])),
            EACCES,
            "type {kind:#x}"
        );
    }
    for family in [2, 10, 0, (1 << 32) | 2] {
        assert_eq!(
            answer(&p, &call(53, &[family, 1, 0])),
            EACCES,
            "family {family}"
        );
    }
}

#[test]
fn network_on_allows_every_socket_and_pair() {
    let p = programs(&fake(), Rules::default()).unwrap();
    for family in [1, 2, 10] {
        assert_eq!(answer(&p, &call(41, &[family])), ALLOW);
    }
    assert_eq!(answer(&p, &call(53, &[1, 2, 0])), ALLOW, "datagram pair");
}

#[test]
fn terminal_injection_ioctls_are_refused_and_others_allowed() {
    let p = blocked();
    assert_eq!(answer(&p, &call(16, &[0, 0x5412])), EPERM, "TIOCSTI");
    assert_eq!(answer(&p, &call(16, &[0, 0x541C])), EPERM, "TIOCLINUX");
    // The kernel takes the request as an unsigned int: high bits are ignored there and here.
    assert_eq!(answer(&p, &call(16, &[0, 0xffff_ffff_0000_5412])), EPERM);
    assert_eq!(answer(&p, &call(16, &[0, 0x5401])), ALLOW, "TCGETS");
}

#[test]
fn frozen_metadata_refuses_mode_owner_times_and_attributes() {
    let frozen = programs(
        &fake(),
        Rules {
            block_network: false,
            freeze_metadata: true,
        },
    )
    .unwrap();
    let open = programs(&fake(), Rules::default()).unwrap();
    for nr in [90, 91, 268, 452, 280, 188] {
        assert_eq!(answer(&frozen, &call(nr, &[0, 0o777])), EPERM, "call {nr}");
        assert_eq!(
            answer(&frozen, &call(nr | X32, &[0, 0o777])),
            EPERM,
            "x32 {nr}"
        );
        assert_eq!(answer(&open, &call(nr, &[0, 0o777])), ALLOW, "call {nr}");
    }
}

#[test]
fn every_other_call_is_allowed_whatever_its_arguments() {
    let t = fake();
    let p = programs(
        &t,
        Rules {
            block_network: true,
            freeze_metadata: true,
        },
    )
    .unwrap();
    let special = [41, 53, 16, 514, 112, 109, 425, 426, 427, 272, 308, 165, 166];
    let special: Vec<i64> = special
        .into_iter()
        .chain(t.metadata_calls.clone())
        .collect();
    for nr in (0..600).filter(|n| !special.contains(n)) {
        for args in [[0u64; 2], [2, 0x5412], [u64::MAX, u64::MAX]] {
            assert_eq!(answer(&p, &call(nr, &args)), ALLOW, "call {nr}");
        }
    }
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[test]
fn this_machines_numbers_give_the_same_answers() {
    let t = native().expect("this machine has a filter");
    let p = programs(
        &t,
        Rules {
            block_network: true,
            freeze_metadata: true,
        },
    )
    .unwrap();
    let c = |nr: libc::c_long, args: &[u64]| {
        let mut c = call(nr, args);
        c.arch = if cfg!(target_arch = "x86_64") {
            X86_64
        } else {
            0xC000_00B7
        };
        c
    };
    let af = |v: libc::c_int| u64::try_from(v).unwrap();
    let errno = |e: libc::c_int| ERRNO | u32::try_from(e).unwrap();
    assert_eq!(answer(&p, &c(libc::SYS_setsid, &[])), errno(libc::EPERM));
    for family in [libc::AF_INET, libc::AF_UNIX] {
        let got = answer(&p, &c(libc::SYS_socket, &[af(family)]));
        assert_eq!(got, errno(libc::EACCES));
    }
    let stream = af(libc::SOCK_STREAM | libc::SOCK_CLOEXEC);
    let pair = answer(
        &p,
        &c(libc::SYS_socketpair, &[af(libc::AF_UNIX), stream, 0]),
    );
    assert_eq!(pair, ALLOW);
    let dgram = af(libc::SOCK_DGRAM | libc::SOCK_NONBLOCK);
    let pair = answer(&p, &c(libc::SYS_socketpair, &[af(libc::AF_UNIX), dgram, 0]));
    assert_eq!(pair, errno(libc::EACCES));
    assert_eq!(answer(&p, &c(libc::SYS_openat, &[0, 0, 0o1101])), ALLOW);
    assert_eq!(
        answer(&p, &c(libc::SYS_fchmodat, &[0, 0, 0o777])),
        errno(libc::EPERM)
    );
    for nr in [
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_move_mount,
        libc::SYS_mount_setattr,
    ] {
        assert_eq!(answer(&p, &c(nr, &[0, 0])), errno(libc::EPERM), "{nr}");
    }
}
