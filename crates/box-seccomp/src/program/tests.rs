//! The programs, run on a classic-BPF interpreter of the instructions seccompiler emits (loads of
//! `struct seccomp_data` words, AND, jumps, returns): what each call gets on each architecture.

use super::*;

/// `SECCOMP_RET_ALLOW`, `SECCOMP_RET_ERRNO | errno`, `SECCOMP_RET_KILL_PROCESS` (uapi `linux/seccomp.h`).
const ALLOW: u32 = 0x7fff_0000;
const KILL_PROCESS: u32 = 0x8000_0000;
const fn errno(value: u32) -> u32 {
    0x0005_0000 | value
}
const EPERM: u32 = errno(1);
const ENOSYS: u32 = errno(38);

/// `AUDIT_ARCH_*` (uapi `linux/audit.h`).
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;

fn audit_arch(arch: Arch) -> u32 {
    match arch {
        Arch::X86_64 => AUDIT_ARCH_X86_64,
        Arch::Aarch64 => AUDIT_ARCH_AARCH64,
    }
}

/// Runs `program` on `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }` (little-endian).
fn run(program: &BpfProgram, nr: i64, arch: u32, args: [u64; 6]) -> u32 {
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&(nr as i32).to_le_bytes());
    data.extend_from_slice(&arch.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes());
    for arg in args {
        data.extend_from_slice(&arg.to_le_bytes());
    }
    let (mut a, mut pc) = (0u32, 0usize);
    loop {
        let ins = &program[pc];
        pc += 1;
        let k = ins.k;
        match ins.code {
            0x20 => a = u32::from_le_bytes(data[k as usize..k as usize + 4].try_into().unwrap()),
            0x54 => a &= k,
            0x05 => pc += k as usize,
            0x15 => pc += usize::from(if a == k { ins.jt } else { ins.jf }),
            0x25 => pc += usize::from(if a > k { ins.jt } else { ins.jf }),
            0x35 => pc += usize::from(if a >= k { ins.jt } else { ins.jf }),
            0x06 => return k,
            code => panic!("an instruction this interpreter does not know: {code:#x}"),
        }
    }
}

/// What the kernel answers with both programs loaded: the strongest result (`seccomp(2)`: kill,
/// then errno, then allow).
fn answer(arch: Arch, nr: i64, args: [u64; 6]) -> u32 {
    answer_as(arch, audit_arch(arch), nr, args)
}

fn answer_as(arch: Arch, audit: u32, nr: i64, args: [u64; 6]) -> u32 {
    let results: Vec<u32> = Answer::ALL.iter().map(|&a| run(&program(arch, a).unwrap(), nr, audit, args)).collect();
    let rank = |r: u32| match r & 0xffff_0000 {
        KILL_PROCESS => 3,
        0x0005_0000 => 2,
        _ => 1,
    };
    *results.iter().max_by_key(|r| rank(**r)).unwrap()
}

fn nr(arch: Arch, name: &str) -> i64 {
    arch.numbers(name).unwrap()[0]
}

const NO_ARGS: [u64; 6] = [0; 6];

#[test]
fn every_refusal_gets_its_answer_on_every_architecture() {
    for arch in Arch::ALL {
        for name in [
            "io_uring_setup",
            "io_uring_enter",
            "io_uring_register",
            "keyctl",
            "add_key",
            "request_key",
            "unshare",
            "setns",
            "mount",
            "umount2",
            "pivot_root",
            "move_mount",
            "open_tree",
            "fsopen",
            "fsmount",
            "fsconfig",
            "fspick",
            "mount_setattr",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "kexec_load",
            "kexec_file_load",
            "init_module",
            "finit_module",
            "delete_module",
            "acct",
            "swapon",
            "swapoff",
            "reboot",
            "syslog",
            "quotactl",
            "open_by_handle_at",
            "lookup_dcookie",
        ] {
            assert_eq!(answer(arch, nr(arch, name), NO_ARGS), EPERM, "{} {name}", arch.name());
        }
        assert_eq!(answer(arch, nr(arch, "clone3"), NO_ARGS), ENOSYS, "{} clone3", arch.name());
    }
}

#[test]
fn everything_else_is_allowed() {
    for arch in Arch::ALL {
        for name in [
            "read",
            "write",
            "openat",
            "close",
            "mmap",
            "execve",
            "wait4",
            "socket",
            "connect",
            "prctl",
            "seccomp",
            "getpid",
            "futex",
            "statx",
            "pidfd_open",
        ] {
            assert_eq!(answer(arch, nr(arch, name), [3, 4, 5, 6, 7, 8]), ALLOW, "{} {name}", arch.name());
        }
    }
}

#[test]
fn clone_is_refused_with_any_namespace_flag_and_allowed_for_threads_and_processes() {
    const SIGCHLD: u64 = 17;
    // glibc's pthread_create: CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
    // CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID.
    const THREAD: u64 = 0x003d_0f00;
    // fork: CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD; vfork/posix_spawn: CLONE_VM | CLONE_VFORK | SIGCHLD.
    const FORK: u64 = 0x0120_0000 | SIGCHLD;
    const VFORK: u64 = 0x0000_4100 | SIGCHLD;
    for arch in Arch::ALL {
        let clone = nr(arch, "clone");
        for flags in [THREAD, FORK, VFORK, SIGCHLD, 0] {
            assert_eq!(answer(arch, clone, [flags, 0, 0, 0, 0, 0]), ALLOW, "{} clone {flags:#x}", arch.name());
        }
        for &flag in crate::policy::NAMESPACE_FLAGS {
            for with in [0, SIGCHLD, FORK, THREAD] {
                assert_eq!(
                    answer(arch, clone, [with | u64::from(flag), 0, 0, 0, 0, 0]),
                    EPERM,
                    "{} clone {flag:#x}",
                    arch.name()
                );
            }
        }
        // Every namespace flag at once (unshare -Urmpfin's clone, were it a clone).
        let all = crate::policy::NAMESPACE_FLAGS.iter().fold(0u64, |all, &flag| all | u64::from(flag));
        assert_eq!(answer(arch, clone, [all | SIGCHLD, 0, 0, 0, 0, 0]), EPERM);
    }
}

