#!/usr/bin/python3
"""Checks the layering of verify/ (README "Layout").

The layering is the one verify/CMakeLists.txt states with its links: the
library of folder F (slaterlab_F) links the folders F may use. This checks
that the code keeps to it:
  - the folders' links form no cycle;
  - every source lives in a folder, and includes from verify/ only its own
    folder or a folder it links (never one above it);
  - no include cycle between modules (x.hpp and x.cpp are one module), also
    inside a folder;
  - the library headers (reference/, strategies/) are included as
    "slaterlab/<folder>/...", the path they are installed under, everywhere;
  - no string literal of verify/ is a built-in strategy's name or one of its
    labels ("delayed", "sm-double", "delayed-16-double"): a strategy is
    known to verify/ by its traits, never by its name (the names are those
    of the registry in strategies/determinant/factory.cpp, its own folder).
Prints each violation, naming the file and the offending include, and exits
with 1; exits with 0 and one summary line when the layering holds.
Usage: scripts/check-layering.py [REPO_ROOT]
       scripts/check-layering.py --self-test   (plants violations in a copy)
"""

import pathlib
import re
import shutil
import sys
import tempfile

LIBRARY = re.compile(r"slaterlab_verify_library\(\s*(\w+)\s+LINKS([^)]*)\)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(verify/[^"]+)"', re.MULTILINE)
LIBRARY_INCLUDE = re.compile(r'^\s*#\s*include\s+["<]((?:reference|strategies)/[^">]+)[">]',
                             re.MULTILINE)
SOURCE_SUFFIXES = {".hpp", ".cpp", ".in"}
# An entry of the built-in strategies' registry: {"name", traits(...) or a traits function.
REGISTRY_ENTRY = re.compile(r'^\s*\{"([a-z0-9-]+)",\s*(?:traits\(|\w+_traits\(\))', re.MULTILINE)
# A C++ string literal, a // comment or a /* */ comment, whichever starts first.
LITERAL_OR_COMMENT = re.compile(r'"((?:[^"\\\n]|\\.)*)"|//[^\n]*|/\*.*?\*/', re.DOTALL)
# A configuration label: name[-K][-precision][-variant].
LABEL_TAIL = r"(-\d+)?(-(float|double|mixed))?(-[a-z]+)?"
CODE_FOLDERS = ("reference", "strategies", "verify", "tests", "examples")


def folder_links(cmake_file):
    """{folder: set of verify folders its library links}."""
    libraries = {m.group(1): m.group(2).split() for m in LIBRARY.finditer(cmake_file.read_text())}
    return {folder: {lib.removeprefix("slaterlab_") for lib in links
                     if lib.removeprefix("slaterlab_") in libraries}
            for folder, links in libraries.items()}


def find_cycle(graph):
    """One cycle of a {node: successors} graph as a node list, or None."""
    state = {}  # node -> "open" while on the DFS stack, "done" after

    def visit(node, path):
        state[node] = "open"
        for succ in sorted(graph.get(node, ())):
            if state.get(succ) == "open":
                return path[path.index(succ):] + [succ]
            if succ not in state:
                cycle = visit(succ, path + [succ])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [node])
            if cycle:
                return cycle
    return None


def cycles(graph):
    """Cycles of the graph until none is left: after each, its closing edge is
    dropped, so that every cycle is named once."""
    graph = {node: set(succ) for node, succ in graph.items()}
    found = []
    while (cycle := find_cycle(graph)) is not None:
        found.append(cycle)
        graph[cycle[-2]].discard(cycle[-1])
    return found


def module(path):
    """verify/run/runner.hpp -> verify/run/runner."""
    name = path.split("/")[-1].split(".")[0]
    return "/".join(path.split("/")[:-1] + [name])


def check(root):
    verify = root / "verify"
    links = folder_links(verify / "CMakeLists.txt")
    problems = []
    for cycle in cycles(links):
        problems.append("verify/CMakeLists.txt: the folders' links form a cycle: "
                        + " -> ".join(cycle))
    modules = {}
    sources = sorted(p for p in verify.rglob("*") if p.suffix in SOURCE_SUFFIXES)
    for source in sources:
        rel = source.relative_to(root).as_posix()
        parts = source.relative_to(verify).parts
        if len(parts) != 2 or parts[0] not in links:
            problems.append(f"{rel}: not in a folder of the layering ({', '.join(sorted(links))})")
            continue
        folder = parts[0]
        for include in INCLUDE.findall(source.read_text()):
            target = include.split("/")
            if len(target) != 3 or target[1] not in links:
                problems.append(f'{rel}: #include "{include}" is not in a folder of the layering')
                continue
            if target[1] != folder and target[1] not in links[folder]:
                problems.append(f'{rel}: #include "{include}" goes from {folder}/ to {target[1]}/, '
                                f"which {folder}/ does not link (it may use: "
                                f"{', '.join(sorted(links[folder])) or 'nothing of verify/'})")
            if module(include) != module(rel):
                modules.setdefault(module(rel), set()).add(module(include))
    for cycle in cycles(modules):
        problems.append("include cycle between modules: " + " -> ".join(cycle))
    return (problems + library_include_problems(root) + strategy_name_problems(root, verify),
            len(sources), links)


