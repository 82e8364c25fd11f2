#!/usr/bin/env python3
"""Holds the code to the shape core/docs/architecture.md promises (python3 check_shape.py ROOT):
no source file in core/, native/ or web/ over 800 lines, no function in native/ or web/ over
150 lines, every public header of the core named after its sources (chakra/<layer>/X.h is
implemented by src/<layer>/X.cpp or X_*.cpp) unless it is header-only and declaring its folder's
namespace (chakra, chakra::<layer>, or one named after the file, as chakra::sweep); and the page's views kept
apart (web/app_context.h): each web/view_<name>.cpp defines its View class inside an anonymous
namespace and make_<name>_view, views.cpp lists exactly those files, and no other file of web/
includes a view's file or names its class (a view reaches another only by commands). Prints each
problem and fails when there is one."""
import pathlib
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
# Headers with nothing to implement: each declares only types, constants and inline functions.
HEADER_ONLY = {"format/wire.h", "support/error.h", "support/progress.h", "support/swar.h", "support/stopwatch.h"}
SCOPES = re.compile(r'\b(namespace|class|struct|union|enum)\b[^;{}()]*$|extern\s+""\s*$')


def code_only(text):
    """The text with comments, strings and character literals blanked, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):  # raw string: R"delim( ... )delim"
            open_paren = text.find("(", i)
            close = ")" + text[i + 2:open_paren] + '"'
            j = text.find(close, open_paren)
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text):
    """(name, lines) of each function body longer than MAX_FUNCTION_LINES: a brace block opened
    directly inside a namespace, class or the file, that is not itself one of those."""
    code = code_only(text)
    stack = []  # per open brace: (is a scope, start offset)
    found = []
    last_end = 0  # where the text before the next block starts
    for i, c in enumerate(code):
        if c == "{":
            head = code[last_end:i]
            in_scope = all(s for s, *_ in stack)
            is_scope = in_scope and bool(SCOPES.search(head.strip()))
            stack.append((is_scope, i, head))
            last_end = i + 1
        elif c == "}":
            if not stack:
                continue
            is_scope, start, head = stack.pop()
            if not is_scope and all(s for s, *_ in stack):
                lines = code.count("\n", start, i) + 1
                if lines > MAX_FUNCTION_LINES:
                    name = re.findall(r"([~\w:]+)\s*\(", head)
                    found.append((name[0] if name else head.strip()[:60], lines))
            last_end = i + 1
        elif c == ";" and all(s for s, *_ in stack):
            last_end = i + 1
    return found


def inside_anonymous_namespace(code, at):
    """Whether offset `at` of the code lies inside a `namespace {` block."""
    stack = []  # per open brace: whether it opens an anonymous namespace
    for match in re.finditer(r"namespace\s*\{|[{}]", code[:at]):
        if match.group(0) == "}":
            if stack:
                stack.pop()
        else:
            stack.append(match.group(0) != "{")
    return any(stack)


def view_problems(root):
    """The views' structure: one file, one class in an anonymous namespace, one registry line."""
    web = root / "web"
    problems = []
    files = sorted(web.glob("view_*.cpp"))
    registry = code_only((web / "views.cpp").read_text(encoding="utf-8"))
    listed = re.findall(r"\bX\((\w+)\)", registry)
    names = [f.stem[len("view_"):] for f in files]
    if sorted(listed) != sorted(names):
        problems.append(f"web/views.cpp lists {sorted(listed)}, the view files are {sorted(names)}")
    classes = {}
    for f, name in zip(files, names):
        code = code_only(f.read_text(encoding="utf-8"))
        found = re.search(r"\bclass\s+(\w+)\s+final\s*:\s*public\s+View\b", code)
        if not found:
            problems.append(f"web/{f.name}: no 'class ... final : public View'")
            continue
        classes[found.group(1)] = f.name
        if not inside_anonymous_namespace(code, found.start()):
            problems.append(f"web/{f.name}: {found.group(1)} is not inside an anonymous namespace")
        if f"make_{name}_view(" not in code:
            problems.append(f"web/{f.name}: no make_{name}_view")
    for path in sorted(list(web.glob("*.cpp")) + list(web.glob("*.h")) + list((root / "tests").rglob("*.cpp"))):
        text = path.read_text(encoding="utf-8")
        if "node_modules" in path.parts:
            continue
        for include in re.findall(r'#include\s+"(view_\w+\.(?:cpp|h))"', text):
            problems.append(f"{path.relative_to(root)}: includes {include} (views are reached by commands)")
        code = code_only(text)
        for cls, owner in classes.items():
            if path.name != owner and re.search(r"\b" + cls + r"\b", code):
                problems.append(f"{path.relative_to(root)}: names {cls}, the state of web/{owner}")
    if len(files) < 5:
        problems.append(f"web/: only {len(files)} view files found")
    return problems


def main(root):
    root = pathlib.Path(root)
    problems = []
    checked = 0
    for folder in ("core", "native", "web"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in (".cpp", ".h") or "gen" in path.relative_to(root).parts:
                continue
            checked += 1
            text = path.read_text(encoding="utf-8")
            name = path.relative_to(root)
            lines = text.count("\n")
            if lines > MAX_FILE_LINES:
                problems.append(f"{name}: {lines} lines (at most {MAX_FILE_LINES})")
            if folder != "core":
                for function, length in long_functions(text):
                    problems.append(f"{name}: {function} is {length} lines (at most {MAX_FUNCTION_LINES})")
    for header in sorted((root / "core/include/chakra").glob("*/*.h")):
        rel = header.relative_to(root / "core/include/chakra").as_posix()
        layer, stem = rel.split("/")[0], header.stem
        # Namespaces after folders: chakra, chakra::<layer>, or one named after the file itself.
        for ns in re.findall(r"^namespace (chakra[\w:]*) \{", header.read_text(encoding="utf-8"), re.M):
            if ns not in ("chakra", f"chakra::{layer}", f"chakra::{stem}"):
                problems.append(f"core/include/chakra/{rel}: declares namespace {ns} (its folder's is chakra::{layer})")
        sources = list((root / "core/src" / layer).glob(f"{stem}.cpp")) + list((root / "core/src" / layer).glob(f"{stem}_*.cpp"))
        if not sources and rel not in HEADER_ONLY:
            problems.append(f"core/include/chakra/{rel}: no core/src/{layer}/{stem}.cpp or {stem}_*.cpp implements it")
    problems += view_problems(root)
    if checked < 100:
        sys.exit(f"check_shape: only {checked} sources found under {root}")
    if problems:
        sys.exit("shape:\n  " + "\n  ".join(problems))
    print(f"check_shape: {checked} sources, none over its size")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
