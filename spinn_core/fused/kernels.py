"""The thin stack's step as Triton kernels: what ``runner.py`` launches, one step at a time.

Four kernels, each launched once per step on a grid of (blocks of sentences) x (blocks of
columns), so that a step keeps every SM busy from batch 64 on:

* :func:`tracker_step` -- the tracking LSTM's cell (``nn.LSTMCell``) at step t, from the
  buffer top, the two stack tops and the previous state;
* :func:`compose_step` -- eq. 1-3, the TreeLSTM composition of every sentence's stack second
  and top (with the tracker's state as its extra input), written to the sentence's row for
  step t; its first column of programs also scores SHIFT and REDUCE (the parser) and, for the
  greedy policy, makes the move: step t + 1's stack;
* :func:`compose_backward`, :func:`tracker_backward` -- their gradients, in reverse step order.

A launch is a barrier for the whole grid, which is what a step needs: the composition reads
the tracker's whole state, the next step's tracker reads the node just written. Everything a
step writes goes to memory of its own (step t's node row, slot t of every per-step record), so
no program ever reads what another program of the same launch writes: no atomics, no races.
Sentences own disjoint blocks of the tape (``batch.py``), so the backward's additions into the
children's gradient rows cannot collide either; the zero row, the one row two stack slots can
share, is a constant whose gradient is not kept.

Layouts (``S`` steps, ``B`` sentences longest first, ``D`` hidden, ``TRK`` tracking,
``RS = 1 + N + S`` rows per sentence, ``E`` the composition's extra width, TRK or 0):

* ``nodes`` (B * RS, 2D): the tape, [h; c] rows; ``grads`` its gradient, alike;
* ``tops`` (S + 1, B, 3) int32: tape rows of the buffer top, stack second and stack top
  before each step; ``actions`` (S, B) int32: SHIFT 0, REDUCE 1, PAD -1;
* ``stack`` (S + 1, B, 3) int32, greedy only: the stack top's record (-1: empty), the depth and
  the words shifted before each step; ``records`` (S, B, 2) int32: the row each step pushed and
  the record below it (a linked list: popping costs nothing, nothing is written twice);
* ``h_state``, ``c_state`` (S + 1, B, TRK): the tracker's state before each step and after
  the last; ``tracker_gates`` (S, B, 4 TRK): i, f, tanh g, o; ``compose_gates`` (S, B, 5D):
  i, f_left, f_right, o, tanh g; their gradients (of the pre-activations) likewise.

Decorated at the first launch, not at import: Triton reads ``TRITON_INTERPRET`` (run the
kernels on CPU tensors, in Python) when it decorates a function, and ``import spinn_core``
must work without Triton. Annotations are strings (``from __future__``) for the same reason.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Dict, Optional

from spinn_core.transitions import PAD, REDUCE, SHIFT

# Bound at the first launch (device_functions); Any to type checkers, which cannot check
# Triton's language as Python.
triton: Any = None
tl: Any = None
# The moves' codes inside kernels: Triton constants once decorated (a kernel may read no other
# globals).
_SHIFT, _REDUCE, _PAD = SHIFT, REDUCE, PAD

# Block sizes, warps and pipeline stages each kernel runs with, chosen so that no kernel spills
# registers on sm_80 or sm_90 in float32 (IEEE or TF32 products) or float64
# (``benchmarks/fused_compile_report.py`` compiles every variant and records registers and
# spills). BLOCK_B: sentences per program; the other blocks are columns (of D, of TRK) and
# K-chunks of the products: each a power of two >= 16 (``tl.dot``'s smallest), tails masked.
# At B = 512, D = 300, TRK = 79 a step's grids are 16 x 19 programs (compose_step), 16 x 5
# (tracker_step), 16 x 23 (compose_backward: 10 + 10 + 3 column blocks) and 32 x 12
# (tracker_backward: 5 + 5 + 2): enough for an H100's 132 SMs. Software pipelining
# (num_stages > 1) kept every loop's tiles two or three times over and spilled; the loops are
# short (K <= 700).
BLOCKS: Dict[str, Dict[str, int]] = {
    "tracker_step": dict(BLOCK_B=32, BLOCK_T=16, BLOCK_K=16, num_warps=4, num_stages=1),
    "compose_step": dict(BLOCK_B=32, BLOCK_D=16, BLOCK_K=16, num_warps=8, num_stages=1),
    "compose_backward": dict(BLOCK_B=32, BLOCK_J=16, BLOCK_N=32, num_warps=8, num_stages=1),
    "tracker_backward": dict(BLOCK_B=16, BLOCK_J=16, BLOCK_N=64, num_warps=8, num_stages=1),
}


class LaunchCounter:
    """How many kernels the fused runner launched (``total``, and ``by_kernel``), counted by
    :func:`launch`, the one way in; ``launching`` is True during a launch, so that a count
    of ATen operations can leave out what Triton's interpreter dispatches to run a kernel on
    CPU tensors (a GPU launch dispatches none)."""

    def __init__(self) -> None:
        self.by_kernel: Counter = Counter()
        self.launching = False

    @property
    def total(self) -> int:
        return sum(self.by_kernel.values())

    def reset(self) -> None:
        self.by_kernel.clear()


launches = LaunchCounter()

# The functions below that run on the device, helpers first (a kernel calls them by name).
DEVICE_FUNCTIONS = (
    "_tanh",
    "_accumulate",
    "_input_chunk",
    "_block",
    "_gates",
    "_move",
    "_parse",
    "_backpropagate",
    "_tracker_state_grads",
    "tracker_step",
    "compose_step",
    "compose_backward",
    "tracker_backward",
)
KERNELS = DEVICE_FUNCTIONS[-4:]
_decorated_interpreted: Optional[bool] = None


def interpreter_requested() -> bool:
    """Whether TRITON_INTERPRET asks for Triton's interpreter (as Triton reads it)."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on")


