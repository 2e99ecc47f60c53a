"""Every package of cohtb is in pyproject's package list (an editable install finds them anyway; a
wheel would not)."""

import tomllib

from cohtb.toolchain import ROOT


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "cohtb").rglob("__init__.py")}
    assert found == listed, f"pyproject lists {sorted(listed)}, the tree has {sorted(found)}"
