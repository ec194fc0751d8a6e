#!/usr/bin/env bash
# Copy llama.cpp's shared libraries (lib*.so*: the versioned files and their links) from SRC to DST
# without touching a library that a running process has loaded.
#
#   install_libs.sh SRC DST
#
# A running llama-server (or an app on the Python server) maps these files. Writing over one in
# place (cp -f onto an existing file) changes the pages under it and the server dies mid-answer:
# seen when a second `make run` rebuilt the server while a run was using it. So a changed file is
# copied beside its destination and renamed over it (the running process keeps the old one until
# it exits), and a file with the same bytes is left alone, mtime too, so make's stamps that depend
# on the libraries stay older than what was made from them and a later `make run` rebuilds nothing.
set -euo pipefail
src=$1 dst=$2
mkdir -p "$dst"
for path in "$src"/lib*.so*; do
  [ -e "$path" ] || [ -L "$path" ] || continue  # no match: the glob itself
  name=${path##*/}
  if [ -L "$path" ]; then
    target=$(readlink "$path")
    if [ -L "$dst/$name" ] && [ "$(readlink "$dst/$name")" = "$target" ]; then
      continue
    fi
    ln -sfn "$target" "$dst/.$name.new"
    mv -Tf "$dst/.$name.new" "$dst/$name"
  elif ! { [ -f "$dst/$name" ] && [ ! -L "$dst/$name" ] && cmp -s "$path" "$dst/$name"; }; then
    cp "$path" "$dst/.$name.new"
    mv -Tf "$dst/.$name.new" "$dst/$name"
  fi
done
