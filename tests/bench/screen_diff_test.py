#!/usr/bin/env python3
"""bench/screen_diff.py: changed-cell counts and the floor of bytes on hand-made snapshots."""

import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                      "screen_diff.py")
ESC = "\x1b"


class ScreenDiffTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def run_diff(self, width, height, *screens):
        paths = []
        for i, text in enumerate(screens):
            path = os.path.join(self.dir.name, f"{i:04d}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        out = subprocess.run([sys.executable, SCRIPT, str(width), str(height), *paths],
                             check=True, capture_output=True, text=True).stdout.split()
        self.assertEqual(out[0], "changed")
        self.assertEqual(out[2], "floor_bytes")
        return int(out[1]), int(out[3])

    def test_identical_screens_cost_nothing(self):
        self.assertEqual(self.run_diff(10, 2, "abc\nxyz\n", "abc\nxyz\n"), (0, 0))

    def test_one_glyph_costs_an_address_and_the_glyph(self):
        # ESC [ 1 ; 3 H (6 bytes) + "d"
        self.assertEqual(self.run_diff(5, 1, "abc\n", "abd\n"), (1, 7))

    def test_a_short_gap_is_rewritten_and_a_long_one_skipped(self):
        # Gap of one unchanged cell: rewriting it (1 byte) beats ESC [ C (3 bytes).
        self.assertEqual(self.run_diff(8, 1, "abcdef\n", "Xbcdef\n".replace("c", "Y")), (2, 9))
        # 30 unchanged cells: ESC [ 30 C (5 bytes) beats rewriting them.
        before = "a" + "." * 30 + "b\n"
        after = "A" + "." * 30 + "B\n"
        self.assertEqual(self.run_diff(40, 1, before, after), (2, 6 + 1 + 5 + 1))

    def test_style_changes_count_and_cost_the_shortest_sgr(self):
        # Same glyphs turned green: 2 cells changed; address + ESC [ 32 m + 2 glyphs.
        self.assertEqual(self.run_diff(5, 1, "abc\n", f"a{ESC}[32mbc{ESC}[39m\n"), (2, 6 + 5 + 2))

    def test_style_is_parsed_not_compared_as_escape_history(self):
        # The same look reached through different SGR sequences is not a change.
        a = f"{ESC}[36m{ESC}[49mND0 {ESC}[32m||{ESC}[90m..\n"
        b = f"{ESC}[36mND0 {ESC}[39m{ESC}[32m||{ESC}[90m..\n"
        self.assertEqual(self.run_diff(10, 1, a, b), (0, 0))

    def test_a_blank_changes_only_with_what_shows_on_it(self):
        plain = "ab  \n"
        green_blanks = f"ab{ESC}[32m  \n"
        reverse_blanks = f"ab{ESC}[7m  \n"
        self.assertEqual(self.run_diff(4, 1, plain, green_blanks)[0], 0)
        self.assertEqual(self.run_diff(4, 1, plain, reverse_blanks)[0], 2)

    def test_utf8_glyphs_cost_their_encoded_length(self):
        # A braille cell is 3 bytes of UTF-8.
        self.assertEqual(self.run_diff(4, 1, "a\n", "\u28ff\n"), (1, 6 + 3))

    def test_rows_below_move_with_line_feeds(self):
        # Row 1 col 1, then row 2 col 1: LF + CR (2 bytes) beat ESC [ 2 ; 1 H (6 bytes).
        self.assertEqual(self.run_diff(3, 2, "a\nb\n", "A\nB\n"), (2, 6 + 1 + 2 + 1))

    def test_blanks_to_the_end_of_a_row_are_erased(self):
        # ESC [ 1 ; 2 H + ESC [ K (3 bytes) for 9 changed cells; in the middle, ESC [ 6 X.
        self.assertEqual(self.run_diff(10, 1, "abcdefghij\n", "a\n"), (9, 6 + 3))
        self.assertEqual(self.run_diff(10, 1, "abcdefghij\n", "a      hij\n"), (6, 6 + 4))

    def test_style_carries_from_one_line_to_the_next(self):
        # tmux's capture-pane -e does not repeat an SGR that is still in effect on the next line.
        self.assertEqual(self.run_diff(4, 2, f"{ESC}[32mab\ncd\n", f"{ESC}[32mab\n{ESC}[32mcd\n"),
                         (0, 0))

    def test_a_blank_needs_no_colour_change(self):
        # Green "A B" over "xxx": ESC [ 1 ; 1 H + ESC [ 32 m + "A" + " " (no SGR) + "B".
        self.assertEqual(self.run_diff(5, 1, "xxx\n", f"{ESC}[32mA B{ESC}[39m\n"), (3, 6 + 5 + 3))

    def test_totals_add_over_successive_pairs(self):
        self.assertEqual(self.run_diff(5, 1, "abc\n", "abd\n", "abc\n"), (2, 14))


if __name__ == "__main__":
    unittest.main()
