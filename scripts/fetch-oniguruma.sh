#!/usr/bin/env bash
# Unpacks the Oniguruma source tree that the reference tokenizer (HF
# tokenizers 0.23) is built with -- Oniguruma 6.9.10, Unicode 16.0, as shipped
# in the onig_sys 69.9.3 crate -- into third_party/oniguruma. CMake builds it
# from there (and runs this script itself when the tree is missing); no system
# Oniguruma is used. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/third_party/oniguruma"
want="6.9.10"

if [ -f "$dest/src/oniguruma.h" ] && grep -q "ONIGURUMA_VERSION_TEENY   10" "$dest/src/oniguruma.h"; then
  echo "fetch-oniguruma: Oniguruma $want present in third_party/oniguruma"
  exit 0
fi

work="$root/.cache/onig-fetch"
rm -rf "$work"
mkdir -p "$work/src"
cat >"$work/Cargo.toml" <<'TOML'
[package]
name = "onig-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
onig_sys = { version = "=69.9.3", default-features = false }
TOML
: >"$work/src/lib.rs"
(cd "$work" && cargo vendor --quiet --versioned-dirs vendor >/dev/null)
src="$work/vendor/onig_sys-69.9.3/oniguruma"
[ -f "$src/src/oniguruma.h" ] || { echo "fetch-oniguruma: no Oniguruma source in the onig_sys crate" >&2; exit 1; }
mkdir -p "$root/third_party"
rm -rf "$dest"
cp -r "$src" "$dest"
rm -rf "$work"
echo "fetch-oniguruma: Oniguruma $want unpacked into third_party/oniguruma"
