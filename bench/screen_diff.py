#!/usr/bin/env python3
"""Cells changed between successive terminal snapshots, and the fewest bytes any writer needs.

Usage: bench/screen_diff.py WIDTH HEIGHT SNAPSHOT...

Each SNAPSHOT is `tmux capture-pane -e -p` output (text with SGR sequences). For every pair of
successive snapshots it counts the cells whose glyph or style differ, and estimates the floor: the
bytes the cheapest escape sequences would need to turn the first screen into the second — each
changed cell's glyph (UTF-8), the shortest cursor move to it (CUP, HPA, CUF, CR, LF, CUD, or
rewriting the unchanged cells in between, whichever is shortest) and the shortest SGR that gives it
its style; a stretch of blanks may be erased instead (ECH, or EL to the end of the row). Rows are
written top to bottom, left to right. Scrolling is not considered: a writer that moves whole rows
with scroll regions or inserted lines (ncurses does, for lists that shift) can go below this floor;
rows that do not move, as in neuron-top's panels, cannot. Prints one line:
`changed N floor_bytes M`, totals over all pairs.
"""

import re
import sys

BLANK_STYLE = (None, None, frozenset())
ATTRS = {1: "bold", 2: "dim", 3: "italic", 4: "underline", 5: "blink", 7: "reverse", 9: "strike"}
ATTRS_OFF = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",), 25: ("blink",),
             27: ("reverse",), 29: ("strike",)}
SHOWN_ON_BLANK = frozenset({"reverse", "underline", "strike"})
TOKEN = re.compile(r"\x1b\[([0-9;:]*)m|\x1b[^m]*?[A-Za-z]|(.)")


def apply_sgr(style, params):
    """The style after an SGR sequence with `params` (a list of ints)."""
    fg, bg, attrs = style
    attrs = set(attrs)
    i = 0
    if not params:
        params = [0]
    while i < len(params):
        p = params[i]
        if p == 0:
            fg, bg, attrs = None, None, set()
        elif p in ATTRS:
            attrs.add(ATTRS[p])
        elif p in ATTRS_OFF:
            attrs -= set(ATTRS_OFF[p])
        elif 30 <= p <= 37 or 90 <= p <= 97:
            fg = str(p)
        elif p == 39:
            fg = None
        elif 40 <= p <= 47 or 100 <= p <= 107:
            bg = str(p)
        elif p == 49:
            bg = None
        elif p in (38, 48) and i + 1 < len(params):
            n = 3 if params[i + 1] == 5 else 5
            value = ";".join(str(v) for v in params[i:i + n])
            if p == 38:
                fg = value
            else:
                bg = value
            i += n - 1
        i += 1
    return fg, bg, frozenset(attrs)


def parse(path, width, height):
    """A height x width grid of (glyph, style) cells."""
    rows = []
    text = open(path, encoding="utf-8", errors="replace").read()
    style = BLANK_STYLE  # tmux carries the style from one line to the next
    for line in text.split("\n")[:height]:
        row = []
        for m in TOKEN.finditer(line):
            if m.group(2) is not None:
                row.append((m.group(2), style))
            elif m.group(1) is not None:
                params = [int(p) for p in re.split("[;:]", m.group(1)) if p != ""]
                style = apply_sgr(style, params)
        # Snapshots are taken with -N (full width); anything short is padded with default blanks.
        rows.append((row + [(" ", BLANK_STYLE)] * width)[:width])
    while len(rows) < height:
        rows.append([(" ", BLANK_STYLE)] * width)
    # A blank shows only its background, reverse video and lines: compare blanks by those alone.
    return [[(g, (None, s[1], s[2] & SHOWN_ON_BLANK) if g == " " else s) for g, s in row]
            for row in rows]


def cell_sgr(have, glyph, want):
    """SGR bytes to write `glyph` in style `want` after `have`, and the style after it: a blank
    needs only its visible properties (background, reverse, lines), whatever the foreground."""
    if glyph == " " and have is not None and have[1] == want[1] and \
            (have[2] & SHOWN_ON_BLANK) == want[2]:
        return 0, have
    return sgr_cost(have, want), want


