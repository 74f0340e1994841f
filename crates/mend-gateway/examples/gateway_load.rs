//! A small closed-loop load generator for the gateway benchmark
//! (`bench/gateway-vs-litellm.sh`): N connections each send the same POST again and
//! again for a fixed time, and the latencies are reported as JSON.
//!
//! ```sh
//! cargo run --release -p mend-gateway --example gateway_load -- \
//!   --url http://127.0.0.1:8787/v1/chat/completions --body body.json \
//!   --concurrency 1 --seconds 5 --warmup 1 [--header 'authorization: Bearer x']
//! ```
//!
//! Prints `{"requests", "errors", "seconds", "rps", "p50_us", "p90_us", "p99_us",
//! "mean_us"}`. Only loopback URLs are accepted, and it stops by itself.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::json;

struct Args {
    url: String,
    body: Bytes,
    headers: Vec<(String, String)>,
    concurrency: usize,
    seconds: f64,
    warmup: f64,
}

fn parse_args() -> Result<Args, String> {
    let mut url = None;
    let mut body = None;
    let mut headers = Vec::new();
    let mut concurrency = 1;
    let mut seconds = 5.0;
    let mut warmup = 1.0;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--url" => url = Some(value()?),
            "--body" => {
                let path = value()?;
                body = Some(Bytes::from(
                    std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?,
                ));
            }
            "--header" => {
                let h = value()?;
                let (k, v) = h
                    .split_once(':')
                    .ok_or_else(|| format!("--header '{h}' is not 'name: value'"))?;
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            "--concurrency" => concurrency = value()?.parse().map_err(|e| format!("{e}"))?,
            "--seconds" => seconds = value()?.parse().map_err(|e| format!("{e}"))?,
            "--warmup" => warmup = value()?.parse().map_err(|e| format!("{e}"))?,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let url = url.ok_or("--url is required")?;
    let host = url
        .strip_prefix("http://")
        .ok_or("only http:// URLs")?
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    if host != "127.0.0.1" && host != "localhost" {
        return Err(format!("{url}: the load stays on loopback (127.0.0.1)"));
    }
    if !(0.1..=600.0).contains(&seconds) {
        return Err("--seconds must be between 0.1 and 600".into());
    }
    Ok(Args {
        url,
        body: body.ok_or("--body is required")?,
        headers,
        concurrency: concurrency.max(1),
        seconds,
        warmup,
    })
}

/// One connection's loop until `until`; latencies in microseconds and error count.
async fn worker(
    client: reqwest::Client,
    args: &Args,
    measure_from: Instant,
    until: Instant,
) -> (Vec<u64>, u64) {
    let mut lat = Vec::new();
    let mut errors = 0;
    while Instant::now() < until {
        let mut req = client
            .post(&args.url)
            .header("content-type", "application/json")
            .body(args.body.clone());
        for (k, v) in &args.headers {
            req = req.header(k, v);
        }
        let t = Instant::now();
        let ok = match req.send().await {
            Ok(r) => {
                let status = r.status();
                r.bytes().await.is_ok() && status.is_success()
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
            // Do not spin on a dead target.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    (lat, errors)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gateway_load: {e}");
            std::process::exit(2);
        }
    };
    // One thread for the load, so it takes one core at most.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("gateway_load: {e}");
            std::process::exit(2);
        }
    };
    let out = rt.block_on(async {
        let start = Instant::now();
        let measure_from = start + Duration::from_secs_f64(args.warmup);
        let until = measure_from + Duration::from_secs_f64(args.seconds);
        let mut tasks = Vec::new();
        for _ in 0..args.concurrency {
            // A client per connection: each keeps its one connection alive.
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .tcp_nodelay(true)
                .no_proxy()
                .build()
                .unwrap_or_default();
            tasks.push(worker(client, &args, measure_from, until));
        }
        let results = futures_util::future::join_all(tasks).await;
        let mut all: Vec<u64> = Vec::new();
        let mut errors = 0;
        for (l, e) in results {
            all.extend(l);
            errors += e;
        }
        all.sort_unstable();
        let n = all.len() as f64;
        let mean = if all.is_empty() {
            0.0
        } else {
            all.iter().sum::<u64>() as f64 / n
        };
        json!({
            "url": args.url,
            "body_bytes": args.body.len(),
            "concurrency": args.concurrency,
            "seconds": args.seconds,
            "requests": all.len(),
            "errors": errors,
            "rps": n / args.seconds,
            "p50_us": percentile(&all, 0.50),
            "p90_us": percentile(&all, 0.90),
            "p99_us": percentile(&all, 0.99),
            "mean_us": mean.round(),
        })
    });
    println!("{out}");
}
