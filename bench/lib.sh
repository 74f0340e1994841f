# Shared by the bench scripts that start servers (source it; it defines, runs nothing):
#   bench_work_dir        a temporary folder in $work, removed on exit with every pid in $pids
#   wait_port PORT SECS   wait until 127.0.0.1:PORT accepts
#   cargo_target_dir      where cargo builds (CARGO_TARGET_DIR or the workspace's)
bench_work_dir() {
  work="$(mktemp -d)"
  pids=()
  trap bench_cleanup EXIT INT TERM
}

bench_cleanup() {
  for p in "${pids[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}

wait_port() { # wait until 127.0.0.1:$1 accepts, up to $2 seconds
  local deadline=$((SECONDS + $2))
  until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "nothing listens on 127.0.0.1:$1 after $2 s" >&2
      return 1
    fi
    sleep 0.1
  done
}

cargo_target_dir() {
  cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}
