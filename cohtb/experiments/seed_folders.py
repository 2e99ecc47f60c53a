"""Where each seed's data is: one folder per seed (cohtb/experiments/seed_data/<seed>/, README.md there says what each
file holds) with its published figures and their citation (published.json), each of its experiments' declarations
(<experiment>.toml, one [[version]] per change) and the layout advice asked of its runs (advice.toml). An
experiment belongs to the seed its name starts with (004-fs, 004-collapse-fs: seed 004)."""

from __future__ import annotations

from pathlib import Path

SEEDS = Path(__file__).with_name("seed_data")
PUBLISHED = "published.json"
ADVICE = "advice.toml"


def seed_of(experiment: str) -> str:
    return experiment.split("-", 1)[0]


def seeds() -> list[str]:
    """The seeds with a folder, in order."""
    return sorted(p.name for p in SEEDS.iterdir() if p.is_dir() and (p / PUBLISHED).exists())


def declaration_file(experiment: str) -> Path:
    return SEEDS / seed_of(experiment) / f"{experiment}.toml"


def published_file(seed: str) -> Path:
    return SEEDS / seed / PUBLISHED


def advice_files() -> list[Path]:
    return sorted(SEEDS.glob(f"*/{ADVICE}"))
