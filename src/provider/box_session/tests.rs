//! The seam's defaults: what a provider without an operation answers (`SANDBOX_NOT_SUPPORTED`
//! naming the provider and the operation).
use futures::FutureExt;

use super::*;

/// A provider with only the required operations: every other one keeps its default.
#[derive(Debug)]
struct Minimal;

fn refused<'a, T: 'a>() -> LocalBoxFuture<'a, Result<T>> {
    Box::pin(std::future::ready(Err(Error::new(ErrorCode::TransportError, "not reached"))))
}

impl BoxSession for Minimal {
    fn provider(&self) -> ProviderKind {
        ProviderKind::Cloudflare
    }
    fn id(&self) -> &str {
        "box"
    }
    fn cwd(&self) -> &str {
        "/work"
    }
    fn write_files<'a>(&'a self, _: &'a [BoxFile], _: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<()>> {
        Box::pin(std::future::ready(Ok(())))
    }
    fn exec<'a>(&'a self, _: &'a Command, _: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        refused()
    }
    fn exec_streaming<'a>(
        &'a self,
        _: &'a Command,
        _: &'a mut dyn FnMut(OutputStream, &str),
        _: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<CommandOutcome>> {
        refused()
    }
    fn read_file<'a>(&'a self, _: &'a str, _: u64, _: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<FileRead>> {
        refused()
    }
    fn close(&self) -> LocalBoxFuture<'_, Result<()>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

impl Provider for Minimal {
    fn kind(&self) -> ProviderKind {
        ProviderKind::Cloudflare
    }
    fn execution_authority<'a>(&'a self, _: Option<&'a AbortSignal>) -> LocalBoxFuture<'a, Result<ExecutionAuthority>> {
        Box::pin(std::future::ready(Ok(ExecutionAuthority::cloudflare())))
    }
    fn open<'a>(
        &'a self,
        _: &'a BoxSpec,
        _: Option<&'a AbortSignal>,
    ) -> LocalBoxFuture<'a, Result<Box<dyn BoxSession>>> {
        Box::pin(std::future::ready(Ok(Box::new(Minimal) as Box<dyn BoxSession>)))
    }
}

fn now<T>(future: LocalBoxFuture<'_, Result<T>>) -> Result<T> {
    future.now_or_never().expect("a default answers at once")
}

fn assert_unsupported<T: std::fmt::Debug>(answer: Result<T>, operation: Operation) {
    let error = answer.unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotSupported, "{}", error.message());
    assert_eq!(error.operation(), Some(operation));
    assert_eq!(error.provider(), Some(ProviderKind::Cloudflare));
    assert!(error.message().contains("cloudflare"), "{}", error.message());
}

#[test]
fn box_operations_a_provider_lacks_are_not_supported() {
    let session: Box<dyn BoxSession> = Box::new(Minimal);
    let command = Command::default();
    assert_unsupported(now(session.spawn(&command, None)), Operation::Exec);
    assert_unsupported(now(session.logs("1", None)), Operation::Exec);
    assert_unsupported(now(session.wait("1", None)), Operation::Exec);
    assert_unsupported(now(session.kill("1", 15, None)), Operation::Exec);
    assert_unsupported(now(session.spawn_with_stdin(&command, None)), Operation::Stdin);
    assert_unsupported(now(session.write_stdin("1", b"a", true, None)), Operation::Stdin);
    assert_unsupported(now(session.command("1", None)), Operation::Exec);
    assert_unsupported(now(session.extend_timeout(1000, None)), Operation::ExtendTimeout);
    assert_unsupported(session.port_url(3000), Operation::Ports);
    let policy = serde_json::json!("deny-all");
    assert_unsupported(now(session.update_network_policy(&policy, None)), Operation::UpdateNetworkPolicy);
    assert_eq!(session.reported_expires_at_ms(), None);
    assert_unsupported(now(session.snapshot(None, None)), Operation::Snapshot);
    assert!(session.sandbox_name().is_none());
    let terminal = InteractiveRequest::default();
    assert_unsupported(now(session.open_interactive(&terminal, None)), Operation::OpenInteractive);
    assert_unsupported(now(session.exists("/work/a", None)), Operation::Read);
    assert_unsupported(now(session.mkdir("/work/a", true, None)), Operation::Mkdir);
    assert_unsupported(now(session.remove("/work/a", false, None)), Operation::Remove);
    let prepare = now(session.prepare(None)).unwrap_err();
    assert_eq!(
        (prepare.code(), prepare.message()),
        (ErrorCode::NotSupported, "The cloudflare provider keeps no prepared projects.")
    );
    assert_eq!(now(session.keep_held()).unwrap_err().code(), ErrorCode::NotSupported);
    assert_eq!(
        (session.prepared(), session.kept_root(), session.local_box_host_work_dir()),
        (PreparedStart::Empty, None, None)
    );
    assert!(!session.stops_at_lifetime() && session.reported_execution_authority().is_none());
    assert!(now(session.stage_files(&[], None)).is_ok(), "staging defaults to write_files");
}

#[test]
fn provider_queries_answer_none_and_prepared_projects_are_not_supported() {
    let provider: &dyn Provider = &Minimal;
    assert!(!provider.prepares() && !provider.keeps_boxes() && !provider.uses_in_process_host());
    assert!(!provider.exposes_ports());
    assert_eq!(provider.in_process_host(), None);
    assert!(now(provider.ensure_ready()).unwrap().is_none());
    assert!(!now(provider.close_kept_box("kept")).unwrap(), "no Box is kept by the provider");
    assert_unsupported(now(provider.attach("box", None)), Operation::Attach);
    assert_unsupported(now(provider.list_boxes(None)), Operation::ListSessions);
    assert_unsupported(now(provider.list_snapshots(None)), Operation::Snapshot);
    assert_unsupported(now(provider.delete_snapshot("snap", None)), Operation::Snapshot);
    assert_unsupported(now(provider.fork("box", &BoxSpec::default(), None)).map(|_| ()), Operation::Fork);
    for error in [now(provider.list_prepared(None)).unwrap_err(), now(provider.drop_prepared("id")).unwrap_err()] {
        assert_eq!(
            (error.code(), error.message()),
            (ErrorCode::NotSupported, "The cloudflare provider keeps no prepared projects.")
        );
    }
    let session = now(provider.open(&BoxSpec::default(), None)).unwrap();
    assert_eq!(
        now(provider.box_execution_authority(session.as_ref())).unwrap(),
        ExecutionAuthority::cloudflare(),
        "the provider's own by default"
    );
}
