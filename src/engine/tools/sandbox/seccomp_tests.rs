//! The seccomp program run by a small interpreter of the instructions it uses, over a made-up
//! architecture (so the rules are checked on any machine) and over this machine's numbers.

use super::*;

/// A system call as the filter sees it.
struct Call {
    arch: u32,
    nr: u32,
    args: [u64; 6],
}

fn call(target: &Target, nr: u32, args: &[u64]) -> Call {
    let mut a = [0u64; 6];
    for (slot, v) in a.iter_mut().zip(args) {
        *slot = *v;
    }
    Call {
        arch: target.arch,
        nr,
        args: a,
    }
}

/// The 32-bit word at `offset` of `seccomp_data` (little-endian).
fn word(c: &Call, offset: u32) -> u32 {
    match offset {
        OFFSET_NR => c.nr,
        OFFSET_ARCH => c.arch,
        o if o >= 16 && (o - 16) % 4 == 0 && o < 16 + 48 => {
            let i = ((o - 16) / 8) as usize;
            let v = c.args[i];
            if (o - 16) % 8 == 0 {
                v as u32
            } else {
                (v >> 32) as u32
            }
        }
        other => panic!("the program loads offset {other}, which no seccomp_data field starts at"),
    }
}

/// What the kernel would do with `c` under `prog`.
fn run(prog: &[Insn], c: &Call) -> u32 {
    let mut acc = 0u32;
    let mut pc = 0usize;
    for _ in 0..prog.len() {
        let i = prog[pc];
        match i.code {
            LD_ABS_W => {
                acc = word(c, i.k);
                pc += 1;
            }
            JEQ_K => pc += 1 + usize::from(if acc == i.k { i.jt } else { i.jf }),
            JGE_K => pc += 1 + usize::from(if acc >= i.k { i.jt } else { i.jf }),
            RET_K => return i.k,
            other => panic!("unknown instruction {other:#x} at {pc}"),
        }
    }
    panic!("the program ran off its end or looped")
}

/// A made-up architecture with numbers unlike any real one.
fn fake() -> Target {
    Target {
        arch: 0xC000_1234,
        foreign_from: Some(0x4000_0000),
        socket: 41,
        ioctl: 16,
        group_calls: vec![112, 109],
        mount_calls: vec![272, 308, 165, 166],
        io_uring: vec![425, 426, 427],
        refused_ioctls: vec![0x5412, 0x541C],
        eperm: 1,
        eacces: 13,
        enosys: 38,
    }
}

const AF_UNIX: u64 = 1;
const AF_INET: u64 = 2;
const AF_INET6: u64 = 10;
const AF_NETLINK: u64 = 16;
const AF_PACKET: u64 = 17;

fn blocked(t: &Target) -> Vec<Insn> {
    program(
        t,
        Rules {
            block_network: true,
        },
    )
}

#[test]
fn every_jump_lands_inside_the_program_and_it_ends_in_a_return() {
    let t = fake();
    for rules in [true, false].map(|b| Rules { block_network: b }) {
        let p = program(&t, rules);
        assert!(p.len() < 4096, "BPF_MAXINSNS");
        for (pc, i) in p.iter().enumerate() {
            if i.code == JEQ_K || i.code == JGE_K {
                for off in [i.jt, i.jf] {
                    assert!(pc + 1 + usize::from(off) < p.len(), "jump at {pc} leaves");
                }
            }
        }
        assert_eq!(p.last().map(|i| (i.code, i.k)), Some((RET_K, RET_ALLOW)));
    }
}

#[test]
fn another_architecture_and_the_x32_numbers_are_killed() {
    let t = fake();
    let p = blocked(&t);
    let mut c = call(&t, 0, &[]);
    c.arch = 0x4000_0003; // i386
    assert_eq!(run(&p, &c), RET_KILL_PROCESS);
    assert_eq!(run(&p, &call(&t, 0x4000_0000 | 41, &[1])), RET_KILL_PROCESS);
    assert_eq!(run(&p, &call(&t, 0x4000_0000, &[])), RET_KILL_PROCESS);
}

#[test]
fn leaving_the_process_group_is_refused_with_eperm() {
    let t = fake();
    for rules in [true, false].map(|b| Rules { block_network: b }) {
        let p = program(&t, rules);
        assert_eq!(run(&p, &call(&t, 112, &[])), RET_ERRNO | 1, "setsid");
        assert_eq!(run(&p, &call(&t, 109, &[0, 0])), RET_ERRNO | 1, "setpgid");
        for nr in [425, 426, 427] {
            assert_eq!(run(&p, &call(&t, nr, &[])), RET_ERRNO | 38, "io_uring {nr}");
        }
    }
}

