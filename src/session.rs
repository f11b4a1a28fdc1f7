//! `BoxSession`: a handle on one live Box, whatever the provider: write files (one batch), run a
//! Command and wait for it, read a file, close.
//!
//! This is the layer the Run, the public Session API and the Agent tool build on. No provider
//! branches above this file: they are all in the `match` arms below.

use std::rc::Rc;

use web_sys::AbortSignal;

use crate::command::{Command, CommandOutcome};
use crate::error::Result;
use crate::provider::vercel::client::{OutputCaps, VercelClient};
use crate::provider::vercel::wire::CreateSandboxRequest;
use crate::provider::ProviderKind;
use crate::transfer::bundle::{write_tar_gz, BundleEntry};

/// What to ask of a provider when opening a Box.
#[derive(Debug, Clone, Default)]
pub struct BoxSpec {
    /// Box lifetime in ms (the provider stops it after that); `None` uses the provider default.
    pub timeout_ms: Option<u64>,
    /// Network policy in the Vercel request shape (`"allow-all"`, `"deny-all"` or an object).
    pub network_policy: Option<serde_json::Value>,
}

/// A provider able to open Boxes.
#[derive(Debug, Clone)]
pub enum BoxProvider {
    /// Vercel Sandbox REST (also used by `local`, against the local Box host).
    Vercel(Rc<VercelClient>),
}

impl BoxProvider {
    /// The provider reported in errors and Responses.
    pub fn kind(&self) -> ProviderKind {
        match self {
            BoxProvider::Vercel(client) => client.kind(),
        }
    }

    /// Opens a new Box.
    ///
    /// # Errors
    /// `SANDBOX_TRANSPORT_ERROR` or `SANDBOX_PROVIDER_UNAVAILABLE` when the provider refuses.
    pub async fn open(&self, spec: &BoxSpec, project_id: Option<String>, signal: Option<&AbortSignal>) -> Result<BoxSession> {
        match self {
            BoxProvider::Vercel(client) => {
                let body = CreateSandboxRequest {
                    project_id,
                    ports: Vec::new(),
                    timeout: spec.timeout_ms,
                    runtime: None,
                    network_policy: spec.network_policy.clone(),
                    env: None,
                    persistent: Some(false),
                };
                let created = client.create_sandbox(&body, signal).await?;
                Ok(BoxSession::Vercel {
                    client: client.clone(),
                    session_id: created.session.id,
                    cwd: created.session.cwd,
                    execution_authority: created.session.execution_authority,
                })
            }
        }
    }
}

/// One live Box.
#[derive(Debug)]
pub enum BoxSession {
    /// A Vercel Sandbox session (or a local Box host session).
    Vercel {
        /// The client it was opened with.
        client: Rc<VercelClient>,
        /// The Vercel session id.
        session_id: String,
        /// The Box working directory, e.g. `/vercel/sandbox`.
        cwd: String,
        /// What code inside the Box can reach, as the provider reported it (the local Box host does).
        execution_authority: Option<serde_json::Value>,
    },
}

impl BoxSession {
    /// The Box working directory (absolute Box path).
    pub fn cwd(&self) -> &str {
        match self {
            BoxSession::Vercel { cwd, .. } => cwd,
        }
    }

    /// The provider's own report of the Box's executionAuthority, when it gives one.
    pub fn reported_execution_authority(&self) -> Option<&serde_json::Value> {
        match self {
            BoxSession::Vercel { execution_authority, .. } => execution_authority.as_ref(),
        }
    }

    /// Writes files in one request. Entry paths are relative to the Box root `/`.
    pub async fn write_files(&self, entries: &[BundleEntry], signal: Option<&AbortSignal>) -> Result<()> {
        let archive = write_tar_gz(entries)?;
        match self {
            BoxSession::Vercel { client, session_id, .. } => client.write_files(session_id, archive, signal).await,
        }
    }

    /// Runs a Command and waits for its exit, keeping the tail of its output per `caps`.
    pub async fn exec(&self, command: &Command, caps: OutputCaps, signal: Option<&AbortSignal>) -> Result<CommandOutcome> {
        match self {
            BoxSession::Vercel { client, session_id, .. } => client.run_command(session_id, command, caps, signal).await,
        }
    }

    /// Reads a file by absolute Box path; `None` when it does not exist.
    pub async fn read_file(&self, path: &str, signal: Option<&AbortSignal>) -> Result<Option<Vec<u8>>> {
        match self {
            BoxSession::Vercel { client, session_id, .. } => client.read_file(session_id, path, signal).await,
        }
    }

    /// Stops the Box and everything running in it.
    pub async fn close(&self) -> Result<()> {
        match self {
            BoxSession::Vercel { client, session_id, .. } => client.stop_session(session_id, None).await,
        }
    }
}
