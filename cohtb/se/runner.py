"""The SE runner: a workload binary on gem5-configs/cohtb_se.py, its addresses made physical by the TLB mappings
gem5 traced."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.places import ROOT
from cohtb.run import gem5
from cohtb.run.code_names import Code
from cohtb.run.recorder import Finished, tail
from cohtb.run.spec import RunSpec
from cohtb.se.workloads import WORKLOADS, binary

CONFIG = ROOT / "gem5-configs" / "cohtb_se.py"


def command(spec: RunSpec, run_dir: Path, gem5_binary: Path, trace: str | None = gem5.TRACE,
            config_args: tuple[str, ...] = (), profile: bool | None = None) -> list[str]:
    """The run's gem5 command line (config_args: more of cohtb_se.py's, e.g. --no-trace), with the window's
    profile when `profile` says so (None: whenever the gem5 has the pc-profile patch)."""
    profile = gem5.has_profile(gem5_binary) if profile is None else profile
    return gem5.command(gem5_binary, run_dir, CONFIG, [
        *config_args, *(("--profile",) if profile else ()), *spec.machine_args(), "--cpu", spec.cpu, "--binary", str(binary(spec.workload)),
        "--out", str(run_dir), "--", *spec.workload_args()], trace)


class SERunner:
    def check(self, spec: RunSpec) -> None:
        w = WORKLOADS.get(spec.workload)
        if w is None:
            raise CohtbError(f"run {spec.id}: unknown workload '{spec.workload}'")
        if spec.policy not in w.policies or spec.layout not in w.layouts:
            raise CohtbError(f"run {spec.id}: {spec.workload} takes policies {w.policies} and layouts {w.layouts}")

    def shared(self) -> dict[Path, str]:
        return {}   # the workloads are built in the checkout, which every worker runs from

    def prepare(self, specs: list[RunSpec], gem5_binary: Mapping[str, Path], timeout: float, workers: int) -> dict:
        return {s.id: None for s in specs}   # the binaries are built by the set-up (check found them)

    def command(self, spec: RunSpec, run_dir: Path, gem5_binary: Path, prepared: None) -> list[str]:
        if not spec.traced:
            return command(spec, run_dir, gem5_binary, trace=None, config_args=("--no-trace",))
        return command(spec, run_dir, gem5_binary)

    def pagemap(self, run_dir: Path) -> Path:
        return run_dir / "pagemap.txt"

    def finish(self, spec: RunSpec, run_dir: Path, roi: dict, prepared: None) -> Finished:
        try:
            workload = json.loads((run_dir / "workload.stdout").read_text())
        except (OSError, json.JSONDecodeError):
            raise CohtbError(f"the workload printed no JSON result:\n{tail(run_dir / 'workload.stderr')}") from None
        # An untraced run logged no TLB mappings: its layout keeps virtual addresses only, as a native run's.
        pagemap = self.pagemap(run_dir) if spec.traced else None
        return Finished(workload, binary(spec.workload), pagemap,
                        code=[Code(binary(spec.workload).name, binary(spec.workload), kernel=False)])
