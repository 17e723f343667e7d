"""The fused runner: the static-shape thin stack (``runners/thin_stack.py``) with every step in
Triton kernels (``kernels.py``), forward and backward.

Algorithm 1 as the static-shape path runs it -- every sentence at every step, longest first,
moves of sentences that have ended masked to PAD, nothing read back to the host -- with each
step two kernel launches and no other operation: the tracker's cell (with a tracker), then the
composition written to the tape, the parser's logits and the greedy move. Training adds two
launches a step in reverse order: the composition's backward, then the tracker's. A few
ATen operations before the first step (the stack's plan for given transitions, the tracker's
buffer inputs per word) and after the last (the weights' gradients, one product per weight
over every step's kept gate gradients; the output) make up the rest.

The pass is one autograd function (:class:`_FusedPass`): the words' rows read from the
prepared batch's tape in one op go in, the pass's own tape (words and every step's node) and
the logits come out, and its backward returns the words' and the weights' gradients.
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from spinn_core.batch import PreparedBatch
from spinn_core.compositions import TreeLSTMComposition
from spinn_core.fused import kernels
from spinn_core.fused.refusal import fused_refusal
from spinn_core.output import SpinnOutput
from spinn_core.parts import SpinnParts
from spinn_core.policies import TransitionPolicy
from spinn_core.runners.thin_stack import plan_stack
from spinn_core.tape import add_rows


def run_fused_thin_stack(
    batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy
) -> SpinnOutput:
    """Encodes ``batch`` as ``run_thin_stack`` does on its static-shape path, each step in
    fused kernels. Raises ValueError with :func:`fused_refusal`'s reason for a pass it does
    not implement."""
    reason = fused_refusal(parts, policy, batch.device, batch.inputs.dtype)
    if reason is not None:
        raise ValueError(f"the fused runner cannot run this pass: {reason}")
    layout = _Layout.of(batch, parts, policy)
    rows = layout.base.unsqueeze(1) + 1 + torch.arange(layout.max_tokens, device=batch.device)
    words = batch.tape.read(rows.flatten())
    # Padding words' rows may be unwritten (sparse leaves): zeros, never read through a pointer.
    real = batch.mask.index_select(0, batch.order).flatten().unsqueeze(1)
    words = torch.where(real, words, 0)
    weights = _weights(parts)
    # (Inside an autograd function's forward, grad mode is off: asked here.)
    layout.keep = torch.is_grad_enabled() and any(
        tensor is not None and tensor.requires_grad for tensor in [words] + weights
    )
    nodes, logits, tops, actions = _FusedPass.apply(layout, words, *weights)
    return _output(batch, parts, policy, layout, nodes, logits, tops, actions)


def _weights(parts: SpinnParts) -> List[Optional[torch.Tensor]]:
    """The parameters the kernels read, in :class:`_FusedPass`'s order (None when absent)."""
    compose, tracker = parts.compose, parts.tracker
    assert isinstance(compose, TreeLSTMComposition)  # fused_refusal: the TreeLSTM only
    weights: List[Optional[torch.Tensor]] = [compose.linear.weight, compose.linear.bias]
    cell = tracker.cell if tracker is not None else None
    classifier = tracker.transition_classifier if tracker is not None else None
    weights += [cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh] if cell else [None] * 4
    weights += [classifier.weight, classifier.bias] if classifier else [None] * 2
    return weights


