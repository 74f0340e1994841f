//! `mend serve`: the gateway (`mend-gateway`) on a port, configured from a TOML file,
//! the environment and flags, logging to stderr.
//!
//! Layers, each overriding the one before: defaults, `--config FILE` (or `MEND_CONFIG`),
//! `MEND_*` variables, flags. It listens on 127.0.0.1:8787 unless told otherwise, and
//! says so (and warns) when told to listen beyond loopback.
//!
//! Traces go over OTLP/HTTP when the standard `OTEL_EXPORTER_OTLP_*ENDPOINT` variables
//! say where (`mend_gateway::telemetry`); what is left is sent once the server has
//! drained. Logs are text, or with `--log-format json` one JSON object a line (the
//! start-up lines too), never a credential or a body.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use mend::Dialect;
use mend_gateway::config::{parse_listen, set_provider, strip_userinfo};
use mend_gateway::ui::Inspector;
use mend_gateway::{Config, Gateway, Mode, Telemetry};

use crate::printer::Printer;
use crate::Status;

/// How long in-flight requests may run after a shutdown signal.
const DRAIN: Duration = Duration::from_secs(10);

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A TOML configuration file (also MEND_CONFIG)
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on, or a port on 127.0.0.1 (default 127.0.0.1:8787; also MEND_LISTEN)
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Mode for every upstream: off, observe, heal, repair or strict (default observe; also
    /// MEND_MODE). heal forwards untouched and, only when the provider refuses a history
    /// mend recognizes, repairs it and retries once
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,
    /// Base URL for both OpenAI dialects (default https://api.openai.com; also MEND_OPENAI_BASE_URL)
    #[arg(long, value_name = "URL")]
    openai_base_url: Option<String>,
    /// Base URL for Anthropic (default https://api.anthropic.com; also MEND_ANTHROPIC_BASE_URL)
    #[arg(long, value_name = "URL")]
    anthropic_base_url: Option<String>,
    /// Base URL for Gemini (default https://generativelanguage.googleapis.com; also MEND_GEMINI_BASE_URL)
    #[arg(long, value_name = "URL")]
    gemini_base_url: Option<String>,
    /// Provider profile for the OpenAI dialects, e.g. groq, mistral, deepseek (see `mend providers`)
    #[arg(long, value_name = "PROVIDER")]
    openai_provider: Option<String>,
    /// Provider profile for Anthropic: anthropic, bedrock or vertex
    #[arg(long, value_name = "PROVIDER")]
    anthropic_provider: Option<String>,
    /// Provider profile for Gemini: gemini or vertex
    #[arg(long, value_name = "PROVIDER")]
    gemini_provider: Option<String>,
    /// Largest request body in bytes; larger ones get 413 (default 33554432)
    #[arg(long, value_name = "BYTES")]
    body_limit: Option<usize>,
    /// Upstream connect timeout in milliseconds (default 10000)
    #[arg(long, value_name = "MS")]
    connect_timeout_ms: Option<u64>,
    /// Upstream read timeout in milliseconds, per read (default 600000)
    #[arg(long, value_name = "MS")]
    read_timeout_ms: Option<u64>,
    /// Ignore the x-mend-mode request header. Without this flag a request's
    /// x-mend-mode may raise its upstream's mode (off < observe < heal < repair < strict) but
    /// not lower it; the response's x-mend-mode says which mode applied
    #[arg(long, conflicts_with = "mode_header_lowers")]
    no_mode_header: bool,
    /// Let x-mend-mode also lower the mode (a client may then ask for off on a strict
    /// upstream; also MEND_MODE_HEADER_LOWERS=true, mode_header_lowers in the file)
    #[arg(long)]
    mode_header_lowers: bool,
    /// Write every request and response as JSONL in this folder, credentials redacted
    #[arg(long, value_name = "DIR")]
    tap: Option<PathBuf>,
    /// Keep conversations named by x-mend-conversation in this database: sqlite:PATH or
    /// postgres://... (as for `mend store`; also MEND_DB)
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// With --db, the most an answer's end waits for its exchange to commit, in
    /// milliseconds; past it the answer goes out, the capture reported failed (default 5000)
    #[arg(long, value_name = "MS")]
    capture_timeout_ms: Option<u64>,
    /// Scope conversations to the tenant this request header names (set by a trusted
    /// proxy in front of mend) instead of to the caller's upstream credential (also
    /// MEND_TENANT_HEADER, tenant_header in the file)
    #[arg(long, value_name = "HEADER")]
    tenant_header: Option<String>,
    /// Log level filter for stderr (error, warn, info, debug, trace, or a RUST_LOG-style filter)
    #[arg(long, value_name = "FILTER", default_value = "info")]
    log: String,
    /// Log line format on stderr: text, or json (one JSON object a line, start-up lines
    /// included)
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "json"], default_value = "text")]
    log_format: String,
    /// Same as --log-format json
    #[arg(long, hide = true)]
    log_json: bool,
    /// Serve the conversation inspector at /ui over the --db store (needs --db). Without
    /// an admin token it answers on loopback only: on the gateway's address when that is
    /// loopback, else on --ui-listen
    #[arg(long)]
    ui: bool,
    /// Serve the inspector on its own address instead of the gateway's (default
    /// 127.0.0.1:8788 when the gateway listens beyond loopback without an admin token)
    #[arg(long, value_name = "ADDR", requires = "ui")]
    ui_listen: Option<String>,
    /// A file whose first line is the admin token that /ui and /metrics then ask for
    /// (also MEND_ADMIN_TOKEN_FILE, or the token itself in MEND_ADMIN_TOKEN)
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
}

