#!/usr/bin/python3
"""README's layout tree (the code block under "## Layout") names every
folder of the repository that holds a tracked file, and only folders that
exist. A tree line names a folder as its path ending in "/" (a file path
such as .ci/run names its folder); "<x>" in a path stands for any one folder
name; a line of a folder names the folders it is in too. Folders below
data/fuzz-corpus/, data/molecules/ (a TREXIO text file is a folder) and
tests/fuzz/ are theirs.

Usage: readme_layout_test.py REPO_ROOT; exits 1 naming each mismatch.
"""
import pathlib
import re
import subprocess
import sys


def tree_paths(readme):
    section = readme.split("## Layout\n", 1)[1]
    block = section.split("```\n", 2)[1]
    paths = []
    for line in block.splitlines():
        if line and not line.startswith(" "):
            path = line.split()[0]
            paths.append(path.rstrip("/") if path.endswith("/") else path.rsplit("/", 1)[0])
    return paths


def matches(pattern, folder):
    regex = "^" + re.sub(r"<[^>]+>", "[^/]+", re.escape(pattern).replace(r"\<", "<").replace(r"\>", ">")) + "$"
    return re.match(regex, folder) is not None


def main():
    root = pathlib.Path(sys.argv[1])
    files = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    folders = {f for f in folders
               if not any(f.startswith(owner + "/") for owner in ("data/fuzz-corpus", "data/molecules", "tests/fuzz"))}
    paths = tree_paths((root / "README.md").read_text())
    wrong = []
    for folder in sorted(folders):
        # A folder is named by its own line or by a line of a folder inside it.
        if not any(matches(p, folder) or p.startswith(folder + "/") for p in paths):
            wrong.append(f"README's layout tree does not name {folder}/")
    for path in paths:
        if not any(matches(path, folder) for folder in folders):
            wrong.append(f"README's layout tree names {path}/, which holds no tracked file")
    for what in wrong:
        print(what, file=sys.stderr)
    if not wrong:
        print(f"README's layout tree names all {len(folders)} folders")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