#[test]
fn namespaces_and_mounts_are_refused_with_eperm_and_neighbours_allowed() {
    let t = fake();
    for rules in [true, false].map(|b| Rules { block_network: b }) {
        let p = program(&t, rules);
        for nr in [272, 308, 165, 166] {
            assert_eq!(run(&p, &call(&t, nr, &[0, 0])), RET_ERRNO | 1, "call {nr}");
        }
        for nr in [164, 167, 271, 273] {
            assert_eq!(run(&p, &call(&t, nr, &[0, 0])), RET_ALLOW, "call {nr}");
        }
    }
}

#[test]
fn network_off_refuses_every_socket_family_unix_too() {
    let t = fake();
    let p = blocked(&t);
    for family in [
        AF_UNIX,
        (7 << 32) | AF_UNIX,
        AF_INET,
        AF_INET6,
        AF_NETLINK,
        AF_PACKET,
        0,
        u64::from(u32::MAX),
    ] {
        assert_eq!(
            run(&p, &call(&t, 41, &[family, 2, 17])),
            RET_ERRNO | 13,
            "family {family}"
        );
    }
}

#[test]
fn network_on_allows_every_socket() {
    let t = fake();
    let p = program(
        &t,
        Rules {
            block_network: false,
        },
    );
    for family in [1, AF_INET, AF_INET6] {
        assert_eq!(run(&p, &call(&t, 41, &[family])), RET_ALLOW);
    }
}

#[test]
fn terminal_injection_ioctls_are_refused_and_others_allowed() {
    let t = fake();
    let p = blocked(&t);
    assert_eq!(
        run(&p, &call(&t, 16, &[0, 0x5412])),
        RET_ERRNO | 1,
        "TIOCSTI"
    );
    assert_eq!(
        run(&p, &call(&t, 16, &[0, 0x541C])),
        RET_ERRNO | 1,
        "TIOCLINUX"
    );
    // The kernel takes the request as an unsigned int: high bits are ignored there and here.
    assert_eq!(
        run(&p, &call(&t, 16, &[0, 0xffff_ffff_0000_5412])),
        RET_ERRNO | 1
    );
    assert_eq!(run(&p, &call(&t, 16, &[0, 0x5401])), RET_ALLOW, "TCGETS");
}

#[test]
fn every_other_call_is_allowed_whatever_its_arguments() {
    let t = fake();
    let p = blocked(&t);
    let special = [41, 16, 112, 109, 425, 426, 427, 272, 308, 165, 166];
    for nr in (0..600).filter(|n| !special.contains(n)) {
        for args in [[0u64; 2], [2, 0x5412], [u64::MAX, u64::MAX]] {
            assert_eq!(run(&p, &call(&t, nr, &args)), RET_ALLOW, "call {nr}");
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
    let p = blocked(&t);
    let nr = |v: libc::c_long| u32::try_from(v).unwrap();
    let af = |v: libc::c_int| u64::try_from(v).unwrap();
    assert_eq!(
        run(&p, &call(&t, nr(libc::SYS_setsid), &[])),
        RET_ERRNO | libc::EPERM as u32
    );
    assert_eq!(
        run(&p, &call(&t, nr(libc::SYS_socket), &[af(libc::AF_INET)])),
        RET_ERRNO | libc::EACCES as u32
    );
    assert_eq!(
        run(&p, &call(&t, nr(libc::SYS_socket), &[af(libc::AF_UNIX)])),
        RET_ERRNO | libc::EACCES as u32
    );
    assert_eq!(
        run(
            &p,
            &call(&t, nr(libc::SYS_socketpair), &[af(libc::AF_UNIX), 1, 0])
        ),
        RET_ALLOW
    );
    assert_eq!(
        run(&p, &call(&t, nr(libc::SYS_openat), &[0, 0, 0o1101])),
        RET_ALLOW
    );
    for call_nr in [
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_move_mount,
        libc::SYS_mount_setattr,
    ] {
        assert_eq!(
            run(&p, &call(&t, nr(call_nr), &[0, 0])),
            RET_ERRNO | libc::EPERM as u32,
            "{call_nr}"
        );
    }
}
