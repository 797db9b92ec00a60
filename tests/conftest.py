"""Shared test setup: offline litellm, bounded derandomized Hypothesis profiles."""
import os

# Before anything can import litellm: no network for its cost map, offline mode.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60, database=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

WORLDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worlds")


@pytest.fixture(scope="session")
def demo():
    from worldspec.compiler import load_world
    return load_world(os.path.join(WORLDS, "demo.world"))