def sgr_cost(have, want):
    """Bytes of the shortest SGR sequence that turns style `have` into `want` (0 if equal)."""
    if have == want:
        return 0
    codes = []

    if have is None or not have[2] <= want[2]:
        # An attribute must go: reset (ESC [ m) unless the target is the default, then set.
        have_fg, have_bg, have_attrs = None, None, frozenset()
        if want == BLANK_STYLE:
            return 3
        codes.append("0")
    else:
        have_fg, have_bg, have_attrs = have
    for a in sorted(want[2] - have_attrs):
        codes.append(str([k for k, v in ATTRS.items() if v == a][0]))
    if want[0] != have_fg:
        codes.append(want[0] or "39")
    if want[1] != have_bg:
        codes.append(want[1] or "49")
    return len("\x1b[" + ";".join(codes) + "m")


def seq(fmt, n):
    return len(fmt % n)


def horizontal(cx, x):
    """Bytes of the shortest horizontal move from column cx to x on the same row."""
    if cx == x:
        return 0
    options = [seq("\x1b[%dG", x + 1), 1 + (seq("\x1b[%dC", x) if x > 0 else 0)]
    if x > cx:
        options.append(3 if x - cx == 1 else seq("\x1b[%dC", x - cx))
    else:
        options.append(1 if cx - x == 1 else seq("\x1b[%dD", cx - x))
    return min(options)


def move_cost(cy, cx, cs, y, x, row):
    """Bytes of the cheapest way from (cy, cx) in style cs to column x of row y, and the style
    after it (rewriting the cells in between changes the style)."""
    if cy == y and x > cx:
        move = horizontal(cx, x)
        rewrite, st = 0, cs
        for k in range(cx, x):
            g, s = row[k]
            cost, st = cell_sgr(st, g, s)
            rewrite += cost + len(g.encode())
        return (rewrite, st) if rewrite <= move else (move, cs)
    if cy == y:
        return horizontal(cx, x), cs
    options = [seq("\x1b[%d;", y + 1) + seq("%dH", x + 1)]
    if 0 <= cy < y:
        options.append(min(y - cy, seq("\x1b[%dB", y - cy)) + horizontal(cx, x))
    return min(options), cs


def floor_bytes(a, b):
    """Changed cells and the floor estimate of bytes to turn grid a into grid b."""
    total = changed = 0
    cy, cx, cs = -1, -1, BLANK_STYLE  # a frame starts at an unknown place in the default style
    for y, (old, new) in enumerate(zip(a, b)):
        width = len(new)
        xs = [x for x in range(width) if old[x] != new[x]]
        changed += len(xs)
        i = 0
        while i < len(xs):
            x = xs[i]
            cost, cs = move_cost(cy, cx, cs, y, x, new)
            total += cost
            glyph, style = new[x]
            cost, cs = cell_sgr(cs, glyph, style)
            total += cost
            # A stretch of blanks: erasing it (ECH, or EL to the end of the row) may beat writing.
            end = x
            while end < width and not style[2] and new[end] == (" ", style):
                end += 1
            erase = 3 if end == width else seq("\x1b[%dX", end - x)
            if end - x > 1 and erase < end - x:
                total += erase
                while i < len(xs) and xs[i] < end:
                    i += 1
                cy, cx = y, x  # erasing does not move the cursor
                continue
            total += len(glyph.encode())
            cy, cx = y, x + 1
            i += 1
    return changed, total


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    width, height = int(argv[1]), int(argv[2])
    grids = [parse(p, width, height) for p in argv[3:]]
    changed = total = 0
    for a, b in zip(grids, grids[1:]):
        c, t = floor_bytes(a, b)
        changed += c
        total += t
    print(f"changed {changed} floor_bytes {total}")


if __name__ == "__main__":
    main(sys.argv)
