#!/usr/bin/env bash
# Builds the Debian package with CPack into a temp dir and checks it as a user installing it
# would meet it: the name, the library dependencies found by dpkg-shlibdeps, the conffiles and
# maintainer scripts, the contents, and lintian with no error (warnings are printed).
# cpack first builds the `preinstall` target, i.e. `all`: a no-op after the full build the tests
# run after, but a rebuild of whatever is out of date otherwise.
#   deb_package_test.sh BUILD_DIR
#   CPACK  the cpack to run (the tests' CMakeLists.txt passes ${CMAKE_CPACK_COMMAND})
source "$(dirname "$0")/common.sh"
build=$1

(cd "$build" && "${CPACK:-cpack}" -G DEB -B "$nm_tmp/out" >"$nm_tmp/cpack.log" 2>&1) || {
  cat "$nm_tmp/cpack.log" >&2
  nm_fail "cpack -G DEB failed"
}
shopt -s nullglob
debs=("$nm_tmp"/out/neuronmon_*.deb)
[ ${#debs[@]} -eq 1 ] || nm_fail "expected one neuronmon_<version>_<arch>.deb, got: ${debs[*]:-none}"
deb=${debs[0]}
version=$(dpkg-deb --field "$deb" Version)
arch=$(dpkg-deb --field "$deb" Architecture)
[ "$(basename "$deb")" = "neuronmon_${version}_${arch}.deb" ] || nm_fail "file name $(basename "$deb")"
[ "$arch" = "$(dpkg --print-architecture)" ] || nm_fail "architecture $arch"
echo "ok: built $(basename "$deb")"

# Control fields.
field() { dpkg-deb --field "$deb" "$1"; }
[ "$(field Package)" = neuronmon ] || nm_fail "Package: $(field Package)"
[ "$(field Section)" = admin ] || nm_fail "Section: $(field Section)"
[ "$(field Priority)" = optional ] || nm_fail "Priority: $(field Priority)"
[ -n "$(field Maintainer)" ] || nm_fail "no Maintainer"
[ -n "$(field Homepage)" ] || nm_fail "no Homepage"
depends=$(field Depends)
for lib in libprotobuf libgrpc++ libsystemd0 libstdc++6 adduser; do
  grep -q "$lib" <<<"$depends" || nm_fail "Depends lacks $lib: $depends"
done
echo "ok: Depends: $depends"

dpkg-deb --ctrl-tarfile "$deb" | tar -tf - | sed 's|^\./||' | sort >"$nm_tmp/control"
for member in conffiles postinst prerm postrm md5sums; do
  grep -qx "$member" "$nm_tmp/control" || nm_fail "control archive lacks $member"
done
dpkg-deb --info "$deb" conffiles >"$nm_tmp/conffiles"
for conffile in /etc/neuron-monitor/neuron-monitord.json /etc/default/neuron-monitord; do
  grep -qx "$conffile" "$nm_tmp/conffiles" || nm_fail "$conffile is not a conffile"
done
for script in postinst prerm postrm; do
  dpkg-deb --info "$deb" "$script" | sh -n || nm_fail "$script does not parse"
done
echo "ok: conffiles and maintainer scripts present"

# Contents: paths, and root ownership.
dpkg-deb --contents "$deb" >"$nm_tmp/contents"
for path in ./usr/sbin/neuron-monitord ./usr/bin/neuron-monitor ./usr/bin/neuron-ls ./usr/bin/neuron-report \
  ./lib/systemd/system/neuron-monitord.service ./lib/systemd/system/neuron-monitord.socket \
  ./usr/lib/sysusers.d/neuron-monitor.conf ./usr/lib/tmpfiles.d/neuron-monitor.conf \
  ./etc/neuron-monitor/neuron-monitord.json ./etc/default/neuron-monitord \
  ./usr/share/man/man8/neuron-monitord.8.gz ./usr/share/man/man1/neuron-monitor.1.gz \
  ./usr/share/man/man1/neuron-ls.1.gz ./usr/share/doc/neuronmon/copyright \
  ./usr/share/doc/neuronmon/changelog.gz ./usr/share/bash-completion/completions/neuron-ls; do
  grep -q " $path\$" "$nm_tmp/contents" || nm_fail "the package lacks $path"
done
if grep -q ' ./usr/bin/neuron-top$' "$nm_tmp/contents"; then
  grep -q ' ./usr/share/man/man1/neuron-top.1.gz$' "$nm_tmp/contents" || nm_fail "no neuron-top(1)"
fi
awk '$2 != "root/root" { print; bad = 1 } END { exit bad }' "$nm_tmp/contents" ||
  nm_fail "files above are not owned by root/root"
echo "ok: contents: $(grep -vc '/$' "$nm_tmp/contents") files, all root/root"

# lintian: no error; its warnings and notes are printed for the record.
if ! command -v lintian >/dev/null; then
  nm_fail "lintian is not installed (packaging/install-deps.sh test installs it)"
fi
lintian --pedantic --display-info "$deb" >"$nm_tmp/lintian" 2>"$nm_tmp/lintian.err" || true
grep -v 'running with root privileges is not recommended' "$nm_tmp/lintian.err" >&2 || true
cat "$nm_tmp/lintian"
if grep -q '^E: ' "$nm_tmp/lintian"; then nm_fail "lintian reports errors"; fi
echo "ok: lintian: no errors, $(grep -c '^W: ' "$nm_tmp/lintian" || true) warnings"