impl ServeArgs {
    /// The configuration: defaults, then the file, the environment, the flags.
    fn config(&self) -> Result<Config, String> {
        let mut c = Config::default();
        let file = self
            .config
            .clone()
            .or_else(|| std::env::var_os("MEND_CONFIG").map(PathBuf::from));
        if let Some(f) = &file {
            c.apply_file(f).map_err(|e| e.to_string())?;
        }
        c.apply_env(|k| std::env::var(k).ok())
            .map_err(|e| e.to_string())?;
        if let Some(l) = &self.listen {
            c.listen = parse_listen(l).map_err(|e| format!("--listen: {e}"))?;
        }
        if let Some(m) = &self.mode {
            c.set_mode_everywhere(m.parse::<Mode>().map_err(|e| format!("--mode: {e}"))?);
        }
        let openai = [Dialect::OpenAiChat, Dialect::OpenAiResponses];
        for (url, dialects) in [
            (&self.openai_base_url, &openai[..]),
            (&self.anthropic_base_url, &[Dialect::Anthropic][..]),
            (&self.gemini_base_url, &[Dialect::Gemini][..]),
        ] {
            if let Some(u) = url {
                for d in dialects {
                    c.upstream_mut(*d).base_url = u.trim().trim_end_matches('/').to_string();
                }
            }
        }
        for (provider, dialects) in [
            (&self.openai_provider, &openai[..]),
            (&self.anthropic_provider, &[Dialect::Anthropic][..]),
            (&self.gemini_provider, &[Dialect::Gemini][..]),
        ] {
            if let Some(p) = provider {
                set_provider(&mut c, p, dialects);
            }
        }
        if let Some(n) = self.body_limit {
            c.body_limit = n;
        }
        if let Some(ms) = self.connect_timeout_ms {
            c.connect_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = self.read_timeout_ms {
            c.read_timeout = Duration::from_millis(ms);
        }
        if self.no_mode_header {
            c.mode_header = false;
        }
        if self.mode_header_lowers {
            c.mode_header_lowers = true;
        }
        if let Some(t) = &self.tap {
            c.tap = Some(t.clone());
        }
        if let Some(db) = &self.db {
            c.db = Some(db.clone());
        }
        c.admin_token = crate::ui::admin_token(self.admin_token_file.as_deref())?;
        if let Some(ms) = self.capture_timeout_ms {
            c.capture_timeout = Duration::from_millis(ms);
        }
        if let Some(h) = &self.tenant_header {
            c.tenant_header = Some(h.trim().to_ascii_lowercase());
        }
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    /// Where the inspector goes, when asked for: `None` on the gateway's listener,
    /// `Some(addr)` on a listener of its own.
    fn inspector_listen(&self, c: &Config) -> Result<Option<Option<SocketAddr>>, String> {
        if !self.ui {
            return Ok(None);
        }
        if c.db.is_none() {
            return Err("--ui needs --db (or MEND_DB): the store the inspector shows".into());
        }
        let token = c.admin_token.is_some();
        let own = match &self.ui_listen {
            Some(l) => Some(parse_listen(l).map_err(|e| format!("--ui-listen: {e}"))?),
            None if token || c.listen.ip().is_loopback() => None,
            None => Some(parse_listen(crate::ui::DEFAULT_UI_LISTEN)?),
        };
        if let Some(addr) = own {
            crate::ui::check_loopback(addr, token, "--ui-listen")?;
        }
        Ok(Some(own))
    }
}

/// How long the last spans may take to go out at exit.
const TRACES_FLUSH: Duration = Duration::from_secs(5);

pub fn run(args: ServeArgs, printer: &mut Printer) -> io::Result<Status> {
    let config = args
        .config()
        .and_then(|c| args.inspector_listen(&c).map(|ui| (c, ui)));
    let (config, ui) = match config {
        Ok(c) => c,
        Err(why) => {
            printer.err_line(&format!("mend serve: {why}"));
            return Ok(Status::BadInput);
        }
    };
    let telemetry = match Telemetry::from_env() {
        Ok(t) => t,
        Err(why) => {
            printer.err_line(&format!("mend serve: traces: {why}"));
            return Ok(Status::BadInput);
        }
    };
    let json = args.log_json || args.log_format == "json";
    if let Err(why) = init_logging(&args.log, json) {
        printer.err_line(&format!("mend serve: --log: {why}"));
        return Ok(Status::BadInput);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut say = Say { printer, json };
    let status = runtime.block_on(serve(config, ui, telemetry.clone(), &mut say));
    // The server has drained: the last spans go out now, off the runtime.
    drop(runtime);
    if let Some(t) = telemetry {
        if let Err(why) = t.shutdown(TRACES_FLUSH) {
            say.line(&format!(
                "mend serve: warning: traces not all sent to {}: {why}",
                t.destination()
            ));
        }
    }
    status
}

/// The start-up lines: text on stderr, or log events when logs are JSON (so that every
/// line of stderr is one JSON object).
struct Say<'a> {
    printer: &'a mut Printer,
    json: bool,
}

impl Say<'_> {
    fn line(&mut self, line: &str) {
        if self.json {
            tracing::info!("{line}");
        } else {
            self.printer.err_line(line);
        }
    }
}

async fn serve(
    config: Config,
    ui: Option<Option<SocketAddr>>,
    telemetry: Option<Telemetry>,
    say: &mut Say<'_>,
) -> io::Result<Status> {
    let listen = config.listen;
    let store = config.db.as_deref().map(strip_userinfo);
    let inspector = match (ui, &config.db) {
        (Some(_), Some(db)) => match Inspector::open(db, config.admin_token.clone()).await {
            Ok(i) => Some(i.with_tenant_header(config.tenant_header.clone())),
            Err(e) => {
                say.line(&format!("mend serve: the inspector: {e}"));
                return Ok(Status::BadInput);
            }
        },
        _ => None,
    };
    let mut gateway = match Gateway::open(config).await {
        Ok(g) => g,
        Err(e) => {
            say.line(&format!("mend serve: {e}"));
            return Ok(Status::BadInput);
        }
    };
    if let Some(t) = telemetry {
        gateway = match gateway.with_telemetry(t) {
            Ok(g) => g,
            // A fresh gateway has none yet.
            Err(_) => return Err(io::Error::other("the gateway already had telemetry")),
        };
    }
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            say.line(&format!("mend serve: cannot listen on {listen}: {e}"));
            return Ok(Status::BadInput);
        }
    };
    let bound = listener.local_addr()?;
    say.line(&format!("mend serve: listening on http://{bound}"));
    for d in Dialect::ALL {
        let u = gateway.config().upstream(d);
        let provider = u.provider.as_deref().unwrap_or("default profile");
        say.line(&format!(
            "  {:<17} -> {} ({}, {})",
            d.name(),
            u.display_url(),
            u.mode,
            provider
        ));
    }
    if let Some(db) = store {
        let scoped = match &gateway.config().tenant_header {
            Some(h) => format!("per tenant, from the {h} header"),
            None => "per upstream credential (hashed)".to_string(),
        };
        say.line(&format!(
            "  conversations: {db} (x-mend-conversation), kept {scoped}"
        ));
    }
    if let Some(tap) = gateway.tap_path() {
        say.line(&format!("  tap: {}", tap.display()));
    }
    if let Some(t) = gateway.telemetry() {
        say.line(&format!("  traces: {}", t.destination()));
    }
    if !bound.ip().is_loopback() {
        say.line(&format!(
            "mend serve: warning: {} is reachable from other machines; the gateway has no \
             authentication of its own",
            bound.ip()
        ));
    }
    let mut router = mend_gateway::app(gateway);
    let mut ui_server = None;
    if let Some(inspector) = inspector {
        match ui.flatten() {
            None => {
                say.line(&crate::ui::access_line(
                    &format!("http://{bound}/ui"),
                    inspector.has_token(),
                ));
                router = router.merge(mend_gateway::ui::router(inspector));
            }
            Some(addr) => {
                let l = match tokio::net::TcpListener::bind(addr).await {
                    Ok(l) => l,
                    Err(e) => {
                        say.line(&format!("mend serve: cannot listen on {addr}: {e}"));
                        return Ok(Status::BadInput);
                    }
                };
                let at = l.local_addr()?;
                say.line(&crate::ui::access_line(
                    &format!("http://{at}/ui"),
                    inspector.has_token(),
                ));
                let (tx, rx) = tokio::sync::oneshot::channel::<()>();
                let ui_router = mend_gateway::ui::router(inspector);
                tokio::spawn(mend_gateway::serve_router(ui_router, l, async move {
                    let _ = rx.await;
                }));
                ui_server = Some(tx);
            }
        }
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(mend_gateway::serve_router(router, listener, async move {
        let _ = stop_rx.await;
    }));
    shutdown_signal().await;
    if let Some(tx) = ui_server {
        let _ = tx.send(());
    }
    tracing::info!(
        "shutting down; in-flight requests have {} s",
        DRAIN.as_secs()
    );
    let _ = stop_tx.send(());
    match tokio::time::timeout(DRAIN, server).await {
        Ok(Ok(Ok(()))) | Err(_) => Ok(Status::Valid),
        Ok(Ok(Err(e))) => Err(e),
        Ok(Err(join)) => Err(io::Error::other(join.to_string())),
    }
}

