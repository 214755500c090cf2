#!/usr/bin/env python3
"""Functions in lib/ and cmd/ longer than the limit must say why (DESIGN: small functions).

A function here is a definition that starts at column 0 and whose body ends at the next line
that starts with '}' (the project's clang-format style puts both there). A long one passes when
a comment within the three lines above its signature starts with "// Long on purpose:".
Usage: check_function_length.py [--limit N] [dir ...]
"""
import argparse
import pathlib
import re
import sys

NOT_A_FUNCTION = re.compile(r"^(namespace|using|struct|class|enum|union|template|static_assert|extern|#|//|/\*|\})")
REASON = "// Long on purpose:"


def long_functions(path, limit):
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        opens = line and not line[0].isspace() and not NOT_A_FUNCTION.match(line)
        if opens and line.rstrip().endswith("{") and "(" in "".join(lines[max(0, i - 3):i + 1]):
            start = i
            while start > 0 and lines[start - 1] and not lines[start - 1].startswith(("//", "}")) \
                    and not lines[start - 1].rstrip().endswith((";", "{")):
                start -= 1  # a signature wrapped over several lines
            end = i + 1
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            length = end - i - 1
            said = any(l.startswith(REASON) for l in lines[max(0, start - 3):start])
            if length > limit and not said:
                yield start + 1, length, lines[start].strip()
            i = end
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("dirs", nargs="*", default=["lib", "cmd"])
    args = ap.parse_args()
    found = 0
    for d in args.dirs:
        for path in sorted(pathlib.Path(d).rglob("*.cc")):
            for line, length, sig in long_functions(path, args.limit):
                print(f"{path}:{line}: {length} lines (limit {args.limit}) without a "
                      f"'{REASON}' comment: {sig[:70]}")
                found += 1
    if found:
        print(f"check_function_length: {found} function(s) over {args.limit} lines; split them "
              f"or say why above the signature", file=sys.stderr)
        return 1
    print(f"check_function_length: no function over {args.limit} lines without a reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
