#!/usr/bin/env bash
# Every installed program has a gzipped man page that man(1) renders without a single warning,
# and the page documents every option the program's --help lists.
#   man_pages_test.sh BUILD_DIR
source "$(dirname "$0")/common.sh"
build=$1

nm_install "$build"
export MANWIDTH=80 MAN_DISABLE_SECCOMP=1
checked=0
for binary in "$nm_root"/usr/bin/neuron-* "$nm_root"/usr/sbin/neuron-*; do
  program=$(basename "$binary")
  case $binary in */sbin/*) section=8 ;; *) section=1 ;; esac
  page=$nm_root/usr/share/man/man$section/$program.$section.gz
  [ -f "$page" ] || nm_fail "$program has no man page ($page)"
  gzip -t "$page" || nm_fail "$page is not gzip"
  man --warnings -E UTF-8 -l "$page" >"$nm_tmp/page.txt" 2>"$nm_tmp/warnings.txt" ||
    nm_fail "man could not render $page"
  [ ! -s "$nm_tmp/warnings.txt" ] || nm_fail "man warns about $page: $(cat "$nm_tmp/warnings.txt")"
  for section_name in NAME SYNOPSIS DESCRIPTION OPTIONS FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -q "^$section_name\$" "$nm_tmp/page.txt" || nm_fail "$page has no $section_name section"
  done
  # Option names are set with \- (no line breaks inside them), so each appears whole.
  MANWIDTH=200 man -E UTF-8 -l "$page" 2>/dev/null >"$nm_tmp/wide.txt"
  while read -r flag; do
    grep -qE -- "(^|[^a-z-])$flag([^a-z-]|\$)" "$nm_tmp/wide.txt" ||
      nm_fail "$program --help lists $flag, but $program($section) does not document it"
  done < <(nm_help_flags "$binary")
  echo "ok: $program($section) renders cleanly and documents all $(nm_help_flags "$binary" | wc -l) options"
  checked=$((checked + 1))
done
[ "$checked" -ge 3 ] || nm_fail "only $checked programs installed"
