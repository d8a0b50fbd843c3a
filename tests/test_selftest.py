"""The self-test must really see what a weak level exposes, or its passing proves nothing."""

import shutil

import pytest

from graders.isolation import identity, namespaces, sandbox, selftest
from graders.isolation.workdir import prepare_workdir


def probe(level: str, own_namespaces: bool = False) -> tuple[sandbox.Isolation, dict[str, bool]]:
    if level not in sandbox.available_levels():
        pytest.skip(f"the {level} level is not available here (needs root, and bubblewrap for bwrap)")
    if own_namespaces and (why := namespaces.problem()):
        pytest.skip(f"root may not give the user level's child a network of its own here: {why}")
    with identity.claimed() as who:
        workdir, _ = prepare_workdir(None, who)
        isolation = sandbox.Isolation(level, who, own_namespaces=own_namespaces)
        try:
            return isolation, selftest.probe(isolation, workdir)
        finally:
            shutil.rmtree(workdir)


def test_local_child_sees_the_network_and_the_canary_file():
    isolation, seen = probe("local")
    assert seen["network"] and seen["canary"]
    assert selftest.passes(isolation, seen)


def test_user_level_with_its_own_namespaces_hides_network_canary_and_environment():
    isolation, seen = probe("user", own_namespaces=True)
    assert seen == {"network": False, "canary": False, "environ": False}
    assert selftest.passes(isolation, seen)


def test_user_level_without_its_own_namespaces_hides_the_canary_and_the_environment_but_not_the_network():
    """What a container whose root may not unshare gives: allowed only for a practice grading."""
    isolation, seen = probe("user", own_namespaces=False)
    assert seen == {"network": True, "canary": False, "environ": False}
    assert selftest.passes(isolation, seen)


def test_bwrap_hides_network_canary_and_environment():
    isolation, seen = probe("bwrap")
    assert seen == {"network": False, "canary": False, "environ": False}
    assert selftest.passes(isolation, seen)


def test_a_probe_that_sees_the_canary_fails_the_strong_levels():
    seen = {"network": False, "canary": True, "environ": False}
    strong = [sandbox.Isolation("bwrap"), sandbox.Isolation("user", own_namespaces=True), sandbox.Isolation("user")]
    assert not any(selftest.passes(isolation, seen) for isolation in strong)


@pytest.mark.parametrize("level", ["bwrap", "user", "local"])
def test_the_child_imports_numpy_at_every_level(level: str):
    """The project folder is closed to the grading uid, so the kit's NumPy in .venv is out of
    its reach: the child must get the copy the grader makes (before, every part-4 grade at the
    user level was 0 on a machine without python3-numpy)."""
    if level not in sandbox.available_levels():
        pytest.skip(f"the {level} level is not available here (needs root, and bubblewrap for bwrap)")
    with identity.claimed() as who:
        workdir, _ = prepare_workdir(None, who)
        try:
            result = sandbox.run(sandbox.Isolation(level, who), workdir, "probe.py", b'{"imports": true}', 60)
        finally:
            shutil.rmtree(workdir)
    assert result.stdout.strip() == b'{"imports": null}', result.stderr
