#!/usr/bin/env bash
# Build llama.cpp once, from the llama.cpp source that the pinned llama-cpp-python sdist carries
# (vendor/llama.cpp): its shared libraries (libllama, libggml*), which llama-cpp-python loads, and
# llama.cpp's own server (llama-server: CPU only, no TLS, no web UI) linked against the same
# libraries. One compile serves both, so the Python binding and the native server are the same
# llama.cpp. Nothing is fetched but that sdist, from PyPI, and it is checked against a pinned sha256
# before it is unpacked.
#
#   build_llama_server.sh PYTHON VERSION OUT_DIR [TARGET...]
#
# TARGETs are cmake targets: `llama` (the library alone: what the tests need) and `llama-server`
# (the default builds both). The libraries land in OUT_DIR/lib, the server in OUT_DIR/bin (it finds
# the libraries through $ORIGIN/../lib), each only once the build and a check passed. The source
# and the cmake build folder are kept in OUT_DIR/work, so building llama-server after the library
# compiles only the server's own files. SHA256 overrides the pinned sha256 below (for a version not yet pinned).
set -euo pipefail
python=$1 version=$2 out=$3
shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(llama llama-server)
# The sdist's sha256, pinned: pip refuses any other bytes (--require-hashes), and sha256sum checks again before
# anything is unpacked. A new version needs its hash here: `pip download --no-binary :all: --no-deps
# llama-cpp-python==X -d DIR && sha256sum DIR/*` on a trusted network, compared with PyPI's page.
declare -A sdist_sha256=(
  [0.3.36]=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
)
SHA256=${SHA256:-${sdist_sha256[$version]:-}}
if [ -z "$SHA256" ]; then
  echo "no pinned sha256 for llama-cpp-python $version's source in $0; add it before building" >&2
  exit 1
fi
work="$out/work"
sdist="$work/llama_cpp_python-$version.tar.gz"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
mkdir -p "$work"

if [ ! -d "$src" ]; then
  echo "llama-cpp-python==$version --hash=sha256:$SHA256" >"$work/pinned.txt"
  "$python" -m pip download --quiet --no-binary :all: --no-deps --require-hashes -r "$work/pinned.txt" -d "$work"
  echo "$SHA256  $sdist" | sha256sum --check --quiet -
  tar -xzf "$sdist" -C "$work"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# No AMX: -march=native turns on Intel's AMX tiles where the CPU reports them, and on a virtual machine that reports them
# without giving them (this project's 2-core Xeon, 2026-12-02) every model call died in ggml-cpu's first `ldtilecfg`
# (general protection fault: llama-server at its warm-up, llama-cpp-python on any prompt of two tokens or more). Explicit
# -mno-* flags win over -march=native in GCC and Clang whatever their order. Every measurement before was on CPUs without AMX.
flags=()
[ "$(uname -m)" = x86_64 ] && flags=("-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16")
# As llama-cpp-python's own build has it (its CMakeLists.txt): shared libraries, OpenMP and the CPU's
# own instructions (llama.cpp's defaults), no curl. Same library, same arithmetic.
cmake -S "$src" -B "$work/build" "${generator[@]}" "${flags[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN:$ORIGIN/../lib' \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF
nice -n 19 cmake --build "$work/build" --target "${targets[@]}" -j "$(nproc)"

bin="$work/build/bin"
mkdir -p "$out/lib"
bash "$(dirname "$0")/install_libs.sh" "$bin" "$out/lib"  # the versioned files and their links, as built; a loaded one renamed over, never written in place
"$python" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$out/lib/libllama.so"
echo "llama.cpp's libraries from llama-cpp-python $version's vendor/llama.cpp: $out/lib"
if [[ " ${targets[*]} " == *" llama-server "* ]]; then
  mkdir -p "$out/bin"
  if ! cmp -s "$bin/llama-server" "$out/bin/llama-server"; then  # the same bytes: left alone
    install -m 755 "$bin/llama-server" "$out/bin/llama-server.tmp"
    "$out/bin/llama-server.tmp" --version
    mv "$out/bin/llama-server.tmp" "$out/bin/llama-server"  # renamed over: a running server keeps its own
  fi
  echo "llama-server from llama-cpp-python $version's vendor/llama.cpp: $out/bin/llama-server"
fi
