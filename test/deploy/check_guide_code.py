#!/usr/bin/env python3
"""Checks that a guide shows its example's code as the file has it.

Usage: check_guide_code.py ROOT GUIDE [--min-blocks N]

Every fenced code block right after a marker line
    <!-- from: PATH -->
in GUIDE (relative to ROOT) must appear verbatim (a run of whole lines) in
the file PATH (relative to ROOT), so the guide never shows code the build
no longer compiles. Lines of the block that are only "// ..." stand for
omitted lines: the parts between them must each appear, in order. Fails
when the guide has fewer than N such blocks (default 1), naming the first
line of a block that differs.
"""

import re
import sys


def blocks_after_markers(text):
    """[(path, first line number, block text)]"""
    found = []
    for m in re.finditer(r"<!-- from: (\S+) -->\n```[a-z+]*\n(.*?)```", text,
                         re.S):
        line = text.count("\n", 0, m.start(2)) + 1
        found.append((m.group(1), line, m.group(2)))
    return found


def lines_in(part, source_lines, start):
    """Index after the first occurrence of `part` (whole lines) in
    source_lines at or after `start`, or -1."""
    n = len(part)
    for i in range(start, len(source_lines) - n + 1):
        if source_lines[i:i + n] == part:
            return i + n
    return -1


def first_difference(part, source_lines, start):
    """The first line of `part` that differs where most of it matches."""
    best = 0
    for i in range(start, len(source_lines)):
        n = 0
        while n < len(part) and i + n < len(source_lines) and \
                source_lines[i + n] == part[n]:
            n += 1
        best = max(best, n)
    return part[min(best, len(part) - 1)]


def check(root, guide, min_blocks):
    with open(guide, encoding="utf-8") as f:
        text = f.read()
    markers = text.count("<!-- from: ")
    blocks = blocks_after_markers(text)
    if markers != len(blocks):
        return f"{guide}: {markers} markers but {len(blocks)} fenced blocks " \
               "right after them (a marker must be followed by ```)"
    if len(blocks) < min_blocks:
        return f"{guide}: {len(blocks)} marked code blocks, expected at " \
               f"least {min_blocks}"
    for path, line, block in blocks:
        with open(f"{root}/{path}", encoding="utf-8") as f:
            source = f.read().split("\n")
        parts = [[]]
        for l in block.rstrip("\n").split("\n"):
            if l.strip() == "// ...":
                parts.append([])
            else:
                parts[-1].append(l)
        at = 0
        for part in parts:
            if not part:
                continue
            after = lines_in(part, source, at)
            if after < 0:
                bad = first_difference(part, source, at)
                return f"{guide}:{line}: the block marked from {path} is not " \
                       f"in the file as shown: \"{bad.strip()}\" differs; " \
                       "copy the block from the file again"
            at = after
    print(f"check_guide_code: {guide}: {len(blocks)} blocks, each as in the "
          "file")
    return None


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    min_blocks = 1
    if "--min-blocks" in argv:
        min_blocks = int(argv[argv.index("--min-blocks") + 1])
    err = check(argv[1], argv[2], min_blocks)
    if err:
        print(f"check_guide_code: FAIL {err}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