def decorated_interpreted() -> Optional[bool]:
    """None before the first launch; then whether the kernels run in the interpreter."""
    return _decorated_interpreted


def device_functions() -> Dict[str, Any]:
    """The kernels and helpers decorated with ``triton.jit`` (once, at the first call, in the
    mode TRITON_INTERPRET asks for then), by name. A kernel finds its helpers through this
    module's globals, so the decorated functions replace the plain ones there."""
    global triton, tl, _decorated_interpreted
    namespace = globals()
    if _decorated_interpreted is None:
        import triton
        import triton.language as tl

        if interpreter_requested() and type(tl.zeros).__name__ != "InterpretedFunction":
            # Triton sets its language up for the interpreter when first imported: asked for
            # later, the kernels would fail deep inside it.
            raise RuntimeError(
                "TRITON_INTERPRET=1 was set after Triton was imported (torch may import it): "
                "set it before importing torch, e.g. in the environment"
            )

        for name in ("_SHIFT", "_REDUCE", "_PAD"):
            namespace[name] = tl.constexpr(namespace[name])
        for name in DEVICE_FUNCTIONS:
            # The step number changes every launch: one compiled kernel for all steps.
            options = {"do_not_specialize": ["t"]} if name in KERNELS else {}
            namespace[name] = triton.jit(namespace[name], **options)
        _decorated_interpreted = interpreter_requested()
    return {name: namespace[name] for name in DEVICE_FUNCTIONS}


def launch(name: str, grid, *args, **meta) -> None:
    """Launches kernel ``name`` on ``grid`` with its block sizes (:data:`BLOCKS`), counted."""
    kernel = device_functions()[name]
    launches.by_kernel[name] += 1
    launches.launching = True
    try:
        kernel[grid](*args, **BLOCKS[name], **meta)
    finally:
        launches.launching = False


# ----------------------------------------------------------------------------------------------
# Helpers (device functions).
# ----------------------------------------------------------------------------------------------


def _tanh(x):
    # Through exp(-2|x|), which cannot overflow: within a few units of roundoff of 1 (Triton's
    # libdevice tanh has no interpreter counterpart).
    e = tl.exp(-2.0 * tl.abs(x))
    y = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -y, y)


def _accumulate(acc, a, b_tile, b_mask, PRECISION: tl.constexpr):
    """acc + a @ B, B loaded from the pointers ``b_tile`` (zeros outside ``b_mask``)."""
    return tl.dot(a, tl.load(b_tile, mask=b_mask, other=0.0), acc, input_precision=PRECISION)


