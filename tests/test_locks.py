"""The locks install anywhere the README says they do, checked without a network: from the
package index alone (no pin that only another index serves, unless the lock names that index),
and on every supported Python (each has exactly one pin of every package it needs). The
supported Pythons are said once each in setup.py, the set-up script and the README, and agree.
(That the locks really install is shown by running `make setup` with pip's configuration set
aside on each supported Python: docs/install.md records those runs.)"""

import re
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from spinn_allennlp.testing import PROJECT_ROOT

REQUIREMENTS = PROJECT_ROOT / "requirements"
LOCKS = sorted(REQUIREMENTS.glob("*lock.txt"))
# Which .in file each lock is compiled from (scripts/compile_lock.sh).
SOURCES = {"lock.txt": "runtime.in", "dev-lock.txt": "dev.in", "models-lock.txt": "models.in"}
# Options in a requirements file that name where packages come from.
INDEX_OPTIONS = ("--index-url", "-i ", "--extra-index-url", "--find-links", "-f ")
# Machines a user installs on: Linux x86-64 and aarch64, macOS on Apple silicon.
PLATFORMS = [
    {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
    {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
    {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
]


def python_requires() -> SpecifierSet:
    match = re.search(r'python_requires="([^"]+)"', (PROJECT_ROOT / "setup.py").read_text())
    assert match, "setup.py names no python_requires"
    return SpecifierSet(match.group(1))


def supported_pythons() -> List[str]:
    """The minor versions setup.py admits, among those anyone could have."""
    admitted = python_requires()
    return [f"3.{minor}" for minor in range(8, 16) if Version(f"3.{minor}.0") in admitted]


SUPPORTED = supported_pythons()


def pins(lock: Path) -> List[Tuple[Requirement, int]]:
    """(requirement, line number) of every pin of ``lock`` (comment lines skipped)."""
    found = []
    for number, line in enumerate(lock.read_text().splitlines(), start=1):
        line = line.split(" #")[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        found.append((Requirement(line), number))
    return found


def environment(python: str, platform: Dict[str, str]) -> Dict[str, str]:
    return {
        **platform,
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "os_name": "posix",
    }


def test_setup_py_admits_exactly_the_three_tested_pythons():
    assert SUPPORTED == ["3.11", "3.12", "3.13"]


def test_the_set_up_script_and_the_readme_name_the_supported_pythons():
    script = (PROJECT_ROOT / "scripts" / "setup_env.sh").read_text()
    match = re.search(r'^SUPPORTED="([^"]+)"', script, flags=re.M)
    assert match and match.group(1).split() == SUPPORTED
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert "Python " + ", ".join(SUPPORTED[:-1]) + " or " + SUPPORTED[-1] in readme


@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_no_pin_needs_an_index_the_lock_does_not_name(lock):
    """A local version label (`torch==2.13.0+cpu`) is a build that lives on its maker's own
    index, not on the package index: pip finds it only where that index is named (or on a
    machine whose pip configuration adds it, which a user's does not)."""
    names_an_index = any(
        line.strip().startswith(INDEX_OPTIONS) for line in lock.read_text().splitlines()
    )
    for requirement, number in pins(lock):
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", f"{lock.name}:{number}: {requirement} is not a pin"
        local = Version(specifier.version).local
        assert local is None or names_an_index, (
            f"{lock.name}:{number}: {requirement} is a build of another index ({local}), and the "
            "lock names none"
        )


@pytest.mark.parametrize("python", SUPPORTED)
@pytest.mark.parametrize("lock", LOCKS, ids=lambda path: path.name)
def test_every_supported_python_gets_one_pin_of_each_package(lock, python):
    """On every supported Python and platform, the pins whose markers hold name each package
    once, and include everything the lock's .in file asks for."""
    wanted = {
        canonicalize_name(Requirement(line.split("#")[0].strip()).name)
        for line in (REQUIREMENTS / SOURCES[lock.name]).read_text().splitlines()
        if line.split("#")[0].strip()
    }
    for platform in PLATFORMS:
        where = environment(python, platform)
        chosen: Dict[str, int] = {}
        for requirement, number in pins(lock):
            if requirement.marker is not None and not requirement.marker.evaluate(where):
                continue
            name = canonicalize_name(requirement.name)
            assert name not in chosen, (
                f"{lock.name}: {name} pinned twice for Python {python} on "
                f"{platform['sys_platform']} {platform['platform_machine']} (lines "
                f"{chosen[name]} and {number})"
            )
            chosen[name] = number
        missing = wanted - set(chosen)
        assert not missing, f"{lock.name}: nothing pinned for Python {python}: {sorted(missing)}"


def test_markers_never_leave_a_supported_python_out_of_a_package_it_needs():
    """A pin limited by a Python marker (`python_full_version < '3.12'`) has a sibling for the
    other supported Pythons, unless the package is platform-specific: checked by the test
    above for the .in files' packages; here for every package a supported Python gets
    anywhere in the lock."""
    for lock in LOCKS:
        by_name: Dict[str, List[Marker]] = {}
        for requirement, _ in pins(lock):
            if requirement.marker is None:
                continue
            by_name.setdefault(canonicalize_name(requirement.name), []).append(requirement.marker)
        for name, markers in by_name.items():
            for platform in PLATFORMS:
                got = [
                    python
                    for python in SUPPORTED
                    if any(marker.evaluate(environment(python, platform)) for marker in markers)
                ]
                # All supported Pythons or none of them (platform markers aside).
                assert got in ([], SUPPORTED), (lock.name, name, platform["sys_platform"], got)
