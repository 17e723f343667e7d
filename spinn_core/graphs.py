"""CUDA graphs of the encoder's passes: forward and backward captured once per length bucket,
then replayed.

On the static-shape path (``runners/thin_stack.py``, ``runners/soft_stack.py``) a pass reads
nothing back to the host once its batch is checked, and its shapes depend on (B, N, T) alone.
So after :func:`~spinn_core.batch.check_batch` (which reads values back to validate
them), the rest of a pass -- laying the batch out, the loop, the output, and the backward pass
of all that -- is the same sequence of kernels on the same shapes for every batch of one
shape: what a CUDA graph replays, without launching a kernel from Python. :class:`GraphedPasses`
pads each batch to a bucket (the batch to its configured size, the longest sentence to the
next of a few length edges: ``buckets.LENGTH_BUCKETS``), so that a handful of graphs serve a
whole epoch; captures a bucket's graphs the first time a pass meets it
(``torch.cuda.make_graphed_callables``: warm-up passes on a side stream, then forward and
backward captured into one private memory pool; the model's buffers and the CUDA generator's
state are restored afterwards, so capturing changes no result); and replays them after that.
Padding changes no output and no gradient: padded sentences are empty, padded steps are PAD
(``tests/core/test_buckets.py``, float64).

What runs eagerly instead (``GraphedPasses.__call__`` returns None): the CPU; a policy that
does not declare itself replayable (``policy.traits.replayable`` False: Python state from call
to call or values read back, as beam search, PPO's replays, a recording sampler, a policy
written elsewhere whose moves are checked on the host each step); a batch
past the largest bucket; mixed precision with autocast's cache on; and a second pass through
one bucket's graph while the backward pass of the first is still to come (its replay would
overwrite what that backward pass reads). A backward pass through a graph replayed again in
between raises instead of returning wrong gradients. A model that composes level by level
(SPINN-PI-NT's default) is replayed through the step loop instead: the level-wise runner reads
tree heights back to the host, and the step loop computes the same function
(``tests/core/test_levelwise.py``); its eager passes stay level-wise. A policy written
elsewhere that declares itself replayable runs with its moves checked on the device
(``policies.MoveCheckedOnDevice``): its graph also outputs the first wrong move's step, read
once after each replay.
"""

import dataclasses
import weakref
from collections import OrderedDict
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

import torch
from torch import nn

from spinn_core.batch import check_batch, lay_out
from spinn_core.buckets import LENGTH_BUCKETS, batch_bucket, bucket_size, pad_dims
from spinn_core.output import STEP_FIELDS, SpinnOutput
from spinn_core.policies import Given, MoveCheckedOnDevice, TransitionPolicy
from spinn_core.spinn import Spinn, pick_runner
from spinn_core.transitions import PAD

# The output of a bucket's pass that holds a device-checked policy's first wrong move.
FIRST_WRONG = "first_wrong_move"


class BucketPass(nn.Module):
    """One bucket's pass as a graph captures it: the batch laid out (dense leaves) and run on
    the static-shape path, tensors in, a dict of the output's tensors out. ``spinn`` is the
    model (a ``Spinn``; its parameters are this module's); ``total_steps``: the bucket's T."""

    def __init__(
        self,
        spinn: Spinn,
        policy: TransitionPolicy,
        total_steps: int,
        return_nodes: bool,
        inputs_given: Tuple[bool, bool, bool],
    ) -> None:
        super().__init__()
        self.spinn = spinn
        self.policy = policy
        self.total_steps = total_steps
        self.return_nodes = return_nodes
        # Which of (transitions, reduce_types, node_inputs) the forward pass takes.
        self.inputs_given = inputs_given

    def forward(self, inputs: torch.Tensor, mask: torch.Tensor, *given: torch.Tensor):
        present = iter(given)
        transitions, reduce_types, node_inputs = (
            next(present) if flag else None for flag in self.inputs_given
        )
        spinn, policy = self.spinn, self.policy
        batch = lay_out(
            inputs,
            mask,
            spinn.leaves,
            spinn.node_dim,
            self.total_steps,
            transitions,
            follow_given=policy.follows_given,
            reduce_types=reduce_types,
            node_inputs=node_inputs,
            return_nodes=self.return_nodes,
            dense=True,
        )
        parts = dataclasses.replace(spinn.parts(), static_shapes=True)
        # The runner picker's choice, with the step loop in place of the level-wise runner
        # (which reads tree heights back to the host). (Policies that search, the beam
        # runners' own, are not replayable: refused before this.)
        runner = pick_runner(policy, parts, levelwise=False, inputs=inputs)
        output = runner(batch, parts, policy)
        per_step = {name: getattr(output, name) for name in STEP_FIELDS}
        checked = {}
        if isinstance(policy, MoveCheckedOnDevice):
            # Its record of wrong moves, for the caller to read after the replay.
            checked[FIRST_WRONG] = policy.first_wrong
        return {"sentence": output.sentence, **per_step, **checked}


