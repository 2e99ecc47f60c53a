"""Structure layouts of a built kernel, read from its DWARF with pahole (Debian's dwarves): the top-level
fields of struct dentry and struct inode (or of another struct asked for), offset and size, as the layout map
of a full-system run."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cohtb.errors import CohtbError

STRUCTS = ("dentry", "inode")
_COMMENT = re.compile(r"/\*\s*(\d+)(?::\s*\d+)?\s+(\d+)\s*\*/\s*$")   # /* offset size */ (or offset:bit size)
_SIZE = re.compile(r"/\*\s*size:\s*(\d+)")
_ATTRIBUTE = re.compile(r"__attribute__\(\(.*?\)\)")


def parse_pahole(text: str) -> dict[str, dict]:
    """{struct: {"size": n, "fields": [{"name", "offset", "size"}]}} from `pahole -C a,b` output: the
    members at depth 1; a nested union or struct is one field, named by its own name or, when anonymous,
    by its members' names joined with '/'. A member broken across lines (a long attribute, or a listing
    quoted from a mail) is read as one line; text outside the structs is ignored."""
    out: dict[str, dict] = {}
    current: str | None = None
    depth = 0
    nested_names: list[str] = []
    pending = ""
    for line in text.splitlines():
        stripped = f"{pending} {line.strip()}".strip() if pending else line.strip()
        pending = ""
        m = re.match(r"struct (\w+) \{", stripped)
        if depth == 0 and m:
            current, depth = m.group(1), 1
            out[current] = {"size": None, "fields": []}
            continue
        if current is None:
            continue
        if stripped and not stripped.startswith("/*") and not any(c in stripped for c in ";{}"):
            pending = stripped   # the member goes on on the next line
            continue
        opens, closes = stripped.count("{"), stripped.count("}")
        c = _COMMENT.search(stripped)
        if depth == 1 and opens and not closes:
            nested_names = []
        elif depth == 2 and c and not opens and not closes:
            nested_names.append(_member_name(stripped))
        if depth == 1 and c and not opens and not closes:
            out[current]["fields"].append({"name": _member_name(stripped), "offset": int(c.group(1)), "size": int(c.group(2))})
        if closes and depth == 2 and c:
            name = re.match(r"\}\s*(\w*)", _ATTRIBUTE.sub("", stripped)).group(1) or "/".join(nested_names)
            out[current]["fields"].append({"name": name, "offset": int(c.group(1)), "size": int(c.group(2))})
        s = _SIZE.search(stripped)
        if depth == 1 and s:
            out[current]["size"] = int(s.group(1))
        depth += opens - closes
        if depth == 0:
            current = None
    return out


def _member_name(line: str) -> str:
    decl = _ATTRIBUTE.sub("", line.split(";")[0])
    decl = re.sub(r"\[.*?\]", "", decl)      # arrays
    decl = re.sub(r":\s*\d+\s*$", "", decl)  # bit fields
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)   # function pointers
    return m.group(1) if m else re.findall(r"\w+", decl)[-1]


def layouts(vmlinux: Path, structs: tuple[str, ...] = STRUCTS) -> dict[str, dict]:
    r = subprocess.run(["pahole", "-C", ",".join(structs), str(vmlinux)], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise CohtbError(f"{vmlinux}: pahole could not read {', '.join(structs)} from its DWARF "
                         f"(install Debian's dwarves: `make kernel` does): {r.stderr.strip()}")
    out = parse_pahole(r.stdout)
    missing = [s for s in structs if s not in out or out[s]["size"] is None]
    if missing:
        raise CohtbError(f"{vmlinux}: pahole printed no complete struct {', '.join(missing)}")
    return out


def dentry_layout(vmlinux: Path) -> dict[str, dict]:
    return layouts(vmlinux)


def field(layout: dict[str, dict], struct: str, name: str) -> dict:
    for f in layout[struct]["fields"]:
        if f["name"] == name:
            return f
    raise CohtbError(f"struct {struct} has no field {name}")


def check_promise(variant, layout: dict[str, dict]) -> None:
    """The variant's struct dentry is what it says it is."""
    got = (field(layout, "dentry", "d_lockref")["offset"], layout["dentry"]["size"])
    want = (variant.d_lockref_offset, variant.dentry_size)
    if got != want:
        raise CohtbError(f"kernel variant {variant.name}: struct dentry has d_lockref at {got[0]} and size {got[1]}, "
                         f"the variant promises {want[0]} and {want[1]}")
