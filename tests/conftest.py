"""Every test keeps its analysis cache in a temporary directory, never in the user's ~/.cache."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _private_analysis_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("COHTB_CACHE", str(tmp_path_factory.mktemp("cohtb-cache")))
    yield
    mp.undo()