@dataclass
class _Layout:
    """One pass's shapes, flags and stack plan; sentences in the batch's longest-first order,
    sentence i's tape block at ``i * rows_per_sentence`` (``batch.py``)."""

    batch_size: int
    max_tokens: int
    steps: int
    hidden: int
    tracking: int  # 0 without a tracker
    extra: int  # the composition's extra input: the tracker's state, or nothing
    has_parser: bool
    greedy: bool
    trains_nodes: bool  # whether the tracker's reads send gradients into the nodes
    base: torch.Tensor  # (B,) each sentence's zero row
    lengths: torch.Tensor  # (B,) int32
    num_steps: torch.Tensor  # (B,) int32
    # (S + 1, B, 3) int32: rows of the buffer top, stack second and top before each step,
    # planned for given transitions, made step by step for greedy ones (first step's here).
    tops: torch.Tensor
    actions: torch.Tensor  # (S, B) int32: the given moves, or filled in by greedy steps
    final: Optional[torch.Tensor]  # (B,) the stack top after the last step, when planned
    pushed: Optional[torch.Tensor]  # (S, B) the row each step pushes, when planned
    keep: bool = False  # whether the forward keeps what the backward needs

    @property
    def rows_per_sentence(self) -> int:
        return 1 + self.max_tokens + self.steps

    @staticmethod
    def of(batch: PreparedBatch, parts: SpinnParts, policy: TransitionPolicy) -> "_Layout":
        order = batch.order
        steps, batch_size = batch.total_steps, batch.batch_size
        base = torch.arange(batch_size, device=batch.device) * batch.rows_per_sentence
        lengths = batch.lengths.index_select(0, order)
        tracker = parts.tracker
        tracking = tracker.tracking_dim if tracker is not None else 0
        tops = torch.zeros(steps + 1, batch_size, 3, dtype=torch.int32, device=batch.device)
        final = pushed = None
        if policy.follows_given:
            assert batch.transitions is not None  # follows_given: the batch always has them
            given = batch.transitions.index_select(0, order)
            planned, pushed, final = plan_stack(given, lengths, base, batch.max_tokens)
            tops[:steps] = planned
            actions = given.t().to(torch.int32)
        else:
            # Before the first step: the first word (if any) on the buffer, the stack empty.
            tops += base.unsqueeze(1).to(torch.int32)
            tops[0, :, 0] += (lengths > 0).to(torch.int32)
            actions = tops.new_empty(steps, batch_size)
        return _Layout(
            batch_size=batch_size,
            max_tokens=batch.max_tokens,
            steps=steps,
            hidden=parts.compose.hidden_dim,
            tracking=tracking,
            extra=parts.compose.extra_dim,
            has_parser=parts.has_parser,
            greedy=not policy.follows_given,
            trains_nodes=parts.parser_trains_nodes,
            base=base,
            lengths=lengths.to(torch.int32),
            num_steps=batch.num_steps.index_select(0, order).to(torch.int32),
            tops=tops,
            actions=actions.contiguous(),
            final=final,
            pushed=pushed,
        )

    def grid(self, block_b: int, columns: int, block: int) -> Tuple[int, int]:
        return (-(-self.batch_size // block_b), -(-columns // block))


def _precision(like: torch.Tensor) -> str:
    """``tl.dot``'s input precision: TF32 on a GPU when torch's own float32 products may use
    it (``torch.set_float32_matmul_precision``), so that both paths follow one switch; IEEE
    otherwise (float64, the interpreter, torch's default "highest")."""
    tf32 = like.dtype == torch.float32 and like.is_cuda
    return "tf32" if tf32 and torch.get_float32_matmul_precision() != "highest" else "ieee"


class _FusedPass(torch.autograd.Function):
    """The whole pass: words' rows (B N, 2D) and the weights in; the pass's tape (B RS, 2D),
    the logits (S, B, 2) (empty without a parser), the tops and the moves (int) out."""

    @staticmethod
    def forward(ctx, layout: _Layout, words, *weights):
        sweep = _Forward(layout, words, weights, layout.keep)
        sweep.run()
        ctx.mark_non_differentiable(sweep.tops, sweep.actions)
        ctx.layout, ctx.sweep = layout, sweep.kept()
        ctx.save_for_backward(sweep.nodes, *weights)
        return sweep.nodes, sweep.logits, sweep.tops, sweep.actions

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_nodes, grad_logits, _grad_tops, _grad_actions):
        nodes, *weights = ctx.saved_tensors
        backward = _Backward(ctx.layout, ctx.sweep, nodes, weights, grad_nodes, grad_logits)
        backward.run()
        return (None, backward.word_grads()) + tuple(
            grad if needed else None
            for grad, needed in zip(backward.weight_grads(), ctx.needs_input_grad[2:])
        )


class _Forward:
    """The forward sweep: buffers for every step, then two launches a step."""

    def __init__(self, layout: _Layout, words, weights, keep: bool) -> None:
        self.layout, self.keep = layout, keep
        # The kernels address the weights' rows by their widths: contiguous ones.
        weights = [w.contiguous() if w is not None else None for w in weights]
        (self.w, self.bias, w_ih, w_hh, b_ih, b_hh, wc, bc) = weights
        B, N, S, D, TRK = (
            layout.batch_size, layout.max_tokens, layout.steps, layout.hidden, layout.tracking,
        )  # fmt: skip
        like = words
        placeholder = like.new_zeros(1)
        self.nodes = like.new_empty(B, layout.rows_per_sentence, 2 * D)
        self.nodes[:, 0] = 0
        self.nodes[:, 1 : N + 1] = words.view(B, N, 2 * D)
        self.nodes = self.nodes.view(-1, 2 * D)
        self.tops, self.actions = layout.tops, layout.actions
        self.h_state = like.new_zeros(S + 1, B, TRK) if TRK else placeholder
        self.c_state = like.new_zeros(S + 1, B, TRK) if TRK else placeholder
        self.w_ih, self.w_hh = (w_ih, w_hh) if TRK else (placeholder, placeholder)
        if TRK:
            # The buffer top's share of the tracker's input product, and both biases, per word
            # (the last row, the empty buffer's: the biases alone), as ``cells.TrackerLoop``.
            bias = b_ih + b_hh
            part = torch.addmm(bias, words[:, :D], w_ih[:, :D].t())
            self.word_part = torch.cat([part, bias.unsqueeze(0)])
        else:
            self.word_part = placeholder
        self.tracker_gates = like.new_empty(S, B, 4 * TRK) if keep and TRK else placeholder
        self.compose_gates = like.new_empty(S, B, 5 * D) if keep else placeholder
        self.logits = like.new_zeros(S, B, 2) if layout.has_parser else like.new_zeros(0)
        self.wc, self.bc = (wc, bc) if layout.has_parser else (placeholder, placeholder)
        greedy = layout.greedy
        self.stack = self.tops.new_zeros(S + 1, B, 3) if greedy else self.tops
        if greedy:
            self.stack[0, :, 0] = -1  # no record on the stack
        self.records = self.tops.new_empty(S, B, 2) if greedy else self.tops
        self.precision = _precision(like)

    def run(self) -> None:
        layout = self.layout
        B, N, D, TRK = layout.batch_size, layout.max_tokens, layout.hidden, layout.tracking
        RS = layout.rows_per_sentence
        tracker, compose = kernels.BLOCKS["tracker_step"], kernels.BLOCKS["compose_step"]
        tracker_grid = layout.grid(tracker["BLOCK_B"], TRK, tracker["BLOCK_T"])
        compose_grid = layout.grid(compose["BLOCK_B"], D, compose["BLOCK_D"])
        # The parser's block holds all TRK columns of the tracker's state (unused without one).
        parser_block = max(16, 1 << (TRK - 1).bit_length()) if layout.has_parser else 16
        parser = {"PARSER": layout.has_parser, "GREEDY": layout.greedy, "BLOCK_TRK": parser_block}
        for t in range(layout.steps):
            if TRK:
                kernels.launch(
                    "tracker_step", tracker_grid, self.nodes, self.word_part, self.w_ih,
                    self.w_hh, self.h_state, self.c_state, self.tracker_gates, self.tops, t, B,
                    N, D, TRK, RS, KEEP=self.keep, PRECISION=self.precision,
                )  # fmt: skip
            kernels.launch(
                "compose_step", compose_grid, self.nodes, self.w, self.bias, self.h_state,
                self.compose_gates, self.tops, t, B, N, D, layout.extra, RS, TRK, self.wc,
                self.bc, self.logits, self.actions, self.stack, self.records, layout.lengths,
                layout.num_steps, KEEP=self.keep, PRECISION=self.precision, **parser,
            )  # fmt: skip

    def kept(self) -> "_Kept":
        return _Kept(
            self.tops, self.actions, self.h_state, self.c_state, self.tracker_gates,
            self.compose_gates, self.precision,
        )  # fmt: skip


@dataclass
class _Kept:
    """What the forward sweep leaves for the backward (besides the tape and the weights)."""

    tops: torch.Tensor
    actions: torch.Tensor
    h_state: torch.Tensor
    c_state: torch.Tensor
    tracker_gates: torch.Tensor
    compose_gates: torch.Tensor
    precision: str


class _Backward:
    """The backward sweep, step S - 1 down to 0, then the weights' gradients: one product per
    weight over every step's kept gate gradients and inputs (``loop_linear.LoopLinear``'s idea)."""

    def __init__(self, layout: _Layout, kept: _Kept, nodes, weights, grad_nodes, grad_logits):
        self.layout, self.kept, self.nodes = layout, kept, nodes
        weights = [w.contiguous() if w is not None else None for w in weights]
        (self.w, self.bias, self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.wc, _) = weights
        B, S, D, TRK = layout.batch_size, layout.steps, layout.hidden, layout.tracking
        placeholder = nodes.new_zeros(1)
        self.grads = (
            grad_nodes.clone(memory_format=torch.contiguous_format)
            if grad_nodes is not None
            else torch.zeros_like(nodes)
        )
        self.compose_grads = nodes.new_empty(S, B, 5 * D)
        self.extra_grad = nodes.new_empty(B, layout.extra) if layout.extra else placeholder
        self.tracker_grads = nodes.new_empty(S, B, 4 * TRK) if TRK else placeholder
        self.carry_h = nodes.new_zeros(2, B, TRK) if TRK else placeholder
        self.carry_c = nodes.new_zeros(2, B, TRK) if TRK else placeholder
        self.logit_grads = placeholder
        if layout.has_parser:
            self.logit_grads = (
                grad_logits.contiguous() if grad_logits is not None else nodes.new_zeros(S, B, 2)
            )
        self.placeholder = placeholder

    def run(self) -> None:
        layout, kept = self.layout, self.kept
        B, N, D, TRK = layout.batch_size, layout.max_tokens, layout.hidden, layout.tracking
        RS, E = layout.rows_per_sentence, layout.extra
        compose, tracker = kernels.BLOCKS["compose_backward"], kernels.BLOCKS["tracker_backward"]
        # Programs over the inputs' columns: left child's h, right child's h, extra input.
        compose_blocks = 2 * -(-D // compose["BLOCK_N"]) + -(-E // compose["BLOCK_N"])
        compose_grid = layout.grid(compose["BLOCK_B"], compose_blocks, 1)
        # Stack second's and top's h (when the tracker trains the nodes), previous h.
        node_blocks = -(-D // tracker["BLOCK_N"]) if layout.trains_nodes else 0
        tracker_grid = layout.grid(
            tracker["BLOCK_B"], 2 * node_blocks + -(-TRK // tracker["BLOCK_N"]), 1
        )
        w_ih = self.w_ih if TRK else self.placeholder
        w_hh = self.w_hh if TRK else self.placeholder
        wc = self.wc if layout.has_parser else self.placeholder
        for t in reversed(range(layout.steps)):
            kernels.launch(
                "compose_backward", compose_grid, self.nodes, self.grads, self.w,
                kept.compose_gates, self.compose_grads, self.extra_grad, kept.tops,
                kept.actions, t, B, N, D, E, RS, PRECISION=kept.precision,
            )  # fmt: skip
            if TRK:
                kernels.launch(
                    "tracker_backward", tracker_grid, self.grads, w_ih, w_hh, wc,
                    kept.c_state, kept.tracker_gates, self.tracker_grads, self.logit_grads,
                    self.extra_grad, self.carry_h, self.carry_c, kept.tops, t, B, D, TRK, RS,
                    HAS_PARSER=layout.has_parser, READS_TRACKER=E > 0,
                    TRAINS_NODES=layout.trains_nodes, PRECISION=kept.precision,
                )  # fmt: skip
        if TRK and layout.trains_nodes:
            # The buffer tops' share of the tracker's gradient, summed per row (a word is the
            # buffer top for several steps); the empty buffer's row, a zero row, is dropped.
            words = self.tracker_grads.view(-1, 4 * TRK).mm(self.w_ih[:, :D])
            add_rows(self.grads, self._rows(0), words, columns=D)

    def _rows(self, slot: int) -> torch.Tensor:
        """Every step's row of the buffer top (slot 0), stack second (1) or top (2), (S B,)."""
        return self.kept.tops[: self.layout.steps, :, slot].flatten().long()

    def _hidden(self, slot: int) -> torch.Tensor:
        return self.nodes.index_select(0, self._rows(slot))[:, : self.layout.hidden]

    def word_grads(self) -> torch.Tensor:
        layout = self.layout
        grads = self.grads.view(layout.batch_size, layout.rows_per_sentence, -1)
        return grads[:, 1 : layout.max_tokens + 1].reshape(-1, grads.size(2))

    def weight_grads(self) -> List[Optional[torch.Tensor]]:
        """Gradients of the composition's weight and bias, the tracker cell's weight_ih,
        weight_hh, bias_ih and bias_hh, the parser's weight and bias (None when absent)."""
        layout, kept = self.layout, self.kept
        S, B, D, TRK = layout.steps, layout.batch_size, layout.hidden, layout.tracking
        compose = self.compose_grads.view(S * B, 5 * D)
        inputs = [self._hidden(1), self._hidden(2)]
        if layout.extra:
            inputs.append(kept.h_state[1:].reshape(S * B, TRK))
        grads: List[Optional[torch.Tensor]] = [
            compose.t().mm(torch.cat(inputs, dim=1)),
            compose.sum(dim=0),
        ]
        if not TRK:
            return grads + [None] * 6
        tracker = self.tracker_grads.view(S * B, 4 * TRK)
        # weight_ih's columns: buffer top, stack top, stack second.
        cell_inputs = torch.cat([self._hidden(0), self._hidden(2), self._hidden(1)], dim=1)
        bias = tracker.sum(dim=0)
        grads += [
            tracker.t().mm(cell_inputs),
            tracker.t().mm(kept.h_state[:S].reshape(S * B, TRK)),
            bias,
            bias.clone(),
        ]
        if not layout.has_parser:
            return grads + [None, None]
        logits = self.logit_grads.view(S * B, 2)
        return grads + [logits.t().mm(kept.h_state[1:].reshape(S * B, TRK)), logits.sum(dim=0)]


def _output(
    batch: PreparedBatch,
    parts: SpinnParts,
    policy: TransitionPolicy,
    layout: _Layout,
    nodes: torch.Tensor,
    logits: torch.Tensor,
    tops: torch.Tensor,
    actions: torch.Tensor,
) -> SpinnOutput:
    """The pass's ``SpinnOutput``, in the batch's order, as ``run_thin_stack`` makes it on its
    static-shape path."""
    rank, S = batch.rank, layout.steps
    hidden = parts.compose.hidden
    active = layout.num_steps.unsqueeze(0) > torch.arange(S, device=batch.device).unsqueeze(1)
    final = layout.final if layout.final is not None else tops[S, :, 2].long()
    output = SpinnOutput(
        sentence=hidden(nodes.index_select(0, final.index_select(0, rank))),
        transitions=actions.t().long().index_select(0, rank),
        mode=policy.mode,
    )
    if layout.has_parser:
        masked = torch.where(active.unsqueeze(2), logits, 0)
        output.transition_logits = masked.transpose(0, 1).index_select(0, rank)
    if batch.return_nodes:
        pushed = layout.pushed
        if pushed is None:
            # Greedy: what each step pushed is its new stack top; zero rows after the end.
            pushed = torch.where(active, tops[1:, :, 2].long(), layout.base.unsqueeze(0))
        rows = pushed.t().index_select(0, rank).flatten()
        output.node_states = nodes.index_select(0, rows).view(batch.batch_size, S, -1)
        output.node_hidden = hidden(output.node_states)
    return output
