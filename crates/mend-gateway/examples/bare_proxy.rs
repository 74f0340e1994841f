//! The floor under `mend serve` (`bench/gateway-overhead.sh`, its `bare` row): a
//! forwarding proxy that does nothing else, on the stack and runtime settings mend uses.
//!
//! ```sh
//! bare_proxy 127.0.0.1:19404 127.0.0.1:19400           # LISTEN UPSTREAM
//! bare_proxy 127.0.0.1:19405 127.0.0.1:19400 --check   # the same, and mend's check
//! ```
//!
//! Every request is read whole, then sent with its method, path, query and headers
//! (`host` set to the upstream) to UPSTREAM over a pooled keep-alive HTTP/1.1 client
//! (`hyper_util`'s, the one under reqwest), and the answer's status, headers and body
//! stream back as they come. The runtime is tokio's multi-thread one with its default
//! worker count and the allocator mimalloc, as `mend serve` has them; the sockets on
//! both sides have `TCP_NODELAY`.
//! No routing, no check, no logging, no metrics: what a proxy costs on this machine,
//! measured in the same rounds as direct and mend. Loopback addresses only.
//!
//! With `--check` (the `bare-check` row), each body is also judged by one
//! `mend::check` of its bytes, in the dialect its path names, before it is forwarded,
//! and the verdict is dropped: the floor of any proxy that checks before sending (as
//! mend's `repair` mode must) with mend's check, so that what mend adds beyond it is
//! the gateway's own cost, and what it adds below it can only come from a faster check.

#[path = "support/loopback.rs"]
mod support;
use support::loopback;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

/// As the `mend` binary: glibc's malloc maps and unmaps each 200 KB body, and its page
/// faults would be the floor's cost, not a proxy's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Upstream = Client<HttpConnector, Full<Bytes>>;
type Answer = Response<Either<Incoming, Full<Bytes>>>;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bare_proxy LISTEN UPSTREAM [--check]";
    let (Some(listen), Some(upstream)) = (args.first(), args.get(1)) else {
        fail(usage);
    };
    let check = match args.get(2).map(String::as_str) {
        None => false,
        Some("--check") if args.len() == 3 => true,
        Some(_) => fail(usage),
    };
    let (listen, upstream) = match (loopback(listen), loopback(upstream)) {
        (Ok(l), Ok(u)) => (l, u),
        (Err(e), _) | (_, Err(e)) => fail(&e),
    };
    // As `mend serve`: multi-thread, as many workers as tokio picks for the machine.
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => fail(&e.to_string()),
    };
    if let Err(e) = rt.block_on(serve(listen, upstream, check)) {
        fail(&e);
    }
}

fn fail(e: &str) -> ! {
    eprintln!("bare_proxy: {e}");
    std::process::exit(2)
}

async fn serve(listen: SocketAddr, upstream: SocketAddr, check: bool) -> Result<(), String> {
    let listener = TcpListener::bind(listen)
        .await
        .map_err(|e| format!("{listen}: {e}"))?;
    println!("listening on http://{listen}");
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Upstream = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .build(connector);
    let host = HeaderValue::from_str(&upstream.to_string()).map_err(|e| e.to_string())?;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (client, host) = (client.clone(), host.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (client, host) = (client.clone(), host.clone());
                async move { Ok::<_, Infallible>(forward(&client, upstream, host, check, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One request: read its body whole, send it on, hand the answer back as it streams.
async fn forward(
    client: &Upstream,
    upstream: SocketAddr,
    host: HeaderValue,
    check: bool,
    req: Request<Incoming>,
) -> Answer {
    let (mut parts, body) = req.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return status(StatusCode::BAD_REQUEST);
    };
    if check {
        let opts = mend::CheckOptions {
            dialect: dialect_of(parts.uri.path()),
            ..mend::CheckOptions::default()
        };
        std::hint::black_box(mend::check(&body, &opts).map(|r| r.valid()).ok());
    }
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let Ok(uri) = format!("http://{upstream}{path}").parse::<Uri>() else {
        return status(StatusCode::BAD_REQUEST);
    };
    parts.uri = uri;
    parts.headers.insert(HOST, host);
    match client
        .request(Request::from_parts(parts, Full::new(body)))
        .await
    {
        Ok(answer) => answer.map(Either::Left),
        Err(_) => status(StatusCode::BAD_GATEWAY),
    }
}

/// The dialect of the endpoints `bench/gateway-overhead.sh` calls (`None`: detected
/// from the body).
fn dialect_of(path: &str) -> Option<mend::Dialect> {
    use mend::Dialect;
    Some(match path {
        "/v1/chat/completions" => Dialect::OpenAiChat,
        "/v1/responses" => Dialect::OpenAiResponses,
        "/v1/messages" => Dialect::Anthropic,
        p if p.starts_with("/v1beta/models/") => Dialect::Gemini,
        p if p.starts_with("/model/") => Dialect::BedrockConverse,
        _ => return None,
    })
}

fn status(code: StatusCode) -> Answer {
    let mut resp = Response::new(Either::Right(Full::new(Bytes::new())));
    *resp.status_mut() = code;
    resp
}
