//! N-API linking setup (on macOS, leave node's symbols to load time).
fn main() {
    napi_build::setup();
}
