#!/usr/bin/env python3
"""Compiles every ```cpp block of the given Markdown files (the C++ API guide's snippets).

Each block is a complete translation unit: its own #includes, functions, and a main() when
it is a whole program. It is compiled with the project's public headers only
(g++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I include), so a snippet that no
longer matches the API fails CI. Usage: check_snippets.py SOURCE_DIR FILE.md...
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(text):
    """(line number, code) of each ```cpp block."""
    for match in re.finditer(r"^```cpp\n(.*?)^```", text, re.S | re.M):
        yield text[: match.start()].count("\n") + 2, match.group(1)


def main():
    source_dir, files = sys.argv[1], sys.argv[2:]
    compiler = os.environ.get("CXX", "g++")
    checked = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            text = open(path, encoding="utf-8").read()
            for line, code in blocks(text):
                checked += 1
                unit = os.path.join(tmp, f"snippet_{checked}.cpp")
                with open(unit, "w", encoding="utf-8") as f:
                    f.write(f'#line {line} "{path}"\n{code}')
                result = subprocess.run(
                    [compiler, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                     "-I", os.path.join(source_dir, "include"), unit],
                    capture_output=True, text=True)
                if result.returncode != 0:
                    failed += 1
                    print(f"FAILED: {path}:{line}: the snippet does not compile:\n{result.stderr}")
    if checked == 0:
        print("FAILED: no ```cpp block found")
        return 1
    print(f"{'FAILED' if failed else 'PASSED'}: {checked} snippet(s) compiled, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
