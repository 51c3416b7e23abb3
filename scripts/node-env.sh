# Puts the project's Node.js runtime on the PATH of the current shell:
#
#   source scripts/node-env.sh        # the reference runtime (.nvmrc: Node 24 LTS)
#   source scripts/node-env.sh 22     # another supported major: 22, 24 or 26
#
# `npm ci` on a machine whose own Node.js is too old brings Node 24 by itself (scripts/bring-node.sh);
# this is for a shell that wants a runtime on its PATH, or another major than 24 (.ci/run runs the
# suite on each). The runtime is fetched once into a cache outside the clone (scripts/node-runtime.sh).
# npm_config_nodedir points node-gyp at the runtime's own headers, so a native addon built from source
# matches the runtime that loads it.

art_catalog_node_env() {
  local root cache dir
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  dir=$(sh "$root/scripts/node-runtime.sh" "$@") || return 1
  cache=$(dirname "$dir")
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
