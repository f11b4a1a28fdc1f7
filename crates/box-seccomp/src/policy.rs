//! What a bubblewrap Box may not call: the refused system calls by name, the conditions on their
//! arguments and the answer each gets, the same on every architecture (the numbers are
//! [`crate::program`]'s). Everything not named here is allowed.
//!
//! The list follows the container runtimes' defaults (Docker's `profiles/seccomp/default.json`
//! for a process without `CAP_SYS_ADMIN`, Flatpak's `flatpak-run.c`): kernel attack surface that
//! no package install or Definition needs (io_uring, the key store, BPF, perf, userfaultfd),
//! namespaces and mounts (a Box gets its own from bubblewrap and makes none), and the host-wide
//! administrative calls. Every refusal answers `EPERM` but `clone3`'s: its flags sit in a struct
//! the filter cannot read, so it answers `ENOSYS` and glibc falls back to `clone`, whose flags
//! the filter reads.
//!
//! This module holds data only: no BPF and no architecture.

/// How a refused call answers (the `errno` it returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Answer {
    /// `EPERM` (1): the call is not permitted.
    NotPermitted,
    /// `ENOSYS` (38): the call does not exist, so a caller falls back to an older one.
    NotImplemented,
}

impl Answer {
    /// Both answers, one program each ([`crate::program::program`]).
    pub const ALL: [Answer; 2] = [Answer::NotPermitted, Answer::NotImplemented];

    /// The `errno` value: asm-generic `errno-base.h` (`EPERM`) and `errno.h` (`ENOSYS`), which
    /// x86_64 and aarch64 both use.
    pub fn errno(self) -> u32 {
        match self {
            Answer::NotPermitted => 1,
            Answer::NotImplemented => 38,
        }
    }

    /// The lowercase errno name, as in the program's file name (`eperm`, `enosys`).
    pub fn name(self) -> &'static str {
        match self {
            Answer::NotPermitted => "eperm",
            Answer::NotImplemented => "enosys",
        }
    }
}

/// When a call is refused. Arguments are compared on their low 32 bits: every value below is
/// 32-bit, and the kernel reads `ioctl`'s request and `personality`'s persona as `unsigned int`,
/// so high bits set by the caller cannot turn a refused value into an allowed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Every call.
    Always,
    /// A call with any of `flags` set in argument `arg` (0-based).
    AnyFlag {
        /// The argument index, 0-based.
        arg: u8,
        /// Single-bit flags.
        flags: &'static [u32],
    },
    /// A call whose argument `arg` (0-based) is one of `values`.
    OneOf {
        /// The argument index, 0-based.
        arg: u8,
        /// The refused values.
        values: &'static [u32],
    },
    /// A call whose argument `arg` (0-based) is none of `values`.
    NoneOf {
        /// The argument index, 0-based.
        arg: u8,
        /// The allowed values.
        values: &'static [u32],
    },
}

/// One refused system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The kernel's name of the call (as in `syscall_64.tbl` and the generic table).
    pub name: &'static str,
    /// When it is refused.
    pub when: When,
    /// What it answers then.
    pub answer: Answer,
}

/// The namespace flags of `clone` (uapi `linux/sched.h`, the same on every architecture):
/// `CLONE_NEWNS`, `CLONE_NEWCGROUP`, `CLONE_NEWUTS`, `CLONE_NEWIPC`, `CLONE_NEWUSER`,
/// `CLONE_NEWPID`, `CLONE_NEWNET`. `CLONE_NEWTIME` (0x80) is left out: `clone` reads that byte
/// as the exit signal, only `clone3` and `unshare` take it, and both are refused whole.
pub const NAMESPACE_FLAGS: &[u32] =
    &[0x0002_0000, 0x0200_0000, 0x0400_0000, 0x0800_0000, 0x1000_0000, 0x2000_0000, 0x4000_0000];

/// `TIOCSTI` (push input into a terminal) and `TIOCLINUX` (the virtual console's selection and
/// more): asm-generic `ioctls.h`, which x86_64 and aarch64 both use.
pub const TERMINAL_INJECTION: &[u32] = &[0x5412, 0x541C];

/// The personalities a Box may set (Docker's list): `PER_LINUX`, `PER_LINUX32`, `UNAME26`,
/// `UNAME26 | PER_LINUX32`, and `0xffffffff`, which only reads the current one. Others would
/// turn off address randomisation (`ADDR_NO_RANDOMIZE`) or make data executable
/// (`READ_IMPLIES_EXEC`) for the programs the Box runs next.
pub const HARMLESS_PERSONALITIES: &[u32] = &[0x0000_0000, 0x0000_0008, 0x0002_0000, 0x0002_0008, 0xffff_ffff];

const fn refuse(name: &'static str) -> Refusal {
    Refusal { name, when: When::Always, answer: Answer::NotPermitted }
}

/// Every refused call.
pub const REFUSALS: &[Refusal] = &[
    // io_uring: a large kernel surface, off in Docker's and ChromeOS's defaults; libuv (Node)
    // falls back to its thread pool when io_uring_setup fails.
    refuse("io_uring_setup"),
    refuse("io_uring_enter"),
    refuse("io_uring_register"),
    // The kernel key store is not namespaced: keys of other users of the machine.
    refuse("keyctl"),
    refuse("add_key"),
    refuse("request_key"),
    // Namespaces: a Box has its own from bubblewrap and needs no nested ones.
    refuse("unshare"),
    refuse("setns"),
    Refusal { name: "clone", when: When::AnyFlag { arg: 0, flags: NAMESPACE_FLAGS }, answer: Answer::NotPermitted },
    Refusal { name: "clone3", when: When::Always, answer: Answer::NotImplemented },
    // Mounts, old and new API.
    refuse("mount"),
    refuse("umount2"),
    refuse("pivot_root"),
    refuse("move_mount"),
    refuse("open_tree"),
    refuse("fsopen"),
    refuse("fsmount"),
    refuse("fsconfig"),
    refuse("fspick"),
    refuse("mount_setattr"),
    // Kernel programs, tracing and page-fault handling from user space.
    refuse("bpf"),
    refuse("perf_event_open"),
    refuse("userfaultfd"),
    // Host administration: kernels, modules, accounting, swap, reboot, the kernel log, quotas.
    refuse("kexec_load"),
    refuse("kexec_file_load"),
    refuse("init_module"),
    refuse("finit_module"),
    refuse("delete_module"),
    refuse("acct"),
    refuse("swapon"),
    refuse("swapoff"),
    refuse("reboot"),
    refuse("syslog"),
    refuse("quotactl"),
    // Opening a file by its handle skips the path walk and its permission checks on the way.
    refuse("open_by_handle_at"),
    refuse("lookup_dcookie"),
    // Typing into, or reading the selection of, a terminal the Box shares.
    Refusal { name: "ioctl", when: When::OneOf { arg: 1, values: TERMINAL_INJECTION }, answer: Answer::NotPermitted },
    Refusal {
        name: "personality",
        when: When::NoneOf { arg: 0, values: HARMLESS_PERSONALITIES },
        answer: Answer::NotPermitted,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_is_named_once() {
        let mut names: Vec<&str> = REFUSALS.iter().map(|r| r.name).collect();
        names.sort_unstable();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn only_clone3_answers_enosys() {
        let enosys: Vec<&str> =
            REFUSALS.iter().filter(|r| r.answer == Answer::NotImplemented).map(|r| r.name).collect();
        assert_eq!(enosys, ["clone3"]);
    }

    #[test]
    fn flags_are_single_bits() {
        assert!(NAMESPACE_FLAGS.iter().all(|flag| flag.count_ones() == 1));
    }
}
