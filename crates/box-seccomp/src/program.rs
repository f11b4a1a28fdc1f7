//! The classic-BPF programs of the Box filter: [`crate::policy`] compiled by seccompiler for one
//! architecture and one answer, as the bytes bwrap reads (`--add-seccomp-fd`).
//!
//! One program per answer, because a seccompiler filter has one action for everything it
//! matches: the `EPERM` program refuses every call of the policy but `clone3`, the `ENOSYS`
//! program refuses `clone3`. bwrap loads both; the kernel runs every loaded filter and takes the
//! strongest result (`seccomp(2)`: an errno wins over allow), so each call gets its own answer.
//! Both programs start with seccompiler's architecture check, which kills the process
//! (`SECCOMP_RET_KILL_PROCESS`) on a call of another ABI: i386 calls (`int 0x80`) on x86_64,
//! AArch32 ones on aarch64. x32 calls on x86_64 carry the x86_64 audit arch and pass that
//! check, so the x86_64 programs also hold each refused call's x32 number.
//!
//! No BPF is written here: seccompiler emits the instructions; this module picks the numbers
//! and serialises `struct sock_filter` (8 bytes each, little-endian on both architectures).

use std::collections::BTreeMap;
use std::fmt;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::policy::{Answer, Refusal, When, REFUSALS};

/// An architecture Boxes run on: the architectures `process.arch` names `x64` and `arm64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// x86_64 (`process.arch` `x64`), with the x32 ABI.
    X86_64,
    /// aarch64 (`process.arch` `arm64`).
    Aarch64,
}

/// Bit 30 of an x32 system call number (`__X32_SYSCALL_BIT`, `arch/x86/include/uapi/asm/unistd.h`).
pub const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The x32 numbers (bit 30 not included) of the refused calls whose x86_64 entry is marked `64`
/// in `arch/x86/entry/syscalls/syscall_64.tbl`: x32 calls them by an entry of its own in
/// 512-547. Every other refused call is `common` there: x32 calls it by its x86_64 number.
const X32_OWN_NUMBERS: &[(&str, i64)] = &[("ioctl", 514), ("kexec_load", 528)];

impl Arch {
    /// Every architecture a program is made for.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The kernel's name of the architecture, as in the program's file name.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    fn target(self) -> TargetArch {
        match self {
            Arch::X86_64 => TargetArch::x86_64,
            Arch::Aarch64 => TargetArch::aarch64,
        }
    }

    /// The numbers of the call `name` on this architecture: its own, and on x86_64 its x32 one.
    ///
    /// # Errors
    /// [`Error::UnknownCall`] when the architecture has no call of that name.
    pub fn numbers(self, name: &str) -> Result<Vec<i64>, Error> {
        let unknown = || Error::UnknownCall { arch: self, name: name.to_owned() };
        match self {
            Arch::X86_64 => {
                let native = i64::from(name.parse::<syscalls::x86_64::Sysno>().map_err(|_| unknown())?.id());
                let x32 = X32_OWN_NUMBERS.iter().find(|(own, _)| *own == name).map_or(native, |(_, number)| *number);
                Ok(vec![native, x32 | X32_SYSCALL_BIT])
            }
            Arch::Aarch64 => Ok(vec![i64::from(name.parse::<syscalls::aarch64::Sysno>().map_err(|_| unknown())?.id())]),
        }
    }
}

/// Why a program could not be made.
#[derive(Debug)]
pub enum Error {
    /// The policy names a call the architecture's table does not have.
    UnknownCall {
        /// The architecture.
        arch: Arch,
        /// The call's name.
        name: String,
    },
    /// seccompiler refused a rule or the filter (for one too long for the kernel, say).
    Compile(BackendError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownCall { arch, name } => write!(f, "{} has no system call named {name}", arch.name()),
            Error::Compile(_) => f.write_str("seccompiler could not compile the filter"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Compile(source) => Some(source),
            Error::UnknownCall { .. } => None,
        }
    }
}

impl From<BackendError> for Error {
    fn from(source: BackendError) -> Self {
        Error::Compile(source)
    }
}

/// The rules of one refusal: none for [`When::Always`] (seccompiler matches every call then),
/// else one rule per refused flag or value (any matches), or one rule of all the allowed values
/// (every one differs).
fn rules(when: When) -> Result<Vec<SeccompRule>, BackendError> {
    let low32 = |arg, op, value: u32| SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, u64::from(value));
    match when {
        When::Always => Ok(Vec::new()),
        // (argument & flag) == flag, for each flag.
        When::AnyFlag { arg, flags } => flags
            .iter()
            .map(|&flag| SeccompRule::new(vec![low32(arg, SeccompCmpOp::MaskedEq(u64::from(flag)), flag)?]))
            .collect(),
        When::OneOf { arg, values } => {
            values.iter().map(|&value| SeccompRule::new(vec![low32(arg, SeccompCmpOp::Eq, value)?])).collect()
        }
        When::NoneOf { arg, values } => {
            let conditions =
                values.iter().map(|&value| low32(arg, SeccompCmpOp::Ne, value)).collect::<Result<Vec<_>, _>>()?;
            Ok(vec![SeccompRule::new(conditions)?])
        }
    }
}

/// The program that gives `answer` to the refusals of the policy that have it on `arch`, and
/// allows every other call of the architecture.
///
/// # Errors
/// [`Error::UnknownCall`] for a call `arch` lacks; [`Error::Compile`] when seccompiler refuses.
pub fn program(arch: Arch, answer: Answer) -> Result<BpfProgram, Error> {
    let mut by_number = BTreeMap::new();
    for Refusal { name, when, .. } in REFUSALS.iter().filter(|refusal| refusal.answer == answer) {
        for number in arch.numbers(name)? {
            by_number.insert(number, rules(*when)?);
        }
    }
    let filter =
        SeccompFilter::new(by_number, SeccompAction::Allow, SeccompAction::Errno(answer.errno()), arch.target())?;
    Ok(BpfProgram::try_from(filter)?)
}

/// The program as bwrap reads it: each `struct sock_filter` (`u16 code, u8 jt, u8 jf, u32 k`) in
/// little-endian order, 8 bytes each.
pub fn to_bytes(program: &BpfProgram) -> Vec<u8> {
    program
        .iter()
        .flat_map(|instruction| {
            let mut bytes = [0u8; 8];
            bytes[0..2].copy_from_slice(&instruction.code.to_le_bytes());
            bytes[2] = instruction.jt;
            bytes[3] = instruction.jf;
            bytes[4..8].copy_from_slice(&instruction.k.to_le_bytes());
            bytes
        })
        .collect()
}

/// The file a program is shipped in: `<arch>-<errno>.bpf` (`x86_64-eperm.bpf`), as the Box host
/// reads it (`pkg-template/box-host/engine/box-seccomp.mjs`).
pub fn file_name(arch: Arch, answer: Answer) -> String {
    format!("{}-{}.bpf", arch.name(), answer.name())
}

#[cfg(test)]
mod tests;
