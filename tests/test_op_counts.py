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
