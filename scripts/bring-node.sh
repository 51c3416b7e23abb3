#!/bin/sh
# npm's preinstall of this project: when the Node.js that runs npm is older than 22, brings Node 24 into
# node_modules/.bin/node. npm puts node_modules/.bin first on the PATH of every script it runs, so the
# `prepare` build, `npm start`, `npm test` and whatever they start (tsc, eslint, vitest, bin/art-catalog)
# run on it; bin/art-catalog started from a shell looks there first too. On Node 22 or later nothing is
# fetched, and a runtime an earlier install brought is removed: the Node.js that installs is the one
# that runs.
#
# npm 11 runs this after the dependencies are unpacked and their own install scripts have run (on the
# old Node.js: none compiles anything, see allowScripts in package.json) and before `prepare`.
set -u

installer=${npm_node_execpath:-node}
version=$("$installer" -p process.versions.node 2>/dev/null) || version=unknown
link=node_modules/.bin/node
if [ "${version%%.*}" -ge 22 ] 2>/dev/null; then
  rm -f "$link"
  exit 0
fi

dir=$(sh scripts/node-runtime.sh 24) || {
  echo "art-catalog: Node.js $version is too old (22, 24 or 26 needed) and Node 24 could not be fetched from the npm registry; install Node.js 24 and run npm ci again" >&2
  exit 1
}
mkdir -p node_modules/.bin
# A hard link (a copy across file systems), not a symbolic link: a service user that cannot read the
# cache (systemd's ProtectHome, a cache under /root) can still run it.
rm -f "$link"
ln "$dir/bin/node" "$link" 2>/dev/null || cp "$dir/bin/node" "$link" || exit 1
echo "art-catalog: this machine's Node.js $version is too old (22, 24 or 26 needed); npm scripts and bin/art-catalog run on Node $("$link" --version | tr -d v) from $link" >&2
