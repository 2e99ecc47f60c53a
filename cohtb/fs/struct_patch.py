"""A proposed struct layout as a kernel patch: the struct's members reordered in its header, as a unified diff
against a kernel variant's tree (kernel/patches/ style: notes above the first "--- a/", which patch skips), and
the check that it builds: the header's one object compiled and read back with pahole.

A member is its declaration with the comment on its lines (a union or struct is one member, named as pahole names
it: its own name, or its members' names joined with "/"); lines between members (blank lines, comments of their
own) stay where they are, so a comment that heads a part of the struct keeps heading the same place. The members
fill the member places in the new order."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.fs import dwarf, kernel
from cohtb.run import kernels

COMPILE_TIMEOUT_S = 1800
# Where each struct a full-system run reports is declared, and an object that includes it (compiled to check).
HEADERS = {"dentry": ("include/linux/dcache.h", "fs/dcache.o"), "inode": ("include/linux/fs.h", "fs/inode.o")}


@dataclass(frozen=True)
class Body:
    start: int                   # the index of the struct's first body line in the file's lines
    items: list                  # str (a line kept in place) or (name, [lines]) (a member)


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", " ", text), flags=re.S)


_ATTRIBUTES = re.compile(r"__\w+(\s*\(\(.*?\)\))?")   # __aligned(8), __randomize_layout, __packed, ...


def _name(lines: list[str]) -> str:
    """A member's name as pahole gives it; a nested union or struct without a name of its own: its members' names
    joined with "/" (the names declared at its first level)."""
    code = _strip_comments("".join(lines))
    if "{" not in code:
        return dwarf._member_name(code.strip())
    tail = _ATTRIBUTES.sub("", code[code.rindex("}") + 1:])
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*;", tail)
    if m:
        return m.group(1)
    inner, depth, first_level = code[code.index("{") + 1:code.rindex("}")], 0, ""
    for c in inner:   # what is outside any deeper braces
        depth += (c == "{") - (c == "}")
        first_level += c if depth == 0 and c != "}" else ""
    return "/".join(dwarf._member_name(d + ";") for d in first_level.split(";") if re.search(r"\w+\W+\w", d))


def parse(text: str, struct: str) -> Body:
    """The body of `struct <struct> {` ... `};` as members and the lines between them (blank lines and comments of
    their own). A struct with preprocessor lines in its body (#ifdef blocks) is refused: which members a block holds
    depends on the configuration, and a reorder across it is not cohtb's to write."""
    lines = text.splitlines(keepends=True)
    head = next((i for i, line in enumerate(lines) if re.match(rf"struct {struct}\s*\{{\s*$", line)), None)
    if head is None:
        raise CohtbError(f"no 'struct {struct} {{' line in the header")
    items, i, member, depth, in_comment = [], head + 1, [], 0, False
    while i < len(lines):
        line = lines[i]
        code = _strip_comments(line)
        if in_comment or (not member and not code.strip() and line.count("/*") > line.count("*/")):
            items.append(line)   # a comment of its own, over several lines
            in_comment = "*/" not in line if in_comment else True
            i += 1
            continue
        if not member and depth == 0 and re.match(r"\s*\}[^;{]*;\s*$", code):
            return Body(head + 1, items)
        if line.lstrip().startswith("#"):
            raise CohtbError(f"struct {struct}: its body has preprocessor lines ({line.strip()}): a reorder across "
                             "them is not written by cohtb")
        if not member and not code.strip():   # a blank line, or a comment line of its own
            items.append(line)
            i += 1
            continue
        member.append(line)
        depth += code.count("{") - code.count("}")
        whole = "".join(member)
        if depth == 0 and ";" in _strip_comments(whole):
            while whole.count("/*") > whole.count("*/") and i + 1 < len(lines):   # the comment goes on
                i += 1
                member.append(lines[i])
                whole = "".join(member)
            items.append((_name(member), member))
            member = []
        i += 1
    raise CohtbError(f"struct {struct}: no closing '}};' in the header")


def members(body: Body) -> list[str]:
    return [x[0] for x in body.items if isinstance(x, tuple)]


def reorder(text: str, struct: str, order: list[str]) -> str:
    """The header with the struct's members in `order` (every member, once), each place between them kept."""
    body = parse(text, struct)
    have = members(body)
    if sorted(have) != sorted(order):
        raise CohtbError(f"struct {struct}: the header's members ({', '.join(have)}) are not the layout's "
                         f"({', '.join(order)})")
    chunks = {x[0]: x[1] for x in body.items if isinstance(x, tuple)}
    nxt = iter(order)
    new_body = [line for x in body.items for line in (chunks[next(nxt)] if isinstance(x, tuple) else [x])]
    lines = text.splitlines(keepends=True)
    end = body.start + sum(len(x[1]) if isinstance(x, tuple) else 1 for x in body.items)
    return "".join(lines[:body.start] + new_body + lines[end:])


def diff(old: str, new: str, path: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=3))


def variant_file(variant: str, path: str) -> str:
    """A file of the variant's patched tree (the one its kernel build uses; made here if not yet)."""
    src = _work(variant) / "src"
    if not (src / "Makefile").exists():
        v = kernels.variant(variant)
        kernel.patched_tree(v, kernel.source_tarball(), src)
    try:
        return (src / path).read_text()
    except OSError as e:
        raise CohtbError(f"{src / path}: {e}") from None


def _work(variant: str) -> Path:
    """The variant's build directory (cohtb/fs/kernel.py: its patched tree and objects)."""
    return kernel.work_dir(kernels.variant(variant), kernel.source_tarball())


def built_layout(variant: str, patch: str, struct: str) -> dict:
    """struct's layout as the compiler makes it with the patch on the variant's tree: the object that includes
    its header (HEADERS) compiled with the variant's own build config, read with pahole. A patch that does not
    apply or compile is refused in one line."""
    v = kernels.variant(variant)
    unit = HEADERS[struct][1]
    config = _work(variant) / "out" / ".config"
    if not config.exists():
        raise CohtbError(f"{config}: no build of kernel variant {variant} here to take its config from "
                         f"(cohtb kernel build --variant {variant})")
    with tempfile.TemporaryDirectory(prefix="cohtb-struct-patch-") as tmp:
        src, out = Path(tmp) / "src", Path(tmp) / "out"
        kernel.patched_tree(v, kernel.source_tarball(), src)
        r = subprocess.run(["patch", "-p1", "-s", "-N"], input=patch, cwd=src, capture_output=True, text=True)
        if r.returncode:
            raise CohtbError(f"the proposed patch does not apply to {variant}'s tree: {(r.stdout or r.stderr).strip()}")
        out.mkdir()
        shutil.copy2(config, out / ".config")
        for target in (["olddefconfig"], ["prepare"], [unit]):
            r = subprocess.run(["make", f"O={out}", f"-j{os.cpu_count() or 1}", *target], cwd=src,
                               capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
            if r.returncode:
                last = (r.stderr or r.stdout).strip().splitlines()[-3:]
                raise CohtbError(f"the proposed patch does not build ({' '.join(target)}): {' | '.join(last)}")
        return dwarf.layouts(out / unit, (struct,))[struct]
