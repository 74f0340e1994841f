//! The gateway's added cost, measured against an upstream that costs nothing
//! (`bench/gateway-overhead.sh`, and the load of `bench/gateway-vs-litellm.sh`): one program, two roles, both on plain hyper so that
//! neither the mock nor the load is what is measured.
//!
//! ```sh
//! # an upstream that drains each request and answers a fixed reply at once
//! gateway_overhead mock 127.0.0.1:19400 [--sse]
//! # keep-alive HTTP/1.1 load, direct and through mend alternately (ABAB)
//! gateway_overhead load --body b.json --path /v1/chat/completions \
//!   --target direct=127.0.0.1:19400 --target mend=127.0.0.1:19401 --mend-pid PID \
//!   --connections 1 --seconds 2 --warmup 0.5 --rounds 3 [--header 'k: v']
//! ```
//!
//! `mock` answers every POST with a small fixed JSON body (`--sse`: a fixed event
//! stream), after reading the request body to its end as a real upstream would. `load`
//! runs `--rounds` rounds; in each, every `--target` in turn gets `--connections`
//! connections (each its own keep-alive HTTP/1.1 connection, sending the same body
//! again and again, closed loop) for `--warmup` then `--seconds` seconds, and one JSON
//! line per (round, target) is printed: requests, errors, rps and latency percentiles
//! in microseconds, and, with `--cpu-pid NAME=PID`, the CPU time that process used per
//! request (user + system, from `/proc`). Only loopback addresses are accepted; both
//! roles run on one thread, so each takes at most one core.

#[path = "support/loopback.rs"]
mod support;
use support::loopback;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => fail(&e.to_string()),
    };
    let outcome = match args.first().map(String::as_str) {
        Some("mock") => rt.block_on(mock(&args[1..])),
        Some("load") => match Load::parse(&args[1..]) {
            Ok(load) => rt.block_on(load.run()),
            Err(e) => Err(e),
        },
        _ => Err("usage: gateway_overhead mock ADDR [--sse] | load ...".to_string()),
    };
    if let Err(e) = outcome {
        fail(&e);
    }
}

fn fail(e: &str) -> ! {
    eprintln!("gateway_overhead: {e}");
    std::process::exit(2)
}

// ---- the mock upstream ----

const JSON_REPLY: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;

const SSE_REPLY: &str = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}]}\n\n\
data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