/// Ctrl-C, or SIGTERM on Unix.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// Logs to stderr. A bare level applies to mend's crates (others stay at warn); a
/// RUST_LOG-style filter is taken as written.
fn init_logging(filter: &str, json: bool) -> Result<(), String> {
    use tracing_subscriber::EnvFilter;
    let directives = if filter.contains('=') || filter.contains(',') {
        filter.to_string()
    } else {
        format!("warn,mend_gateway={filter},mend={filter},mend_store={filter}")
    };
    let filter = EnvFilter::try_new(&directives).map_err(|e| e.to_string())?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(false);
    let result = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
    result.map_err(|e| e.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn heal_is_a_mode_of_the_flag() {
        let cli = Cli::try_parse_from(["mend", "--mode", "heal"]).unwrap();
        let c = cli.serve.config().unwrap();
        assert!(Dialect::ALL
            .iter()
            .all(|d| c.upstream(*d).mode == Mode::Heal));
        let cli = Cli::try_parse_from(["mend", "--mode", "mend"]).unwrap();
        let e = cli.serve.config().unwrap_err();
        assert!(e.contains("off, observe, heal, repair or strict"), "{e}");
    }

    /// Where `--ui` puts the inspector: `None` not asked, `Some(None)` on the gateway's
    /// listener, `Some(Some(addr))` on its own.
    fn placed(args: &[&str], token: bool) -> Result<Option<Option<SocketAddr>>, String> {
        let cli = Cli::try_parse_from([&["mend"], args].concat()).unwrap();
        let mut c = cli.serve.config().unwrap();
        if token {
            c.admin_token =
                Some(mend_gateway::admin::AdminToken::new("0123456789abcdef", "test").unwrap());
        }
        cli.serve.inspector_listen(&c)
    }

    #[test]
    fn the_inspector_stays_on_loopback_without_a_token() {
        let db = ["--db", "sqlite:/tmp/x.db"];
        assert_eq!(placed(&db, false), Ok(None));
        assert_eq!(
            placed(&[&db[..], &["--ui"]].concat(), false),
            Ok(Some(None))
        );
        let wide = [&db[..], &["--ui", "--listen", "0.0.0.0:8787"]].concat();
        let own: SocketAddr = "127.0.0.1:8788".parse().unwrap();
        assert_eq!(placed(&wide, false), Ok(Some(Some(own))));
        assert_eq!(placed(&wide, true), Ok(Some(None)));
        let far = [&wide[..], &["--ui-listen", "0.0.0.0:9000"]].concat();
        assert!(placed(&far, false).unwrap_err().contains("admin token"));
        assert!(placed(&far, true).is_ok());
        let e = placed(&["--ui"], false).unwrap_err();
        assert!(e.contains("--ui needs --db"), "{e}");
    }
}
