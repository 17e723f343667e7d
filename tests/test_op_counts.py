"""benchmarks/op_counts.py at toy sizes: every variant counted, and the counts mean what they
say (level-wise and thin-stack PI-NT do the same matrix products: the same function, fewer
and larger calls; a training step does more than inference)."""

from spinn_allennlp.testing import load_script


def test_counts_of_every_variant(tmp_path):
    op_counts = load_script("benchmarks/op_counts.py")
    results = op_counts.main(["--batch-sizes", "3", "--hidden", "8", "--out", str(tmp_path)])
    assert (tmp_path / "op_counts.json").exists()
    assert set(results) == set(op_counts.VARIANTS)
    levelwise = results["SPINN-PI-NT level-wise"]["3"]
    loop = results["SPINN-PI-NT thin-stack loop"]["3"]
    assert levelwise["encoding"]["gflop"] == loop["encoding"]["gflop"] > 0
    assert levelwise["encoding"]["aten_ops"] < loop["encoding"]["aten_ops"]
    for by_batch in results.values():
        counts = by_batch["3"]
        assert counts["training"]["gflop"] > counts["encoding"]["gflop"]
        assert counts["training"]["aten_ops"] > counts["encoding"]["aten_ops"]


def test_launch_counts_per_step_on_the_gpu_path(tmp_path):
    """benchmarks/launch_counts.py at toy sizes: the fused runner launches at most 2 kernels a
    step in inference and 6 in training (issue 80), far fewer than the PyTorch step loop's
    operations, whose counts are today's (15-52 in inference)."""
    launch_counts = load_script("benchmarks/launch_counts.py")
    results = launch_counts.main(["--lengths", "3,5", "--batch-size", "2", "--hidden", "5",
                                  "--out", str(tmp_path)])  # fmt: skip
    assert (tmp_path / "launch_counts.md").exists()
    for variant, by_runner in results.items():
        fused, loop = by_runner["fused (Triton)"], by_runner["PyTorch static path"]
        assert fused["inference"]["per_step"] <= 2 and fused["training"]["per_step"] <= 6
        assert fused["inference"]["per_step_aten"] == fused["training"]["per_step_aten"] == 0
        assert loop["inference"]["per_step"] >= 5 * fused["inference"]["per_step"], variant
