#!/usr/bin/env bash
# Runs the Debian maintainer scripts against stand-in commands that only record their arguments,
# and checks they do what debhelper's snippets would: create the user and group and the runtime
# directory, enable the service (not the socket) and start it on a fresh install, restart it on
# an upgrade, stop it on removal, forget it on purge, and never fail.
#   maintainer_scripts_test.sh SOURCE_DIR
source "$(dirname "$0")/common.sh"
scripts=$1/packaging/debian

stubs=$nm_tmp/bin
mkdir -p "$stubs"
for cmd in systemd-sysusers systemd-tmpfiles deb-systemd-helper deb-systemd-invoke systemctl \
  adduser rm; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$cmd" "$nm_tmp/calls" >"$stubs/$cmd"
done
# "was-enabled" of a unit never seen is true (as deb-systemd-helper answers on a fresh system);
# "debian-installed" is false.
cat >"$stubs/deb-systemd-helper" <<STUB
#!/bin/sh
echo "deb-systemd-helper \$*" >>"$nm_tmp/calls"
case "\$*" in *debian-installed*) exit 1 ;; esac
exit 0
STUB
printf '#!/bin/sh\nexit 2\n' >"$stubs/getent"  # no such user yet
chmod +x "$stubs"/*
for cmd in od tr mv; do ln -s "$(command -v $cmd)" "$stubs/$cmd"; done

# run SCRIPT ARGS...: with only the stand-ins on PATH; prints the commands it ran.
run() {
  : >"$nm_tmp/calls"
  PATH=$stubs /bin/sh -e "$scripts/$1" "${@:2}" || nm_fail "$1 $* exited non-zero"
  cat "$nm_tmp/calls"
}
has() { grep -qF -- "$2" <<<"$1" || nm_fail "$3: expected a call of '$2' in:"$'\n'"$1"; }
hasnt() { ! grep -qF -- "$2" <<<"$1" || nm_fail "$3: unexpected call of '$2' in:"$'\n'"$1"; }
systemd_running=0
[ -d /run/systemd/system ] && systemd_running=1

calls=$(run postinst configure "")
has "$calls" "systemd-sysusers neuron-monitor.conf" "fresh install"
has "$calls" "deb-systemd-helper enable neuron-monitord.service" "fresh install"
hasnt "$calls" "deb-systemd-helper enable neuron-monitord.socket" "fresh install"
hasnt "$calls" "adduser" "fresh install with systemd-sysusers"
if [ $systemd_running = 1 ]; then
  has "$calls" "systemd-tmpfiles --create neuron-monitor.conf" "fresh install"
  has "$calls" "deb-systemd-invoke start neuron-monitord.service" "fresh install"
else
  hasnt "$calls" "deb-systemd-invoke" "fresh install without a running systemd"
fi
echo "ok: postinst configure (fresh): user, enable$([ $systemd_running = 1 ] && echo ', start')"

# The token the unit's LoadCredential= needs: made once, root-only, kept on upgrades.
root=$nm_tmp/dpkg-root
mkdir -p "$root/etc/neuron-monitor"
DPKG_ROOT=$root run postinst configure "" >/dev/null
token=$root/etc/neuron-monitor/token
[ -f "$token" ] || nm_fail "postinst made no token"
[ "$(stat -c %a "$token")" = 600 ] || nm_fail "the token has mode $(stat -c %a "$token"), not 600"
grep -qxE '[0-9a-f]{64}' "$token" || nm_fail "the token is not 64 hex digits: $(cat "$token")"
first=$(cat "$token")
DPKG_ROOT=$root run postinst configure 0.0.9 >/dev/null
[ "$(cat "$token")" = "$first" ] || nm_fail "an upgrade replaced the token"
calls=$(DPKG_ROOT=$root run postrm purge)
has "$calls" "rm -f $root/etc/neuron-monitor/token" "purge"
echo "ok: postinst makes a root-only token once; purge removes it"

calls=$(run postinst configure 0.0.9)
[ $systemd_running = 0 ] || has "$calls" "deb-systemd-invoke restart neuron-monitord.service" "upgrade"
echo "ok: postinst configure (upgrade)"

# Without systemd-sysusers the user comes from adduser.
rm "$stubs/systemd-sysusers"
calls=$(run postinst configure "")
has "$calls" "adduser --system --group" "fresh install without systemd-sysusers"
has "$calls" "neuron-monitor" "fresh install without systemd-sysusers"
echo "ok: postinst falls back to adduser"

calls=$(run prerm remove)
[ $systemd_running = 0 ] ||
  has "$calls" "deb-systemd-invoke stop neuron-monitord.socket neuron-monitord.service" "remove"
calls=$(run prerm upgrade 0.2.0)
hasnt "$calls" "deb-systemd-invoke stop" "prerm upgrade"
echo "ok: prerm stops on remove only"

calls=$(run postrm remove)
hasnt "$calls" "purge" "postrm remove"
calls=$(run postrm purge)
has "$calls" "deb-systemd-helper purge neuron-monitord.service neuron-monitord.socket" "purge"
has "$calls" "rm -rf /run/neuron-monitor" "purge"
echo "ok: postrm purge forgets the units and the runtime directory"
