import re
import runpy
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).parent
VERSION = re.search(
    r'__version__ = "([^"]+)"', (ROOT / "spinn_allennlp" / "__init__.py").read_text()
).group(1)

# A start-up file installed next to the package: it hides the warnings of AllenNLP's dependencies
# that every `allennlp` command prints before any plugin loads
# (spinn_allennlp/dependency_warnings.py).
STARTUP_FILE = "spinn_allennlp_warnings.pth"


class BuildWithStartupFile(build_py):
    """`build_py`, plus the start-up file at the top of the build (the wheel's root)."""

    def run(self):
        super().run()
        warnings = runpy.run_path(str(ROOT / "spinn_allennlp" / "dependency_warnings.py"))
        (Path(self.build_lib) / STARTUP_FILE).write_text(warnings["startup_line"]())

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [str(Path(self.build_lib) / STARTUP_FILE)]


setup(
    name="spinn_allennlp",
    cmdclass={"build_py": BuildWithStartupFile},
    version=VERSION,
    description="SPINN (Stack-augmented Parser-Interpreter Neural Network) for AllenNLP",
    long_description=(ROOT / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    # The AllenNLP plugin and the SPINN core it builds on (spinn_core: torch alone).
    packages=find_packages(
        include=["spinn_allennlp", "spinn_allennlp.*", "spinn_core", "spinn_core.*"]
    ),
    # The part-of-speech lexicon of the head rules (spinn_allennlp/data/head_rules.py).
    package_data={"spinn_allennlp.data": ["resources/*.tsv"]},
    # The Pythons the locks are resolved and tested for (scripts/setup_env.sh's SUPPORTED,
    # docs/install.md): AllenNLP 2.10 is not tested past them.
    python_requires=">=3.11,<3.14",
    classifiers=[
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
    ],
    # The direct run-time requirements. allennlp 2.10.1's own pins do not resolve on
    # Python 3.11+ / torch 2.x: install the tested set, requirements/lock.txt, with
    # `pip install --no-deps` (see README).
    install_requires=["allennlp==2.10.1", "torch>=1.10"],
    # allennlp-models, whose readers, models and configs run with "type": "spinn"
    # (docs/your_own_model.md). Locked in requirements/models-lock.txt, which `make setup` installs.
    # benepar: only the "benepar" tree source needs it (imported when that source first parses).
    extras_require={"models": ["allennlp-models==2.10.1"], "benepar": ["benepar==0.2.0"]},
    # The demo page (spinn_allennlp/demo): `spinn-demo out/spinn/model.tar.gz`.
    entry_points={"console_scripts": ["spinn-demo=spinn_allennlp.demo.server:main"]},
    license="Apache-2.0",
)
