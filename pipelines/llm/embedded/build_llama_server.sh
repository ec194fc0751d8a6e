#!/usr/bin/env bash
# Build llama.cpp's own server (llama-server: CPU only, no TLS, no web UI) from the llama.cpp
# source that the pinned llama-cpp-python sdist carries (vendor/llama.cpp), so the native server
# and the library are the same llama.cpp. Nothing is fetched but that sdist, from PyPI, and it is
# checked against a pinned sha256 before it is unpacked.
#
#   build_llama_server.sh PYTHON VERSION OUT_DIR
#
# The binary lands in OUT_DIR only when the build and a --version check passed; the work folder
# is removed either way. The Makefile's `model` target runs it (see there for the fallback).
set -euo pipefail
python=$1 version=$2 out=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The sdist's sha256, pinned: pip refuses any other bytes (--require-hashes), and sha256sum checks again before
# anything is unpacked. A new version needs its hash here: `pip download --no-binary :all: --no-deps
# llama-cpp-python==X -d DIR && sha256sum DIR/*` on a trusted network, compared with PyPI's page.
declare -A sdist_sha256=(
  [0.3.36]=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
)
sha=${sdist_sha256[$version]:-}
if [ -z "$sha" ]; then
  echo "no pinned sha256 for llama-cpp-python $version's source in $0; add it before building" >&2
  exit 1
fi
echo "llama-cpp-python==$version --hash=sha256:$sha" >"$work/pinned.txt"
"$python" -m pip download --quiet --no-binary :all: --no-deps --require-hashes -r "$work/pinned.txt" -d "$work"
echo "$sha  $work/llama_cpp_python-$version.tar.gz" | sha256sum --check --quiet -
tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# OpenMP and the CPU's own instructions as llama-cpp-python's build has them (its defaults): same arithmetic.
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF
nice -n 19 cmake --build "$work/build" --target llama-server -j "$(nproc)"
"$work/build/bin/llama-server" --version
mkdir -p "$out"
install -m 755 "$work/build/bin/llama-server" "$out/llama-server.tmp"
mv "$out/llama-server.tmp" "$out/llama-server"
echo "llama-server from llama-cpp-python $version's vendor/llama.cpp: $out/llama-server"