@dataclasses.dataclass
class Bucketed:
    """A batch padded to its bucket: ``module(*args)`` runs its pass; ``steps`` is the number
    of steps of its longest sentence (the output's width once the padding is cut off)."""

    key: Hashable
    module: nn.Module
    args: List[torch.Tensor]
    steps: int


class _Entry:
    """A bucket's pass, graphed or not, and the state of its last replay."""

    def __init__(self, module: nn.Module, memory_bytes: int = 0) -> None:
        self.module = module
        self.memory_bytes = memory_bytes
        self.captured = False
        self.replays = 0
        # The ticket of a forward replay whose backward pass is still to come (held weakly:
        # the replay's autograd graph holds it, and dropping that graph releases it).
        self.pending: Optional["weakref.ref[_Ticket]"] = None

    @property
    def busy(self) -> bool:
        return self.pending is not None and self.pending() is not None


class _Ticket:
    """Held by the autograd graph of one replay: once its backward pass has run, or the graph
    is gone, the bucket's graph may be replayed again."""

    def __init__(self, entry: _Entry) -> None:
        self.entry = entry
        self.replay = entry.replays
        entry.pending = weakref.ref(self)

    def release(self) -> None:
        if self.entry.pending is not None and self.entry.pending() is self:
            self.entry.pending = None


class _ReplayGuard(torch.autograd.Function):
    """The identity on a replay's outputs; its backward pass checks that the graph was not
    replayed again since (which would have overwritten what the backward graph reads)."""

    @staticmethod
    def forward(ctx, ticket: _Ticket, *outputs):
        ctx.ticket = ticket
        return tuple(output.view_as(output) for output in outputs)

    @staticmethod
    def backward(ctx, *grads):
        ticket = ctx.ticket
        if ticket.entry.replays != ticket.replay:
            raise RuntimeError(
                "a CUDA graph of the encoder was replayed again before the backward pass of "
                "an earlier replay: its gradients would be wrong. Run the backward pass of "
                "each training pass before the next pass, or turn cuda_graphs off"
            )
        ticket.release()
        return (None, *grads)