def library_include_problems(root):
    """Library headers included by their source path instead of the installed
    one: such a header compiles in the tree but not for a consumer."""
    problems = []
    for folder in CODE_FOLDERS:
        for source in sorted((root / folder).rglob("*")):
            if source.suffix in SOURCE_SUFFIXES:
                for include in LIBRARY_INCLUDE.findall(source.read_text()):
                    problems.append(f'{source.relative_to(root).as_posix()}: #include "{include}" '
                                    f'must be "slaterlab/{include}", as installed')
    return problems


def builtin_strategies(root):
    """The names of the registry in strategies/determinant/factory.cpp."""
    return REGISTRY_ENTRY.findall((root / "strategies/determinant/factory.cpp").read_text())


def strategy_name_problems(root, verify):
    """String literals of verify/ that are a built-in strategy's name or label."""
    names = sorted(builtin_strategies(root), key=len, reverse=True)
    if not names:
        return ["strategies/determinant/factory.cpp: no built-in strategy found in its registry"]
    label = re.compile(r"^(%s)%s$" % ("|".join(map(re.escape, names)), LABEL_TAIL))
    problems = []
    for source in sorted(p for p in verify.rglob("*") if p.suffix in SOURCE_SUFFIXES):
        text = source.read_text()
        for match in LITERAL_OR_COMMENT.finditer(text):
            literal = match.group(1)
            if literal is not None and label.match(literal):
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f'{source.relative_to(verify.parent).as_posix()}:{line}: "{literal}" '
                                f"names the built-in strategy '{label.match(literal).group(1)}': "
                                "ask its traits (strategy_traits.hpp) instead")
    return problems


def self_test(root):
    """Plants one violation of each kind in a copy of verify/; returns what the
    check got wrong (the tree itself must pass, each plant must be reported)."""
    # kind: (file appended to, text appended, what the report must say);
    # the module cycle closes through stats/other.hpp, written for it.
    plants = {
        "upward include": ("run/metrics.hpp", '#include "verify/cli/bench.hpp"\n', "goes from run/ to cli/"),
        # properties/ is declared inside if(SLATERLAB_HAVE_RAPIDCHECK): still a folder of the layering.
        "properties include": ("properties/oracle.hpp", '#include "verify/report/table.hpp"\n',
                               "goes from properties/ to report/"),
        "run uses properties": ("run/plan.cpp", '#include "verify/properties/case.hpp"\n',
                                "goes from run/ to properties/"),
        "module cycle": ("stats/statistics.hpp", '#include "verify/stats/other.hpp"\n', "include cycle"),
        "stray source": ("stray.cpp", "", "not in a folder"),
        "library source path": ("run/metrics.cpp", '#include "strategies/determinant/precision.hpp"\n',
                                'must be "slaterlab/strategies/determinant/precision.hpp"'),
        "link cycle": ("CMakeLists.txt", "slaterlab_verify_library(stats LINKS slaterlab_cli)\n",
                       "links form a cycle"),
        "strategy name": ("run/plan.cpp", 'const char* kWindowed = "delayed";\n',
                          "names the built-in strategy 'delayed'"),
        "strategy label": ("report/table.cpp", 'const char* kLabel = "qr-givens-double";\n',
                           "names the built-in strategy 'qr-givens'"),
    }
    wrong = ["the unchanged tree fails"] if check(root)[0] else []
    for kind, (file, text, expected) in plants.items():
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp)
            shutil.copytree(root / "verify", copy / "verify")
            (copy / "strategies/determinant").mkdir(parents=True)
            shutil.copy(root / "strategies/determinant/factory.cpp", copy / "strategies/determinant")
            with open(copy / "verify" / file, "a") as out:
                out.write(text)
            if kind == "module cycle":
                (copy / "verify/stats/other.hpp").write_text('#include "verify/stats/statistics.hpp"\n')
            if not any(expected in problem for problem in check(copy)[0]):
                wrong.append(f"a planted {kind} is not reported")
    return wrong


def main():
    if sys.argv[1:] == ["--self-test"]:
        wrong = self_test(pathlib.Path(__file__).resolve().parent.parent)
        for what in wrong:
            print(f"layering self-test: {what}", file=sys.stderr)
        if not wrong:
            print("layering self-test: every planted violation is reported")
        return 1 if wrong else 0
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent)
    problems, count, links = check(root.resolve())
    for problem in problems:
        print("layering: " + problem, file=sys.stderr)
    if problems:
        return 1
    print(f"layering holds: {count} sources in {len(links)} folders, no include cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
