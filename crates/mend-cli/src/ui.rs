//! `mend ui`: the conversation inspector (`mend_gateway::ui`) on its own, over a store;
//! and the admin token both it and `mend serve` read (`MEND_ADMIN_TOKEN`,
//! `MEND_ADMIN_TOKEN_FILE` or `--admin-token-file`).
//!
//! Without an admin token the inspector listens on loopback only: `mend ui` refuses a
//! `--listen` beyond it, and `mend serve --ui` puts the inspector on a loopback listener
//! of its own when the gateway listens beyond loopback.

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::Args;
use mend_gateway::admin::AdminToken;
use mend_gateway::config::{parse_listen, strip_userinfo};
use mend_gateway::ui::Inspector;

use crate::printer::Printer;
use crate::Status;

/// Where `mend ui` listens unless told, and where `mend serve --ui` puts the inspector
/// when the gateway listens beyond loopback and there is no admin token.
pub const DEFAULT_UI_LISTEN: &str = "127.0.0.1:8788";

#[derive(Debug, Args)]
pub struct UiArgs {
    /// The conversation store: sqlite:PATH or postgres://... (also MEND_DB; default the
    /// SQLite file in the user's data directory)
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// Address to listen on, or a port on 127.0.0.1 (default 127.0.0.1:8788). Beyond
    /// loopback only with an admin token
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// A file whose first line is the admin token (also MEND_ADMIN_TOKEN_FILE, or the
    /// token itself in MEND_ADMIN_TOKEN)
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
}

/// The admin token: `--admin-token-file`, else `MEND_ADMIN_TOKEN_FILE`, else
/// `MEND_ADMIN_TOKEN`; none when none is set.
pub fn admin_token(file: Option<&Path>) -> Result<Option<AdminToken>, String> {
    let from_env_file = std::env::var_os("MEND_ADMIN_TOKEN_FILE").map(PathBuf::from);
    if let Some(f) = file.map(Path::to_path_buf).or(from_env_file) {
        return AdminToken::from_file(&f)
            .map(Some)
            .map_err(|e| e.to_string());
    }
    match std::env::var("MEND_ADMIN_TOKEN") {
        Ok(t) if !t.is_empty() => AdminToken::new(&t, "MEND_ADMIN_TOKEN")
            .map(Some)
            .map_err(|e| e.to_string()),
        _ => Ok(None),
    }
}

/// How the inspector is reached, said at start-up.
pub fn access_line(url: &str, token: bool) -> String {
    if token {
        format!("  inspector: {url} (admin token required)")
    } else {
        format!(
            "  inspector: {url} (no admin token: loopback only; set MEND_ADMIN_TOKEN to open it to others)"
        )
    }
}

/// Refuse a listen address beyond loopback for an inspector without a token.
pub fn check_loopback(addr: SocketAddr, token: bool, flag: &str) -> Result<(), String> {
    if token || addr.ip().is_loopback() {
        return Ok(());
    }
    Err(format!(
        "{flag} {addr} is reachable from other machines, and the inspector shows stored \
         conversations: set an admin token (MEND_ADMIN_TOKEN or --admin-token-file), or \
         listen on loopback"
    ))
}

pub fn run(args: UiArgs, printer: &mut Printer) -> io::Result<Status> {
    let bad = |why: String, printer: &mut Printer| {
        printer.err_line(&format!("mend ui: {why}"));
        Ok(Status::BadInput)
    };
    let token = match admin_token(args.admin_token_file.as_deref()) {
        Ok(t) => t,
        Err(why) => return bad(why, printer),
    };
    let listen = match parse_listen(args.listen.as_deref().unwrap_or(DEFAULT_UI_LISTEN)) {
        Ok(a) => a,
        Err(e) => return bad(format!("--listen: {e}"), printer),
    };
    if let Err(why) = check_loopback(listen, token.is_some(), "--listen") {
        return bad(why, printer);
    }
    let Some(db) = args
        .db
        .or_else(|| std::env::var("MEND_DB").ok())
        .or_else(mend_store::default_db_url)
    else {
        return bad(
            "no store: give --db sqlite:PATH or postgres://... (or MEND_DB)".into(),
            printer,
        );
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let inspector = match Inspector::open(&db, token).await {
            Ok(i) => i,
            Err(e) => return bad(e.to_string(), printer),
        };
        let listener = match tokio::net::TcpListener::bind(listen).await {
            Ok(l) => l,
            Err(e) => return bad(format!("cannot listen on {listen}: {e}"), printer),
        };
        let bound = listener.local_addr()?;
        printer.err_line(&format!("mend ui: listening on http://{bound}"));
        printer.err_line(&format!("  store: {}", strip_userinfo(&db)));
        printer.err_line(&access_line(
            &format!("http://{bound}/ui"),
            inspector.has_token(),
        ));
        let router = mend_gateway::ui::router(inspector);
        mend_gateway::serve_router(router, listener, crate::serve::shutdown_signal()).await?;
        Ok(Status::Valid)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_loopback_needs_a_token() {
        let open: SocketAddr = "0.0.0.0:8788"
            .parse()
            .unwrap_or(SocketAddr::from(([0; 4], 1)));
        let e = check_loopback(open, false, "--listen").unwrap_err();
        assert!(e.contains("admin token"), "{e}");
        assert!(check_loopback(open, true, "--listen").is_ok());
        assert!(check_loopback(SocketAddr::from(([127, 0, 0, 1], 1)), false, "x").is_ok());
    }
}
