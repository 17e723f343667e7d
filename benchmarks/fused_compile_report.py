"""Compiles every fused kernel (``spinn_core/fused/kernels.py``) for sm_80 (A100) and sm_90
(H100, H200) on this machine, no GPU needed, at the block sizes the runner launches them with
and in every variant it launches (float32 with IEEE or TF32 products, float64; with and
without a tracker, a parser, a greedy move, gradients into the nodes), and records what the
cubins need: registers per thread, spilled bytes, shared memory.

    python benchmarks/fused_compile_report.py [--out benchmarks/results/fused_compile]
        [--archs 80,90] [--tracking 61,79] [--quick]

Registers and shared memory come from the Triton wheel's ``cuobjdump --dump-resource-usage``
on each cubin; spills from its ``ptxas -v`` on the same PTX (spill stores and loads; a kernel
with either is a failure). Needs torch and triton (the version the locks pin); writes
``report.json`` and ``report.md``. ``--quick`` compiles one variant per kernel and dtype.
"""

import argparse
import contextlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

# Compiled for the GPU, not interpreted: decorated after this is cleared (kernels.py).
os.environ.pop("TRITON_INTERPRET", None)

import torch  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from spinn_core.fused import kernels  # noqa: E402

INT_TENSORS = {"tops", "actions", "stack", "records", "lengths", "num_steps"}
SCALARS = {"t", "B", "N", "D", "E", "TRK", "RS"}
# Scalars that are multiples of 16 at the GUIDE's shapes (B = 512): Triton specializes them so.
ALIGNED_SCALARS = {"B"}
DTYPES = {"fp32": ("fp32", "ieee"), "fp32-tf32": ("fp32", "tf32"), "fp64": ("fp64", "ieee")}


def variants(tracking: List[int], quick: bool) -> Iterator[Tuple[str, Dict]]:
    """(kernel, flags) for every variant the runner launches."""
    yield from (("tracker_step", {"KEEP": keep}) for keep in (False, True)[quick:])
    parser_kinds = [(False, False), (True, False), (True, True)]
    for keep in (False, True)[quick:]:
        for parser, greedy in parser_kinds[2 * quick :]:
            for size in tracking[: 1 if quick or not parser else None]:
                block = max(16, 1 << (size - 1).bit_length()) if parser else 16
                flags = {"KEEP": keep, "PARSER": parser, "GREEDY": greedy, "BLOCK_TRK": block}
                yield "compose_step", flags
    yield "compose_backward", {}
    for has_parser in (False, True)[quick:]:
        for reads in (False, True)[quick:]:
            for trains in (False, True)[quick:]:
                flags = {"HAS_PARSER": has_parser, "READS_TRACKER": reads, "TRAINS_NODES": trains}
                yield "tracker_backward", flags


def signature(function, dtype: str) -> Tuple[Dict[str, str], Dict]:
    """Triton's signature of a kernel's arguments, and the attributes the launcher would give
    them (pointers 16-byte aligned, as torch allocates)."""
    names = list(inspect.signature(function.fn).parameters)
    types, attrs = {}, {}
    for index, name in enumerate(names):
        annotation = str(function.fn.__annotations__.get(name, ""))
        if "constexpr" in annotation:
            types[name] = "constexpr"
        elif name in SCALARS:
            types[name] = "i32"
            if name in ALIGNED_SCALARS:
                attrs[(index,)] = [["tt.divisibility", 16]]
        else:
            types[name] = "*i32" if name in INT_TENSORS else f"*{dtype}"
            attrs[(index,)] = [["tt.divisibility", 16]]
    return types, attrs


def resource_usage(binary: Path, cubin: bytes, ptxas_log: str) -> Dict[str, int]:
    """Registers, shared and local memory of a cubin (cuobjdump); spilled bytes from the log
    of the ptxas run that made it (Triton's own, with its options)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.cubin"
        path.write_bytes(cubin)
        dump = subprocess.run(
            [str(binary / "cuobjdump"), "--dump-resource-usage", str(path)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    found = re.findall(r"(REG|SHARED|LOCAL|STACK):(\d+)", dump)
    usage = {key.lower(): int(value) for key, value in found}
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", ptxas_log)
    if spills is None:
        raise RuntimeError(f"no spill counts in ptxas's log:\n{ptxas_log}")
    usage["spill_stores"], usage["spill_loads"] = int(spills[1]), int(spills[2])
    return usage


def compiled_with_log(source: ASTSource, arch: int, options: Dict):
    """``triton.compile`` of ``source`` for sm_``arch``, always compiled (never from Triton's
    cache, so ptxas runs), with ptxas's log (Triton prints it when asked)."""
    knobs = triton.knobs
    log = io.StringIO()
    saved = knobs.compilation.always_compile, knobs.nvidia.dump_ptxas_log
    knobs.compilation.always_compile, knobs.nvidia.dump_ptxas_log = True, True
    try:
        with contextlib.redirect_stdout(log):
            compiled = triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)
    finally:
        knobs.compilation.always_compile, knobs.nvidia.dump_ptxas_log = saved
    return compiled, log.getvalue()


