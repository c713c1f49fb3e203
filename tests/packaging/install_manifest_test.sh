#!/usr/bin/env bash
# Installs the build into a temp DESTDIR (prefix /usr, as the .deb) and compares every installed
# file, with its mode, against install-manifest.golden. NEURONMON_UPDATE_GOLDEN=1 rewrites it.
# docs/*.md are shipped whatever their names: each must be installed (mode 644), and the golden
# has one masked line for all of them, so that adding a document does not change it.
#   install_manifest_test.sh BUILD_DIR SOURCE_DIR GOLDEN
source "$(dirname "$0")/common.sh"
build=$1 source_dir=$2 golden=$3
doc_dir=usr/share/doc/neuronmon

nm_install "$build"
(cd "$nm_root" && find . \( -type f -o -type l \) -printf '%m %P\n' | LC_ALL=C sort) >"$nm_tmp/all"
cp "$nm_tmp/all" "$nm_tmp/masked"
for doc in "$source_dir"/docs/*.md; do
  line="644 $doc_dir/$(basename "$doc")"
  grep -qxF "$line" "$nm_tmp/all" || nm_fail "docs/$(basename "$doc") is not installed as $line"
  grep -vxF "$line" "$nm_tmp/masked" >"$nm_tmp/tmp" || true
  mv "$nm_tmp/tmp" "$nm_tmp/masked"
done
{ cat "$nm_tmp/masked"; echo "644 $doc_dir/<each of docs/*.md>"; } | LC_ALL=C sort >"$nm_tmp/manifest"

if [ "${NEURONMON_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$nm_tmp/manifest" "$golden"
  echo "updated $golden"
  exit 0
fi
if ! diff -u "$golden" "$nm_tmp/manifest"; then
  nm_fail "installed files differ from $golden (- expected, + installed);" \
    "regenerate with NEURONMON_UPDATE_GOLDEN=1 if the change is intended"
fi
echo "ok: $(wc -l <"$nm_tmp/all") installed files match $golden"
