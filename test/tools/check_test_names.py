#!/usr/bin/python3
"""Fails when a Catch2 TEST_CASE name contains ';'.

ctest takes the test list from catch_discover_tests as a CMake list, and a
';' splits one name into two tests that both fail ("unit:... exit 2").
Usage: check_test_names.py SOURCE_DIR
"""
import pathlib
import re
import sys

# TEST_CASE( followed by one or more adjacent string literals.
CASE = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def main(root: str) -> int:
    bad = []
    for path in sorted(pathlib.Path(root, "test").rglob("*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in CASE.finditer(text):
            name = "".join(LITERAL.findall(m.group(1)))
            if ";" in name:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{path.relative_to(root)}:{line}: {name}")
    for b in bad:
        print(f"test name with ';' (ctest splits it in two): {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
