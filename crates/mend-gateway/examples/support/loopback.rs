//! Shared by the bench examples: they listen and connect on loopback addresses only.

use std::net::SocketAddr;

/// `addr` parsed, when it is a loopback address.
pub fn loopback(addr: &str) -> Result<SocketAddr, String> {
    let a: SocketAddr = addr.parse().map_err(|e| format!("{addr}: {e}"))?;
    if !a.ip().is_loopback() {
        return Err(format!("{addr}: only loopback addresses"));
    }
    Ok(a)
}