#[test]
fn ioctl_refuses_terminal_injection_only_whatever_the_high_bits() {
    const TCGETS: u64 = 0x5401;
    const FIONREAD: u64 = 0x541b;
    for arch in Arch::ALL {
        let ioctl = nr(arch, "ioctl");
        for request in [0x5412, 0x541c, 0x1_0000_5412, 0xffff_ffff_0000_541c] {
            assert_eq!(answer(arch, ioctl, [0, request, 0, 0, 0, 0]), EPERM, "{} ioctl {request:#x}", arch.name());
        }
        for request in [TCGETS, FIONREAD, 0x5413] {
            assert_eq!(answer(arch, ioctl, [0, request, 0, 0, 0, 0]), ALLOW, "{} ioctl {request:#x}", arch.name());
        }
    }
}

#[test]
fn personality_allows_the_harmless_values_only() {
    const ADDR_NO_RANDOMIZE: u64 = 0x0004_0000;
    const READ_IMPLIES_EXEC: u64 = 0x0040_0000;
    for arch in Arch::ALL {
        let personality = nr(arch, "personality");
        for &persona in crate::policy::HARMLESS_PERSONALITIES {
            assert_eq!(
                answer(arch, personality, [u64::from(persona), 0, 0, 0, 0, 0]),
                ALLOW,
                "{} {persona:#x}",
                arch.name()
            );
        }
        for persona in [ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE | 8, 1] {
            assert_eq!(answer(arch, personality, [persona, 0, 0, 0, 0, 0]), EPERM, "{} {persona:#x}", arch.name());
        }
    }
}

#[test]
fn another_abi_is_killed() {
    // i386 getpid (20) on x86_64; AArch32 getpid (20) on aarch64: seccompiler's arch check.
    assert_eq!(answer_as(Arch::X86_64, AUDIT_ARCH_I386, 20, NO_ARGS), KILL_PROCESS);
    assert_eq!(answer_as(Arch::Aarch64, AUDIT_ARCH_ARM, 20, NO_ARGS), KILL_PROCESS);
    // An x86_64 program never accepts aarch64 calls, nor the other way round.
    assert_eq!(answer_as(Arch::X86_64, AUDIT_ARCH_AARCH64, 39, NO_ARGS), KILL_PROCESS);
    assert_eq!(answer_as(Arch::Aarch64, AUDIT_ARCH_X86_64, 172, NO_ARGS), KILL_PROCESS);
}

#[test]
fn x32_calls_do_not_pass_the_x86_64_program() {
    let x32 = |number: i64| number | X32_SYSCALL_BIT;
    // keyctl 250, unshare 272, io_uring_setup 425, mount 165 ('common' in syscall_64.tbl).
    for number in [250, 272, 425, 165] {
        assert_eq!(answer(Arch::X86_64, x32(number), NO_ARGS), EPERM, "x32 {number}");
    }
    assert_eq!(answer(Arch::X86_64, x32(435), NO_ARGS), ENOSYS, "x32 clone3");
    assert_eq!(answer(Arch::X86_64, x32(56), [0x1000_0000, 0, 0, 0, 0, 0]), EPERM, "x32 clone CLONE_NEWUSER");
    // ioctl and kexec_load: x32's own entries (514, 528).
    assert_eq!(answer(Arch::X86_64, x32(514), [0, 0x5412, 0, 0, 0, 0]), EPERM, "x32 ioctl TIOCSTI");
    assert_eq!(answer(Arch::X86_64, x32(514), [0, 0x5401, 0, 0, 0, 0]), ALLOW, "x32 ioctl TCGETS");
    assert_eq!(answer(Arch::X86_64, x32(528), NO_ARGS), EPERM, "x32 kexec_load");
    assert_eq!(answer(Arch::X86_64, x32(39), NO_ARGS), ALLOW, "x32 getpid");
}

#[test]
fn programs_fit_the_kernel_and_serialise_to_8_bytes_each() {
    for arch in Arch::ALL {
        for answer in Answer::ALL {
            let program = program(arch, answer).unwrap();
            // BPF_MAXINSNS (uapi linux/bpf_common.h).
            assert!(program.len() < 4096);
            let bytes = to_bytes(&program);
            assert_eq!(bytes.len(), program.len() * 8);
            let first = &program[0];
            assert_eq!(
                bytes[0..8],
                [
                    first.code.to_le_bytes()[0],
                    first.code.to_le_bytes()[1],
                    first.jt,
                    first.jf,
                    first.k.to_le_bytes()[0],
                    first.k.to_le_bytes()[1],
                    first.k.to_le_bytes()[2],
                    first.k.to_le_bytes()[3]
                ]
            );
        }
    }
    assert_eq!(file_name(Arch::Aarch64, Answer::NotImplemented), "aarch64-enosys.bpf");
}

#[test]
fn programs_are_reproducible() {
    for arch in Arch::ALL {
        for answer in Answer::ALL {
            assert_eq!(to_bytes(&program(arch, answer).unwrap()), to_bytes(&program(arch, answer).unwrap()));
        }
    }
}
