from setuptools import find_packages, setup

setup(
    name="spinn_allennlp",
    version="0.1.0",
    description="SPINN (Stack-augmented Parser-Interpreter Neural Network) for AllenNLP",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    packages=find_packages(include=["spinn_allennlp", "spinn_allennlp.*"]),
    python_requires=">=3.8",
    # allennlp 2.10.1's own pins do not resolve on Python 3.11 / torch 2.x; the tested set is
    # requirements/lock.txt (see README). These are the direct requirements only.
    install_requires=["allennlp==2.10.1", "torch>=1.10"],
    license="Apache-2.0",
)
