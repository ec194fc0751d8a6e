#!/usr/bin/env bash
# Build llama.cpp once, from the llama.cpp source that the pinned llama-cpp-python sdist carries
# (vendor/llama.cpp): its shared libraries (libllama, libggml*), which llama-cpp-python loads, and
# llama.cpp's own server (llama-server: CPU only, no TLS, no web UI) linked against the same
# libraries. One compile serves both, so the Python binding and the native server are the same
# llama.cpp. Nothing is fetched but that sdist, from PyPI.
#
#   build_llama_server.sh PYTHON VERSION OUT_DIR [TARGET...]
#
# TARGETs are cmake targets: `llama` (the library alone: what the tests need) and `llama-server`
# (the default builds both). The libraries land in OUT_DIR/lib, the server in OUT_DIR/bin (it finds
# the libraries through $ORIGIN/../lib), each only once the build and a check passed. The source
# and the cmake build folder are kept in OUT_DIR/work, so building llama-server after the library
# compiles only the server's own files. SHA256 (optional) is the sdist's expected sha256.
set -euo pipefail
python=$1 version=$2 out=$3
shift 3
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(llama llama-server)
SHA256=${SHA256:-}
work="$out/work"
sdist="$work/llama_cpp_python-$version.tar.gz"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"
mkdir -p "$work"

if [ ! -d "$src" ]; then
  "$python" -m pip download --quiet --no-binary :all: --no-deps "llama-cpp-python==$version" -d "$work"
  if [ -n "$SHA256" ]; then echo "$SHA256  $sdist" | sha256sum --check --quiet; fi
  tar -xzf "$sdist" -C "$work"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# As llama-cpp-python's own build has it (its CMakeLists.txt): shared libraries, OpenMP and the CPU's
# own instructions (llama.cpp's defaults), no curl. Same library, same arithmetic.
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN:$ORIGIN/../lib' \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_CCACHE=OFF
nice -n 19 cmake --build "$work/build" --target "${targets[@]}" -j "$(nproc)"

bin="$work/build/bin"
mkdir -p "$out/lib"
cp -P -f "$bin"/lib*.so* "$out/lib/"  # the versioned files and their links, as built
"$python" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$out/lib/libllama.so"
echo "llama.cpp's libraries from llama-cpp-python $version's vendor/llama.cpp: $out/lib"
if [[ " ${targets[*]} " == *" llama-server "* ]]; then
  mkdir -p "$out/bin"
  install -m 755 "$bin/llama-server" "$out/bin/llama-server.tmp"
  "$out/bin/llama-server.tmp" --version
  mv "$out/bin/llama-server.tmp" "$out/bin/llama-server"
  echo "llama-server from llama-cpp-python $version's vendor/llama.cpp: $out/bin/llama-server"
fi