async fn mock(args: &[String]) -> Result<(), String> {
    let addr = loopback(args.first().map_or("127.0.0.1:19400", String::as_str))?;
    let sse = args.iter().any(|a| a == "--sse");
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    println!("listening on http://{addr}");
    let (reply, content_type) = if sse {
        (
            Bytes::from_static(SSE_REPLY.as_bytes()),
            "text/event-stream",
        )
    } else {
        (
            Bytes::from_static(JSON_REPLY.as_bytes()),
            "application/json",
        )
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let reply = reply.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let reply = reply.clone();
                async move {
                    // Drain the body, as an upstream reads the whole request.
                    let _ = req.into_body().collect().await;
                    let resp = Response::builder()
                        .header("content-type", content_type)
                        .body(Full::new(reply))
                        .unwrap_or_default();
                    Ok::<_, Infallible>(resp)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

// ---- the load generator ----

struct Load {
    body: Bytes,
    path: String,
    headers: Vec<(String, String)>,
    targets: Vec<(String, SocketAddr)>,
    cpu_pids: Vec<(String, u32)>,
    connections: usize,
    seconds: f64,
    warmup: f64,
    rounds: usize,
}

impl Load {
    fn parse(args: &[String]) -> Result<Load, String> {
        let mut load = Load {
            body: Bytes::new(),
            path: "/v1/chat/completions".into(),
            headers: Vec::new(),
            targets: Vec::new(),
            cpu_pids: Vec::new(),
            connections: 1,
            seconds: 2.0,
            warmup: 0.5,
            rounds: 3,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
            let num = |v: &str| v.parse::<f64>().map_err(|e| format!("{a} {v}: {e}"));
            match a.as_str() {
                "--body" => {
                    let p = value()?;
                    load.body = std::fs::read(p).map_err(|e| format!("{p}: {e}"))?.into();
                }
                "--path" => load.path = value()?.clone(),
                "--header" => {
                    let h = value()?;
                    let (k, v) = h.split_once(':').ok_or(format!("--header {h}"))?;
                    load.headers.push((k.trim().into(), v.trim().into()));
                }
                "--target" => {
                    let t = value()?;
                    let (name, addr) = t.split_once('=').ok_or(format!("--target {t}"))?;
                    load.targets.push((name.into(), loopback(addr)?));
                }
                "--cpu-pid" => {
                    let t = value()?;
                    let (name, pid) = t.split_once('=').ok_or(format!("--cpu-pid {t}"))?;
                    let pid = pid.parse().map_err(|e| format!("--cpu-pid {t}: {e}"))?;
                    load.cpu_pids.push((name.into(), pid));
                }
                "--connections" => load.connections = num(value()?)?.max(1.0) as usize,
                "--seconds" => load.seconds = num(value()?)?.clamp(0.1, 600.0),
                "--warmup" => load.warmup = num(value()?)?.clamp(0.0, 60.0),
                "--rounds" => load.rounds = num(value()?)?.clamp(1.0, 100.0) as usize,
                other => return Err(format!("unknown argument {other}")),
            }
        }
        if load.body.is_empty() || load.targets.is_empty() {
            return Err("--body and at least one --target are required".into());
        }
        Ok(load)
    }

    /// Every round, every target in turn (ABAB...), one JSON line each.
    async fn run(&self) -> Result<(), String> {
        for round in 1..=self.rounds {
            for (name, addr) in &self.targets {
                let pid = self.cpu_pids.iter().find(|(n, _)| n == name).map(|p| p.1);
                let line = self.one_run(name, *addr, pid, round).await?;
                println!("{line}");
            }
        }
        Ok(())
    }

    async fn one_run(
        &self,
        name: &str,
        addr: SocketAddr,
        pid: Option<u32>,
        round: usize,
    ) -> Result<serde_json::Value, String> {
        let start = Instant::now();
        let measure_from = start + Duration::from_secs_f64(self.warmup);
        let until = measure_from + Duration::from_secs_f64(self.seconds);
        let mut tasks = Vec::with_capacity(self.connections);
        for _ in 0..self.connections {
            tasks.push(self.connection(addr, measure_from, until));
        }
        // The CPU the process used from the start of measuring to its end.
        let cpu_at_start = async {
            tokio::time::sleep_until(measure_from.into()).await;
            pid.and_then(cpu_ticks)
        };
        let (results, cpu0) =
            futures_util::future::join(futures_util::future::join_all(tasks), cpu_at_start).await;
        let cpu1 = pid.and_then(cpu_ticks);
        let mut lat = Vec::new();
        let mut errors = 0u64;
        for r in results {
            let (l, e) = r?;
            lat.extend(l);
            errors += e;
        }
        lat.sort_unstable();
        let n = lat.len();
        let cpu_us_per_request = match (cpu0, cpu1) {
            (Some(a), Some(b)) if n > 0 => Some((b - a) as f64 * tick_us() / n as f64),
            _ => None,
        };
        Ok(json!({
            "target": name,
            "round": round,
            "connections": self.connections,
            "body_bytes": self.body.len(),
            "path": self.path,
            "seconds": self.seconds,
            "requests": n,
            "errors": errors,
            "rps": n as f64 / self.seconds,
            "p50_us": percentile(&lat, 0.50),
            "p90_us": percentile(&lat, 0.90),
            "p99_us": percentile(&lat, 0.99),
            "cpu_us_per_request": cpu_us_per_request,
        }))
    }

    /// One keep-alive connection's closed loop; latencies (µs) from `measure_from`
    /// on, and the failures counted then.
    async fn connection(
        &self,
        addr: SocketAddr,
        measure_from: Instant,
        until: Instant,
    ) -> Result<(Vec<u64>, u64), String> {
        let mut lat = Vec::with_capacity(4096);
        let mut errors = 0;
        let mut sender = None;
        while Instant::now() < until {
            if sender.is_none() {
                sender = Some(connect(addr).await?);
            }
            let Some(s) = sender.as_mut() else { continue };
            let req = self.request(addr)?;
            let t = Instant::now();
            let ok = match s.send_request(req).await {
                Ok(resp) => {
                    let status = resp.status();
                    resp.into_body().collect().await.is_ok() && status.is_success()
                }
                Err(_) => false,
            };
            let us = t.elapsed().as_micros() as u64;
            if t >= measure_from {
                if ok {
                    lat.push(us);
                } else {
                    errors += 1;
                }
            }
            if !ok {
                // A fresh connection, and no spinning on a dead target.
                sender = None;
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        Ok((lat, errors))
    }

    fn request(&self, addr: SocketAddr) -> Result<Request<Full<Bytes>>, String> {
        let mut b = Request::post(self.path.as_str())
            .header("host", addr.to_string())
            .header("content-type", "application/json")
            .header("content-length", self.body.len());
        for (k, v) in &self.headers {
            b = b.header(k.as_str(), v.as_str());
        }
        b.body(Full::new(self.body.clone()))
            .map_err(|e| e.to_string())
    }
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn connect(addr: SocketAddr) -> Result<Sender, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("{addr}: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// A process's user + system CPU time in clock ticks (`/proc/PID/stat` fields 14, 15).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: count after its end.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Microseconds per clock tick (`getconf CLK_TCK` is 100 on Linux).
fn tick_us() -> f64 {
    std::env::var("CLK_TCK")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(10_000.0, |t| 1e6 / t)
}
