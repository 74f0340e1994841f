# Sourced by the bench scripts that run Python's tiktoken (needs $PY and $BENCH): tiktoken
# downloads its BPE files at first use; these are copied from the tiktoken-rs crate in the
# cargo registry (the same files; their sha256 is checked) into bench/.tiktoken-cache
# under the names tiktoken looks for (the sha1 hex of the download URL), and
# TIKTOKEN_CACHE_DIR points there.
CACHE="$BENCH/.tiktoken-cache"
mkdir -p "$CACHE"
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
assets="$(ls -d "$CARGO_HOME"/registry/src/*/tiktoken-rs-*/assets 2>/dev/null | sort -V | tail -n 1 || true)"
if [[ -z "$assets" ]]; then
  # mend counts with bpe-openai; the tiktoken-rs crate only ships the BPE files Python's
  # tiktoken needs offline. Fetch it from crates.io through a throwaway manifest.
  fetch_dir="$(mktemp -d)"
  mkdir -p "$fetch_dir/src" && echo 'fn main() {}' > "$fetch_dir/src/main.rs"
  printf '[package]\nname = "fetch-bpe-files"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\ntiktoken-rs = "=0.12.1"\n' > "$fetch_dir/Cargo.toml"
  (cd "$fetch_dir" && cargo fetch --quiet)
  rm -rf "$fetch_dir"
  assets="$(ls -d "$CARGO_HOME"/registry/src/*/tiktoken-rs-*/assets | sort -V | tail -n 1)"
fi
"$PY" - "$assets" "$CACHE" <<'EOF'
import hashlib, os, shutil, sys
assets, cache = sys.argv[1], sys.argv[2]
# name -> sha256 that tiktoken_ext/openai_public.py expects
files = {"o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
         "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"}
for name, sha256 in files.items():
    url = "https://openaipublic.blob.core.windows.net/encodings/%s.tiktoken" % name
    dst = os.path.join(cache, hashlib.sha1(url.encode()).hexdigest())
    if not os.path.exists(dst):
        shutil.copyfile(os.path.join(assets, name + ".tiktoken"), dst)
    got = hashlib.sha256(open(dst, "rb").read()).hexdigest()
    if got != sha256:
        os.remove(dst)
        sys.exit("%s: sha256 %s, tiktoken expects %s" % (name, got, sha256))
EOF
export TIKTOKEN_CACHE_DIR="$CACHE"