class GraphedPasses:
    """The passes of ``spinn`` (a ``Spinn``) in length buckets, each replayed from a CUDA graph
    (``capture=True``, on CUDA) or run eagerly on the static-shape path (``capture=False``:
    the same padding and path, for checks on any device).

    ``batch_size``: the size every batch is padded to (the data loader's, or twice it for
    premise-hypothesis pairs encoded together); None pads to the next power of two (at least
    8). ``length_edges``: the longest sentence is padded to the first edge at least as long.
    ``max_graphs``: how many buckets' graphs are kept (the least recently used go first, their
    memory with them); each is keyed by its shape and by what the pass does (the policy and its
    settings, training or evaluation, whether gradients are wanted), so a setting annealed
    during training (a temperature, a mixing probability) makes new graphs as it changes.
    """

    def __init__(
        self,
        spinn: Spinn,
        batch_size: Optional[int] = None,
        length_edges: Sequence[int] = LENGTH_BUCKETS,
        capture: bool = True,
        max_graphs: int = 32,
    ) -> None:
        if max_graphs < 1:
            raise ValueError(f"max_graphs must be at least 1, got {max_graphs}")
        self.spinn = spinn
        self.batch_size = batch_size
        self.length_edges = tuple(length_edges)
        self.capture = capture
        self.max_graphs = max_graphs
        self.entries: "OrderedDict[Hashable, _Entry]" = OrderedDict()
        # Passes replayed, passes run eagerly instead (with the reason), buckets captured.
        self.replayed = 0
        self.eager: Dict[str, int] = {}
        self.captures = 0

    def __deepcopy__(self, memo) -> None:
        # A copy of the model captures its own graphs (``GraphedSpinn`` makes them on demand).
        return None

    @property
    def memory_bytes(self) -> int:
        """GPU memory the captured graphs hold (their pools, as reserved at capture)."""
        return sum(entry.memory_bytes for entry in self.entries.values())

    def __call__(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        policy: TransitionPolicy,
        reduce_types: Optional[torch.Tensor] = None,
        node_inputs: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> Optional[SpinnOutput]:
        """The pass through a bucket's graph, or None where it must run eagerly (see the
        module docstring)."""
        bucketed = self.bucket(
            inputs, mask, transitions, policy, reduce_types, node_inputs, return_nodes
        )
        if bucketed is None:
            return None
        entry = self.entries[bucketed.key]
        if entry.busy:
            self._eager("a replay's backward pass is still to come")
            return None
        if self.capture and not entry.captured:
            self._capture(entry, bucketed.args)
        self.entries.move_to_end(bucketed.key)
        outputs = self._run(entry, bucketed.args)
        first_wrong = outputs.pop(FIRST_WRONG, None)
        if isinstance(policy, MoveCheckedOnDevice):
            policy.raise_if_illegal(first_wrong)  # one host read per pass
        return _output(outputs, inputs.size(0), bucketed.steps, policy)

    def bucket(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor],
        policy: TransitionPolicy,
        reduce_types: Optional[torch.Tensor] = None,
        node_inputs: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
    ) -> Optional["Bucketed"]:
        """The batch checked (values read back to the host here) and padded to its bucket,
        with the pass that runs it (``Bucketed.module(*Bucketed.args)``: nothing read back);
        None where the pass must run eagerly."""
        reason = self._refusal(inputs, policy)
        if reason is not None:
            self._eager(reason)
            return None
        transitions, steps = check_batch(
            inputs,
            mask,
            transitions,
            policy.follows_given,
            reduce_types,
            node_inputs,
            full_trees=policy.soft,
            forests=policy.left_padded,
        )
        batch_size, max_tokens = mask.shape
        size = self.batch_size or batch_bucket(batch_size)
        tokens = bucket_size(max_tokens, self.length_edges)
        if steps == 0 or tokens is None or batch_size > size:
            self._eager("empty batch" if steps == 0 else "larger than the largest bucket")
            return None
        total_steps = 2 * tokens - 1
        args = [pad_dims(inputs, (size, tokens), 0), pad_dims(mask.bool(), (size, tokens), False)]
        given = (transitions is not None, reduce_types is not None, node_inputs is not None)
        for tensor, value in ((transitions, PAD), (reduce_types, PAD), (node_inputs, 0)):
            if tensor is not None:
                args.append(pad_dims(tensor, (size, total_steps), value))
        key = self._key(policy, size, tokens, return_nodes, given, args)
        if key not in self.entries:
            while len(self.entries) >= self.max_graphs:
                self.entries.popitem(last=False)
            module = BucketPass(self.spinn, policy, total_steps, return_nodes, given)
            self.entries[key] = _Entry(module)
        return Bucketed(key, self.entries[key].module, args, steps)

    def _refusal(self, inputs: torch.Tensor, policy: TransitionPolicy) -> Optional[str]:
        if self.capture and not inputs.is_cuda:
            return "not on CUDA"
        if not policy.traits.replayable:
            return "policy not replayable (state between calls, or values read back)"
        if self.capture and torch.is_autocast_enabled() and torch.is_autocast_cache_enabled():
            return "autocast cache"
        return None

    def _eager(self, reason: str) -> None:
        """Counts a pass sent to the eager path, by ``reason``."""
        self.eager[reason] = self.eager.get(reason, 0) + 1

    def _key(self, policy, size, tokens, return_nodes, given, args) -> Hashable:
        parameters = list(self.spinn.parameters())
        return (
            repr(policy),
            type(policy),
            type(getattr(policy, "policy", policy)),  # the policy a check wraps
            size,
            tokens,
            return_nodes,
            given,
            self.spinn.training,
            torch.is_grad_enabled(),
            tuple(arg.requires_grad for arg in args),
            tuple((p.data_ptr(), p.requires_grad) for p in parameters),
            tuple(arg.dtype for arg in args),
            torch.is_autocast_enabled(),
        )

    def _capture(self, entry: _Entry, args: List[torch.Tensor]) -> None:
        if not self.capture:
            return
        device = args[0].device
        buffers = [buffer.clone() for buffer in self.spinn.buffers()]
        rng = torch.cuda.get_rng_state(device)
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_reserved(device)
        # The graph's own input buffers (every replay copies its inputs into them): never a
        # caller's tensor, which an unpadded batch would otherwise be.
        static = tuple(arg.detach().clone().requires_grad_(arg.requires_grad) for arg in args)
        torch.cuda.make_graphed_callables(entry.module, static, allow_unused_input=True)
        torch.cuda.synchronize(device)
        entry.memory_bytes = torch.cuda.memory_reserved(device) - before
        # The warm-up and capture passes changed running statistics and drew random numbers:
        # put both back, so that the first replay computes what an eager pass would.
        with torch.no_grad():
            for buffer, saved in zip(self.spinn.buffers(), buffers):
                buffer.copy_(saved)
        torch.cuda.set_rng_state(rng, device)
        entry.captured = True
        self.captures += 1

    def _run(self, entry: _Entry, args: List[torch.Tensor]) -> Dict[str, Optional[torch.Tensor]]:
        outputs = entry.module(*args)
        if not self.capture:
            return outputs
        self.replayed += 1
        entry.replays += 1
        # The next replay overwrites these: the caller gets copies.
        names = [name for name, value in outputs.items() if value is not None]
        values = [outputs[name].clone() for name in names]
        differentiable = [i for i, value in enumerate(values) if value.requires_grad]
        if differentiable:
            ticket = _Ticket(entry)
            guarded = _ReplayGuard.apply(ticket, *(values[i] for i in differentiable))
            for i, value in zip(differentiable, guarded):
                values[i] = value
        return dict(zip(names, values))


