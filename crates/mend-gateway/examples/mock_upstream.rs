//! The tests' mock upstream as a program, for the benchmark and for trying SDKs by hand.
//!
//! ```sh
//! cargo run --release -p mend-gateway --example mock_upstream -- 127.0.0.1:9100 [--lenient]
//! ```
//!
//! Strict by default (wants credentials, rejects invalid histories with the provider's
//! text, answers tool loops as JSON or SSE); `--lenient` answers every request with a
//! fixed small JSON, for load. It prints `listening on http://ADDR` and serves until
//! killed.

#[path = "../tests/it/support/mock.rs"]
mod mock;

#[tokio::main]
async fn main() {
    let mut addr = "127.0.0.1:9100".to_string();
    let mut lenient = false;
    for a in std::env::args().skip(1) {
        if a == "--lenient" {
            lenient = true;
        } else {
            addr = a;
        }
    }
    let m = if lenient {
        mock::Mock::start_lenient(&addr).await
    } else {
        mock::Mock::start_strict(&addr).await
    };
    println!("listening on {}", m.base_url());
    std::future::pending::<()>().await;
}