def compile_one(name: str, flags: Dict, dtype_key: str, arch: int, binary: Path) -> Dict:
    function = kernels.device_functions()[name]
    dtype, precision = DTYPES[dtype_key]
    blocks = dict(kernels.BLOCKS[name])
    num_warps = blocks.pop("num_warps")
    num_stages = blocks.pop("num_stages")
    constexprs = dict(blocks, **flags)
    if "PRECISION" in inspect.signature(function.fn).parameters:
        constexprs["PRECISION"] = precision
    types, attrs = signature(function, dtype)
    for missing in [k for k, v in types.items() if v == "constexpr" and k not in constexprs]:
        raise ValueError(f"{name}: no value for constexpr {missing}")
    started = time.perf_counter()
    compiled, log = compiled_with_log(
        ASTSource(fn=function, signature=types, constexprs=constexprs, attrs=attrs),
        arch,
        {"num_warps": num_warps, "num_stages": num_stages},
    )
    seconds = time.perf_counter() - started
    usage = resource_usage(binary, compiled.asm["cubin"], log)
    return {
        "kernel": name,
        "arch": f"sm_{arch}",
        "dtype": dtype_key,
        "flags": flags,
        "blocks": blocks,
        "num_warps": num_warps,
        "num_stages": num_stages,
        "registers": usage.get("reg"),
        "spill_stores": usage["spill_stores"],
        "spill_loads": usage["spill_loads"],
        "local_bytes": usage.get("local"),
        "stack_bytes": usage.get("stack"),
        "static_shared_bytes": usage.get("shared"),
        "dynamic_shared_bytes": compiled.metadata.shared,
        "compile_seconds": round(seconds, 2),
    }


def markdown(rows: List[Dict], versions: Dict[str, str]) -> str:
    intro = (
        "Made by `benchmarks/fused_compile_report.py` on a machine without a GPU (triton "
        f"{versions['triton']}, torch {versions['torch']}): every kernel of the fused runner "
        "(`spinn_core/fused/kernels.py`), in every variant the runner launches, at the block "
        "sizes it launches with, compiled for sm_80 (A100) and sm_90 (H100, H200); float32 "
        "with IEEE products (torch's default precision) or TF32 ones, and float64. Registers "
        "per thread and shared memory per program from the cubin (`cuobjdump`), spilled "
        "bytes from the log of the ptxas run that made it."
    )
    spilled = [row for row in rows if row["spill_stores"] or row["spill_loads"]]
    lines = ["# Fused kernels compiled for sm_80 and sm_90", "", *textwrap.wrap(intro, 100), ""]
    lines += [
        f"**{len(rows)} kernels compiled, {len(spilled)} spill.**",
        "",
        "| kernel | blocks | warps | variants | registers (sm_80 / sm_90) | shared bytes |",
        "|---|---|---:|---:|---|---:|",
    ]
    for name in dict.fromkeys(row["kernel"] for row in rows):
        mine = [row for row in rows if row["kernel"] == name]
        ranges = []
        for arch in ("sm_80", "sm_90"):
            registers = [row["registers"] for row in mine if row["arch"] == arch]
            ranges.append(f"{min(registers)}-{max(registers)}" if registers else "-")
        shared = max(_shared(row) for row in mine)
        lines.append(
            f"| {name} | {_blocks(mine[0])} | {mine[0]['num_warps']} | {len(mine)} | "
            f"{' / '.join(ranges)} | <= {shared} |"
        )
    lines += [
        "",
        "Every variant (flags: the constexpr switches the runner sets; spills: stores / loads):",
        "",
        "| kernel | arch | dtype | flags | registers | spills | shared bytes |",
        "|---|---|---|---|---:|---:|---:|",
    ]
    for row in rows:
        flags = ", ".join(
            f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in row["flags"].items()
        )
        lines.append(
            f"| {row['kernel']} | {row['arch']} | {row['dtype']} | {flags or '-'} | "
            f"{row['registers']} | {row['spill_stores']} / {row['spill_loads']} | "
            f"{_shared(row)} |"
        )
    return "\n".join(lines) + "\n"


def _shared(row: Dict) -> int:
    return row["dynamic_shared_bytes"] + (row["static_shared_bytes"] or 0)


def _blocks(row: Dict) -> str:
    blocks = ", ".join(f"{k.replace('BLOCK_', '')}={v}" for k, v in row["blocks"].items())
    return f"{blocks}, stages={row['num_stages']}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fused_compile"))
    parser.add_argument("--archs", default="80,90")
    parser.add_argument("--tracking", default="61,79", help="tracking dims (the parser's block)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    binary = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    tracking = [int(size) for size in args.tracking.split(",")]
    rows = []
    for arch in (int(a) for a in args.archs.split(",")):
        for dtype_key in DTYPES:
            for name, flags in variants(tracking, args.quick):
                row = compile_one(name, flags, dtype_key, arch, binary)
                rows.append(row)
                print(
                    f"{row['kernel']:17} {row['arch']} {dtype_key:9} {row['flags']} regs "
                    f"{row['registers']} spills {row['spill_stores']}/{row['spill_loads']} "
                    f"({row['compile_seconds']} s)",
                    flush=True,
                )
    versions = {"triton": triton.__version__, "torch": torch.__version__}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(
        json.dumps({"versions": versions, "kernels": rows}, indent=1) + "\n"
    )
    (args.out / "report.md").write_text(markdown(rows, versions))
    spilled = sum(1 for row in rows if row["spill_stores"] or row["spill_loads"])
    print(
        f"wrote {args.out}/report.json and report.md: {len(rows)} kernels, {spilled} spill",
        file=sys.stderr,
    )
    return 1 if spilled else 0


if __name__ == "__main__":
    sys.exit(main())
