//! `box-seccomp <dir>`: writes the Box filter's programs, one file per architecture and answer
//! (`x86_64-eperm.bpf`, `x86_64-enosys.bpf`, `aarch64-eperm.bpf`, `aarch64-enosys.bpf`), into
//! `<dir>` (made when missing). Run by `scripts/build.mjs`. Exit status 2 for a wrong command
//! line, 1 when a program cannot be made or written.
// A command-line tool: its usage and its failures go to stderr.
#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use box_seccomp::policy::Answer;
use box_seccomp::program::{file_name, program, to_bytes, Arch};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next(), args.next()) else {
        eprintln!("usage: box-seccomp <dir>");
        return ExitCode::from(2);
    };
    match write_all(&PathBuf::from(dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("box-seccomp: {message}");
            ExitCode::FAILURE
        }
    }
}

fn write_all(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for arch in Arch::ALL {
        for answer in Answer::ALL {
            let program = program(arch, answer).map_err(|e| match std::error::Error::source(&e) {
                Some(source) => format!("{e}: {source}"),
                None => e.to_string(),
            })?;
            let file = dir.join(file_name(arch, answer));
            std::fs::write(&file, to_bytes(&program)).map_err(|e| format!("{}: {e}", file.display()))?;
        }
    }
    Ok(())
}