def _input_chunk(x_rows, live, K, w, w_stride, j, j_mask, k0, BLOCK_K: tl.constexpr):
    """Columns k0 .. k0 + BLOCK_K of the product's input rows (zeros past K and for rows not
    live), the pointers of the first gate's weight tile over them (row j of the gate, column k)
    and the tile's mask."""
    k = k0 + tl.arange(0, BLOCK_K)
    k_mask = k < K
    x = tl.load(x_rows[:, None] + k[None, :], mask=live[:, None] & k_mask[None, :], other=0.0)
    tile = w + j[None, :] * w_stride + k[:, None]
    return x, tile, k_mask[:, None] & j_mask[None, :]


def _block(t, B, COLUMNS, BLOCK_B: tl.constexpr, BLOCK_C: tl.constexpr):
    """A step kernel's block: sentences ``b`` (program axis 0) and columns ``j`` (axis 1) of
    step ``t``, which of them are real (``live``, ``j_mask``, both: ``here``) and the step's
    row of each sentence in the per-step records (``step``)."""
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    j = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    live = b < B
    j_mask = j < COLUMNS
    here = live[:, None] & j_mask[None, :]
    return b, j, live, j_mask, here, (t * B + b).to(tl.int64)


def _gates(
    acc_0, acc_1, acc_2, acc_3, acc_4, x_rows, live, K, w, w_stride, j, j_mask, GATE_ROWS,
    GATES: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """acc_q += x @ W_q^T over K columns for the first ``GATES`` accumulators (4: the LSTM's
    i, f, g, o, ``acc_4`` passed through; 5: the TreeLSTM's i, f_left, f_right, o, g): x's rows
    start at ``x_rows`` (one pointer per sentence), W_q's row j (gate q's column j) starts at
    ``w + (q * GATE_ROWS + j) * w_stride``. Each chunk of x is loaded once for every gate."""
    gate = GATE_ROWS * w_stride
    for k0 in range(0, K, BLOCK_K):
        x, tile, mask = _input_chunk(x_rows, live, K, w, w_stride, j, j_mask, k0, BLOCK_K)
        acc_0 = _accumulate(acc_0, x, tile, mask, PRECISION)
        acc_1 = _accumulate(acc_1, x, tile + gate, mask, PRECISION)
        acc_2 = _accumulate(acc_2, x, tile + 2 * gate, mask, PRECISION)
        acc_3 = _accumulate(acc_3, x, tile + 3 * gate, mask, PRECISION)
        if GATES == 5:
            acc_4 = _accumulate(acc_4, x, tile + 4 * gate, mask, PRECISION)
    return acc_0, acc_1, acc_2, acc_3, acc_4


def _move(
    l_shift, l_reduce, actions, stack, records, tops, lengths, num_steps, t, b, live, B, N, RS,
    buffer_row, second_row, top_row,
):  # fmt: skip
    """The greedy policy's move at step t and the stack after it: the parser's argmax
    (``policies.Greedy``: ties and NaN as ``torch.argmax`` takes them) through the legal-move
    rule (``policies.forced_moves``: fewer than two items must SHIFT, an empty buffer must
    REDUCE), PAD once a sentence has taken its 2n - 1 steps. Writes step t's action and record
    and step t + 1's stack and tops."""
    step = (t * B + b).to(tl.int64)
    cur = tl.load(stack + step * 3, mask=live, other=-1)
    depth = tl.load(stack + step * 3 + 1, mask=live, other=0)
    shifted = tl.load(stack + step * 3 + 2, mask=live, other=0)
    length = tl.load(lengths + b, mask=live, other=0)
    must_shift = depth < 2
    must_reduce = (shifted >= length) & ~must_shift
    prefers_reduce = (l_reduce > l_shift) | ((l_reduce != l_reduce) & (l_shift == l_shift))
    action = tl.where(must_shift, _SHIFT, tl.where(must_reduce | prefers_reduce, _REDUCE, _SHIFT))
    action = tl.where(t < tl.load(num_steps + b, mask=live, other=0), action, _PAD)
    tl.store(actions + step, action, mask=live)
    shift, reduce = action == _SHIFT, action == _REDUCE
    # A REDUCE's node lies on what was below the stack second: the third item's record and row.
    second = tl.load(records + (cur * B + b) * 2 + 1, mask=live & (cur >= 0), other=-1)
    third = tl.load(records + (second * B + b) * 2 + 1, mask=live & (second >= 0), other=-1)
    base = b * RS
    third_row = tl.load(records + (third * B + b) * 2, mask=live & (third >= 0), other=0)
    third_row = tl.where(third >= 0, third_row, base)
    pushed = tl.where(shift, buffer_row, tl.where(reduce, base + 1 + N + t, top_row))
    moved = shift | reduce
    tl.store(records + step * 2, tl.where(moved, pushed, base), mask=live)
    tl.store(records + step * 2 + 1, tl.where(shift, cur, tl.where(reduce, third, -1)), mask=live)
    shifted += shift.to(tl.int32)
    after = step + B
    tl.store(stack + after * 3, tl.where(moved, t, cur), mask=live)
    tl.store(stack + after * 3 + 1, depth + shift.to(tl.int32) - reduce.to(tl.int32), mask=live)
    tl.store(stack + after * 3 + 2, shifted, mask=live)
    tl.store(tops + after * 3, tl.where(shifted < length, base + 1 + shifted, base), mask=live)
    second_after = tl.where(shift, top_row, tl.where(reduce, third_row, second_row))
    tl.store(tops + after * 3 + 1, second_after, mask=live)
    tl.store(tops + after * 3 + 2, pushed, mask=live)


def _parse(
    h_state, wc, bc, logits, actions, stack, records, tops, lengths, num_steps, t, b, live, B,
    N, RS, TRK, buffer_row, second_row, top_row,
    GREEDY: tl.constexpr, BLOCK_TRK: tl.constexpr,
):  # fmt: skip
    """The parser's SHIFT and REDUCE logits from the tracker's new state (eq. 5), and with
    ``GREEDY`` its move (:func:`_move`)."""
    step = (t * B + b).to(tl.int64)
    jj = tl.arange(0, BLOCK_TRK)
    jj_mask = jj < TRK
    h = tl.load(
        h_state + (step + B)[:, None] * TRK + jj[None, :],
        mask=live[:, None] & jj_mask[None, :],
        other=0.0,
    )
    l_shift = tl.sum(h * tl.load(wc + jj, mask=jj_mask, other=0.0)[None, :], axis=1)
    l_reduce = tl.sum(h * tl.load(wc + TRK + jj, mask=jj_mask, other=0.0)[None, :], axis=1)
    l_shift += tl.load(bc)
    l_reduce += tl.load(bc + 1)
    tl.store(logits + step * 2, l_shift, mask=live)
    tl.store(logits + step * 2 + 1, l_reduce, mask=live)
    if GREEDY:
        _move(
            l_shift, l_reduce, actions, stack, records, tops, lengths, num_steps, t, b, live,
            B, N, RS, buffer_row, second_row, top_row,
        )  # fmt: skip


def _backpropagate(
    acc, grad, q, w_tile, w_gate, w_mask, kept, kept_gate, keep_mask, KEEP, PRECISION: tl.constexpr,
):  # fmt: skip
    """acc + grad @ (gate q's tile of W^T) for gate q's pre-activation gradient ``grad``, which
    ``KEEP`` (the first program of a row block) also stores, for the weights' gradient. One
    gate at a time, so that few tiles are live at once (no register spills)."""
    if KEEP:
        tl.store(kept + q * kept_gate, grad, mask=keep_mask)
    return _accumulate(acc, grad, w_tile + q * w_gate, w_mask, PRECISION)


def _tracker_state_grads(
    c_state, gates, logit_grads, wc, extra_grad, carry_h, carry_c, t, b, step, cols, here, B,
    TRK, HAS_PARSER: tl.constexpr, READS_TRACKER: tl.constexpr,
):  # fmt: skip
    """dL/dh and dL/dc of the tracker's state after step t, columns ``cols``: dL/dh is what
    the parser's logits, the composition's extra input and step t + 1 (the carry) sent back;
    dL/dc the carry's plus what reaches c through h = o tanh(c). Also o and tanh(c)."""
    later = ((t + 1) % 2 * B + b).to(tl.int64)[:, None] * TRK + cols
    dh = tl.load(carry_h + later, mask=here, other=0.0)
    if HAS_PARSER:
        live = b < B
        for move in tl.static_range(2):
            logit_grad = tl.load(logit_grads + step * 2 + move, mask=live, other=0.0)
            dh += logit_grad[:, None] * tl.load(wc + move * TRK + cols, mask=here, other=0.0)
    if READS_TRACKER:
        dh += tl.load(extra_grad + b[:, None] * TRK + cols, mask=here, other=0.0)
    o = tl.load(gates + step[:, None] * (4 * TRK) + 3 * TRK + cols, mask=here, other=0.0)
    state = step[:, None] * TRK + cols
    tanh_c = _tanh(tl.load(c_state + state + B * TRK, mask=here, other=0.0))
    cell = dh * o * (1.0 - tanh_c * tanh_c) + tl.load(carry_c + later, mask=here, other=0.0)
    return dh, cell, o, tanh_c


# ----------------------------------------------------------------------------------------------
# Kernels: forward.
# ----------------------------------------------------------------------------------------------


def tracker_step(
    nodes, word_part, w_ih, w_hh, h_state, c_state, gates, tops, t, B, N, D, TRK, RS,
    KEEP: tl.constexpr, BLOCK_B: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_K: tl.constexpr,
    PRECISION: tl.constexpr,
):  # fmt: skip
    """Step t of the tracking LSTM for a block of sentences and of the tracker's columns:
    gates = W_ih [buffer top; stack top; stack second] + W_hh h + biases, the buffer top's
    share (and the biases) looked up in ``word_part``, made once per word before the first
    step (the empty buffer's row, the last, holds the biases alone)."""
    b, j, live, j_mask, here, step = _block(t, B, TRK, BLOCK_B, BLOCK_T)
    buffer_row = tl.load(tops + step * 3, mask=live, other=0)
    second_row = tl.load(tops + step * 3 + 1, mask=live, other=0).to(tl.int64)
    top_row = tl.load(tops + step * 3 + 2, mask=live, other=0).to(tl.int64)
    base = b * RS
    word = tl.where(buffer_row == base, B * N, b * N + buffer_row - base - 1).to(tl.int64)
    part = word_part + word[:, None] * (4 * TRK) + j[None, :]
    acc_i = tl.load(part, mask=here, other=0.0)
    acc_f = tl.load(part + TRK, mask=here, other=0.0)
    acc_g = tl.load(part + 2 * TRK, mask=here, other=0.0)
    acc_o = tl.load(part + 3 * TRK, mask=here, other=0.0)
    # W_ih's columns: buffer top 0..D, stack top D..2D, stack second 2D..3D.
    acc_i, acc_f, acc_g, acc_o, _ = _gates(
        acc_i, acc_f, acc_g, acc_o, acc_o, nodes + second_row * (2 * D), live, D, w_ih + 2 * D,
        3 * D, j, j_mask, TRK, 4, BLOCK_K, PRECISION,
    )  # fmt: skip
    acc_i, acc_f, acc_g, acc_o, _ = _gates(
        acc_i, acc_f, acc_g, acc_o, acc_o, nodes + top_row * (2 * D), live, D, w_ih + D, 3 * D,
        j, j_mask, TRK, 4, BLOCK_K, PRECISION,
    )  # fmt: skip
    acc_i, acc_f, acc_g, acc_o, _ = _gates(
        acc_i, acc_f, acc_g, acc_o, acc_o, h_state + step * TRK, live, TRK, w_hh, TRK, j,
        j_mask, TRK, 4, BLOCK_K, PRECISION,
    )  # fmt: skip
    i = tl.sigmoid(acc_i)
    f = tl.sigmoid(acc_f)
    g = _tanh(acc_g)
    o = tl.sigmoid(acc_o)
    state = step[:, None] * TRK + j[None, :]
    c = f * tl.load(c_state + state, mask=here, other=0.0) + i * g
    tl.store(c_state + state + B * TRK, c, mask=here)
    tl.store(h_state + state + B * TRK, o * _tanh(c), mask=here)
    if KEEP:
        kept = gates + step[:, None] * (4 * TRK) + j[None, :]
        tl.store(kept, i, mask=here)
        tl.store(kept + TRK, f, mask=here)
        tl.store(kept + 2 * TRK, g, mask=here)
        tl.store(kept + 3 * TRK, o, mask=here)


def compose_step(
    nodes, w, bias, h_state, gates, tops, t, B, N, D, E, RS, TRK,
    wc, bc, logits, actions, stack, records, lengths, num_steps,
    KEEP: tl.constexpr, PARSER: tl.constexpr, GREEDY: tl.constexpr, BLOCK_TRK: tl.constexpr,
    BLOCK_B: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """Step t's composition (eq. 1-3) of every sentence's stack second (left child) and top
    (right), with the tracker's new state as the extra input when E > 0, for a block of
    sentences and of the D columns, written to the sentence's row for step t. Every sentence
    is composed at every step (static shapes); only a REDUCE pushes the row. The first
    column of programs then runs the parser (``PARSER``: :func:`_parse`)."""
    b, j, live, j_mask, here, step = _block(t, B, D, BLOCK_B, BLOCK_D)
    buffer_row = tl.load(tops + step * 3, mask=live, other=0)
    second_row = tl.load(tops + step * 3 + 1, mask=live, other=0)
    top_row = tl.load(tops + step * 3 + 2, mask=live, other=0)
    second = nodes + second_row.to(tl.int64) * (2 * D)
    top = nodes + top_row.to(tl.int64) * (2 * D)
    K = 2 * D + E
    zeros = tl.zeros((BLOCK_B, BLOCK_D), dtype=nodes.dtype.element_ty)
    acc_i = zeros + tl.load(bias + j, mask=j_mask, other=0.0)[None, :]
    acc_l = zeros + tl.load(bias + D + j, mask=j_mask, other=0.0)[None, :]
    acc_r = zeros + tl.load(bias + 2 * D + j, mask=j_mask, other=0.0)[None, :]
    acc_o = zeros + tl.load(bias + 3 * D + j, mask=j_mask, other=0.0)[None, :]
    acc_g = zeros + tl.load(bias + 4 * D + j, mask=j_mask, other=0.0)[None, :]
    acc_i, acc_l, acc_r, acc_o, acc_g = _gates(
        acc_i, acc_l, acc_r, acc_o, acc_g, second, live, D, w, K, j, j_mask, D, 5, BLOCK_K,
        PRECISION,
    )  # fmt: skip
    acc_i, acc_l, acc_r, acc_o, acc_g = _gates(
        acc_i, acc_l, acc_r, acc_o, acc_g, top, live, D, w + D, K, j, j_mask, D, 5, BLOCK_K,
        PRECISION,
    )  # fmt: skip
    # The extra input (the tracker's new state), when E > 0.
    acc_i, acc_l, acc_r, acc_o, acc_g = _gates(
        acc_i, acc_l, acc_r, acc_o, acc_g, h_state + (step + B) * E, live, E, w + 2 * D, K, j,
        j_mask, D, 5, BLOCK_K, PRECISION,
    )  # fmt: skip
    i, f_left, f_right = tl.sigmoid(acc_i), tl.sigmoid(acc_l), tl.sigmoid(acc_r)
    o, g = tl.sigmoid(acc_o), _tanh(acc_g)
    cols = j[None, :]
    c = f_left * tl.load(second[:, None] + D + cols, mask=here, other=0.0)
    c += f_right * tl.load(top[:, None] + D + cols, mask=here, other=0.0)
    c += i * g
    new = nodes + (b * RS + 1 + N + t).to(tl.int64)[:, None] * (2 * D) + cols
    tl.store(new, o * _tanh(c), mask=here)
    tl.store(new + D, c, mask=here)
    if KEEP:
        kept = gates + step[:, None] * (5 * D) + cols
        tl.store(kept, i, mask=here)
        tl.store(kept + D, f_left, mask=here)
        tl.store(kept + 2 * D, f_right, mask=here)
        tl.store(kept + 3 * D, o, mask=here)
        tl.store(kept + 4 * D, g, mask=here)
    if PARSER:
        if tl.program_id(1) == 0:
            _parse(
                h_state, wc, bc, logits, actions, stack, records, tops, lengths, num_steps, t,
                b, live, B, N, RS, TRK, buffer_row, second_row, top_row, GREEDY, BLOCK_TRK,
            )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Kernels: backward, step t after step t + 1.
# ----------------------------------------------------------------------------------------------


def compose_backward(
    nodes, grads, w, gates, gate_grads, extra_grad, tops, actions, t, B, N, D, E, RS,
    BLOCK_B: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """Step t's composition, backward, for the sentences that REDUCEd: G = dL/d(gates) from
    the node's gradient row, then G W for a block of the inputs' columns: the left child's h
    (programs of segment 0), the right child's (1), the extra input's (2, into ``extra_grad``
    for the tracker's backward). G is recomputed for every K-chunk from the kept gates, so
    the product needs no second launch; the first program keeps G (for the weights' gradient
    after the last step) and sends dL/dc to the children's c."""
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    live = b < B
    step = (t * B + b).to(tl.int64)
    reduces = live & (tl.load(actions + step, mask=live, other=_PAD) == _REDUCE)
    second_row = tl.load(tops + step * 3 + 1, mask=live, other=0).to(tl.int64)
    top_row = tl.load(tops + step * 3 + 2, mask=live, other=0).to(tl.int64)
    new_row = (b * RS + 1 + N + t).to(tl.int64)
    pid = tl.program_id(1)
    blocks = tl.cdiv(D, BLOCK_N)
    segment = tl.minimum(pid // blocks, 2)
    n = (pid - segment * blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = n < tl.where(segment == 2, E, D)
    K = 2 * D + E
    acc = tl.zeros((BLOCK_B, BLOCK_N), dtype=nodes.dtype.element_ty)
    first = pid == 0
    for j0 in range(0, D, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        j_mask = j < D
        here = reduces[:, None] & j_mask[None, :]
        every = live[:, None] & j_mask[None, :]
        cols = j[None, :]
        kept = gates + step[:, None] * (5 * D) + cols
        out = gate_grads + step[:, None] * (5 * D) + cols
        # (BLOCK_J, BLOCK_N) of W^T: gate q's rows q D + j, the inputs' columns of the block.
        tile = w + j[:, None] * K + (segment * D + n)[None, :]
        mask = j_mask[:, None] & n_mask[None, :]
        # c = f_l c_l + f_r c_r + i g, h = o tanh(c): dL/dc, then each gate's gradient.
        node = new_row[:, None] * (2 * D) + cols
        dh = tl.load(grads + node, mask=here, other=0.0)
        o = tl.load(kept + 3 * D, mask=here, other=0.0)
        tanh_c = _tanh(tl.load(nodes + node + D, mask=here, other=0.0))
        cell = dh * o * (1.0 - tanh_c * tanh_c) + tl.load(grads + node + D, mask=here, other=0.0)
        grad_o = dh * tanh_c * o * (1.0 - o)
        acc = _backpropagate(acc, grad_o, 3, tile, D * K, mask, out, D, every, first, PRECISION)
        i = tl.load(kept, mask=here, other=0.0)
        g = tl.load(kept + 4 * D, mask=here, other=0.0)
        grad_i = cell * g * i * (1.0 - i)
        acc = _backpropagate(acc, grad_i, 0, tile, D * K, mask, out, D, every, first, PRECISION)
        grad_g = cell * i * (1.0 - g * g)
        acc = _backpropagate(acc, grad_g, 4, tile, D * K, mask, out, D, every, first, PRECISION)
        for side in tl.static_range(2):  # the left child (stack second), then the right (top)
            child = (second_row if side == 0 else top_row)[:, None] * (2 * D) + D + cols
            f = tl.load(kept + (1 + side) * D, mask=here, other=0.0)
            grad_f = cell * tl.load(nodes + child, mask=here, other=0.0) * f * (1.0 - f)
            acc = _backpropagate(
                acc, grad_f, 1 + side, tile, D * K, mask, out, D, every, first, PRECISION
            )
            if first:  # the child's dL/dc
                child_grad = tl.load(grads + child, mask=here, other=0.0) + cell * f
                tl.store(grads + child, child_grad, mask=here)
    if segment == 2:
        out = extra_grad + b[:, None] * E + n[None, :]
        tl.store(out, acc, mask=live[:, None] & n_mask[None, :])
    else:
        rows = tl.where(segment == 0, second_row, top_row)
        out = grads + rows[:, None] * (2 * D) + n[None, :]
        mask = reduces[:, None] & n_mask[None, :]
        tl.store(out, tl.load(out, mask=mask, other=0.0) + acc, mask=mask)


def tracker_backward(
    grads, w_ih, w_hh, wc, c_state, gates, gate_grads, logit_grads, extra_grad, carry_h,
    carry_c, tops, t, B, D, TRK, RS,
    HAS_PARSER: tl.constexpr, READS_TRACKER: tl.constexpr, TRAINS_NODES: tl.constexpr,
    BLOCK_B: tl.constexpr, BLOCK_J: tl.constexpr, BLOCK_N: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """Step t's tracker, backward: G = dL/d(gates) (:func:`_tracker_state_grads`), then G W for
    a block of the inputs' columns: the stack second's h (segment 0) and top's (1), added into
    their rows' gradient (``TRAINS_NODES``; else those segments are not launched), and the
    previous h (segment 2), the carry to step t - 1. The buffer top's share, a word's, is
    summed over the steps after the last (its rows repeat across steps). G recomputed per
    K-chunk as in :func:`compose_backward`; the first program keeps G and dL/dc's carry."""
    b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    live = b < B
    step = (t * B + b).to(tl.int64)
    pid = tl.program_id(1)
    if TRAINS_NODES:
        node_blocks = tl.cdiv(D, BLOCK_N)
        segment = tl.where(pid < node_blocks, 0, tl.where(pid < 2 * node_blocks, 1, 2))
        n = (pid - segment * node_blocks) * BLOCK_N + tl.arange(0, BLOCK_N)
    else:
        segment = 2
        n = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    n_mask = n < tl.where(segment == 2, TRK, D)
    # W's columns of the block: W_ih's stack second (2D + n), stack top (D + n), or W_hh's.
    w_cols = tl.where(segment == 2, w_hh + n, w_ih + (2 - segment) * D + n)
    w_stride = tl.where(segment == 2, TRK, 3 * D)
    now = (t % 2 * B + b).to(tl.int64)[:, None] * TRK
    acc = tl.zeros((BLOCK_B, BLOCK_N), dtype=c_state.dtype.element_ty)
    first = pid == 0
    for j0 in range(0, TRK, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        j_mask = j < TRK
        here = live[:, None] & j_mask[None, :]
        cols = j[None, :]
        kept = gates + step[:, None] * (4 * TRK) + cols
        out = gate_grads + step[:, None] * (4 * TRK) + cols
        tile = w_cols[None, :] + j[:, None] * w_stride
        mask = j_mask[:, None] & n_mask[None, :]
        gate = TRK * w_stride
        # c = f c_prev + i g, h = o tanh(c): the state's gradients, then each gate's.
        dh, cell, o, tanh_c = _tracker_state_grads(
            c_state, gates, logit_grads, wc, extra_grad, carry_h, carry_c, t, b, step, cols,
            here, B, TRK, HAS_PARSER, READS_TRACKER,
        )  # fmt: skip
        grad_o = dh * tanh_c * o * (1.0 - o)
        acc = _backpropagate(acc, grad_o, 3, tile, gate, mask, out, TRK, here, first, PRECISION)
        i = tl.load(kept, mask=here, other=0.0)
        g = tl.load(kept + 2 * TRK, mask=here, other=0.0)
        grad_i = cell * g * i * (1.0 - i)
        acc = _backpropagate(acc, grad_i, 0, tile, gate, mask, out, TRK, here, first, PRECISION)
        grad_g = cell * i * (1.0 - g * g)
        acc = _backpropagate(acc, grad_g, 2, tile, gate, mask, out, TRK, here, first, PRECISION)
        f = tl.load(kept + TRK, mask=here, other=0.0)
        c_prev = tl.load(c_state + step[:, None] * TRK + cols, mask=here, other=0.0)
        grad_f = cell * c_prev * f * (1.0 - f)
        acc = _backpropagate(acc, grad_f, 1, tile, gate, mask, out, TRK, here, first, PRECISION)
        if first:  # dL/dc of the previous step's c
            tl.store(carry_c + now + cols, cell * f, mask=here)
    if segment == 2:
        tl.store(carry_h + now + n[None, :], acc, mask=live[:, None] & n_mask[None, :])
    else:
        rows = tl.load(tops + step * 3 + 1 + segment, mask=live, other=0)
        # The zero row (an empty slot) is a constant: its gradient is not kept.
        owned = live & (rows != b * RS)
        out = grads + rows.to(tl.int64)[:, None] * (2 * D) + n[None, :]
        mask = owned[:, None] & n_mask[None, :]
        tl.store(out, tl.load(out, mask=mask, other=0.0) + acc, mask=mask)