class GraphedSpinn:
    """``spinn``'s passes replayed from CUDA graphs where they can be (``GraphedPasses``, made
    on the first pass on CUDA), eager everywhere else: a callable with the keywords of
    ``Spinn.forward`` that wraps the model from outside, through its public API (the model
    knows nothing of graphs). Not a module: the model's parameters stay the model's alone; a
    deep copy wraps the copied model and captures its own graphs."""

    def __init__(
        self,
        spinn: Spinn,
        batch_size: Optional[int] = None,
        length_edges: Sequence[int] = LENGTH_BUCKETS,
    ) -> None:
        self.spinn = spinn
        self.batch_size = batch_size
        self.length_edges = tuple(length_edges)
        # The graphs captured so far (None until a pass on CUDA made them).
        self.graphs: Optional[GraphedPasses] = None

    @property
    def hidden_dim(self) -> int:
        return self.spinn.hidden_dim

    def __call__(
        self,
        inputs: torch.Tensor,
        mask: torch.Tensor,
        transitions: Optional[torch.Tensor] = None,
        return_nodes: bool = False,
        node_inputs: Optional[torch.Tensor] = None,
        reduce_types: Optional[torch.Tensor] = None,
        policy: Optional[TransitionPolicy] = None,
    ) -> SpinnOutput:
        policy = policy if policy is not None else Given()
        if inputs.is_cuda:
            if self.graphs is None:
                self.graphs = GraphedPasses(self.spinn, self.batch_size, self.length_edges)
            checked = self.spinn.checked_policy(policy, transitions, reduce_types, node_inputs)
            typed = reduce_types if self.spinn.num_reduce_types else None
            output = self.graphs(
                inputs, mask, transitions, checked, typed, node_inputs, return_nodes
            )
            if output is not None:
                return output
        return self.spinn(
            inputs,
            mask,
            transitions,
            return_nodes=return_nodes,
            node_inputs=node_inputs,
            reduce_types=reduce_types,
            policy=policy,
        )


def _output(
    outputs: Dict[str, Optional[torch.Tensor]],
    batch_size: int,
    steps: int,
    policy: TransitionPolicy,
) -> SpinnOutput:
    """The pass's output for the batch as given: the padded sentences and steps cut off."""
    fields = {
        name: None if value is None else value[:batch_size] for name, value in outputs.items()
    }
    for name in STEP_FIELDS:
        value = fields.get(name)
        if value is not None:
            fields[name] = value[:, :steps]
    sentence = fields.pop("sentence")
    transitions = fields.pop("transitions")
    assert sentence is not None and transitions is not None
    # Graphed passes are thin- or soft-stack ones: never a beam mixture.
    return SpinnOutput(
        sentence=sentence, transitions=transitions, mode=policy.mode, beam_mix=None, **fields
    )
