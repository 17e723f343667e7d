"""The warnings of AllenNLP's dependencies that users cannot act on: hidden, and nothing else
(spinn_allennlp/dependency_warnings.py). The `allennlp` commands without them are checked in
tests/test_cli_configs.py."""

import subprocess
import sys
import warnings
import zipfile

import pytest

from spinn_allennlp.dependency_warnings import hide_dependency_warnings, startup_line
from spinn_allennlp.testing import PROJECT_ROOT

# As this machine's torchvision, fairscale and AllenNLP emit them (message, category, module).
OBSERVED = [
    (
        "Failed to load image Python extension: 'Could not load this library: "
        "/x/torchvision/image.so'If you don't plan on using image functionality from "
        "`torchvision.io`, you can ignore this warning.",
        UserWarning,
        "torchvision.io.image",
    ),
    (
        "`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        "fairscale.experimental.nn.offload",
    ),
    (
        "`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
        "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.",
        FutureWarning,
        "fairscale.experimental.nn.offload",
    ),
    (
        "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
        "`torch.amp.autocast('cuda', args...)` instead.",
        FutureWarning,
        "allennlp.training.gradient_descent_trainer",
    ),
    (
        "pkg_resources is deprecated as an API. See "
        "https://setuptools.pypa.io/en/latest/pkg_resources.html. The pkg_resources package is "
        "slated for removal as early as 2025-11-30. Refrain from using this package or pin to "
        "Setuptools<81.",
        UserWarning,
        "google.rpc",
    ),
]
# Others from the same modules stay visible.
OTHERS = [
    ("Some other torchvision problem", UserWarning, "torchvision.io.image"),
    ("`torch.cuda.amp.autocast(args...)` is deprecated", FutureWarning, "our_own_module"),
    ("some other deprecation", FutureWarning, "allennlp.training.gradient_descent_trainer"),
    ("pkg_resources is deprecated as an API", UserWarning, "our_own_module"),
]


def shown(apply_filters):
    """The messages of OBSERVED + OTHERS that get through `apply_filters`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("always")
        apply_filters()
        for message, category, module in OBSERVED + OTHERS:
            warnings.warn_explicit(message, category, module.replace(".", "/") + ".py", 1, module)
    return [str(warning.message) for warning in caught]


@pytest.mark.parametrize(
    "apply_filters",
    [hide_dependency_warnings, lambda: exec(startup_line())],
    ids=["package", "startup_file"],
)
def test_exactly_those_warnings_are_hidden(apply_filters):
    assert shown(apply_filters) == [message for message, _, _ in OTHERS]
    assert len(shown(lambda: None)) == len(OBSERVED) + len(OTHERS)


def test_the_wheel_ships_the_startup_file(tmp_path):
    """At the wheel's root, so that pip puts it in site-packages (an editable install gets it
    from scripts/setup_env.sh)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
        + ["--disable-pip-version-check", "-q", "-w", str(tmp_path), str(PROJECT_ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("spinn_allennlp-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("spinn_allennlp_warnings.pth").decode() == startup_line()


def test_the_demo_shows_none_of_them():
    """`spinn-demo` imports our package before AllenNLP: the filters come first."""
    result = subprocess.run(
        [sys.executable, "-c", "import spinn_allennlp.demo.server"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Warning" not in result.stderr, result.stderr


def test_allennlp_models_asks_nltk_for_no_download():
    """With the "models" extra, AllenNLP imports allennlp-models' NarrativeQA tool at every
    `allennlp` command; without the punkt folder the set-up leaves, it tries to download NLTK
    data and, offline, prints `[nltk_data] Error loading punkt` each time."""
    result = subprocess.run(
        [sys.executable, "-c", "import allennlp_models.rc.tools.narrativeqa"],
        capture_output=True,
        text=True,
        cwd=PROJECT_ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "nltk_data" not in result.stdout + result.stderr
