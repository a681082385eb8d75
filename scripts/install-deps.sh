#!/usr/bin/env bash
# Installs the Debian packages tokenfeed builds and tests with. Idempotent:
# packages already present are left alone, and nothing runs as root unless
# something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsimdjson-dev libzstd-dev zlib1g-dev liblz4-dev libxxhash-dev
  libutf8proc-dev libcli11-dev librdkafka-dev
  libgtest-dev libbenchmark-dev
  python3 python3-dev python3-venv python3-pip python3-numpy python3-torch python3-pytest python3-matplotlib
  libopenblas0-pthread
  nodejs npm cargo default-jre-headless curl kcat maven openssl prometheus
  libasan8 libubsan1 libtsan2 clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  # A command already on PATH is as good as its Debian package.
  case "$p" in
    cargo) command -v cargo >/dev/null 2>&1 && continue ;;
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    default-jre-headless) command -v java >/dev/null 2>&1 && continue ;;
    maven) command -v mvn >/dev/null 2>&1 && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all Debian packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
