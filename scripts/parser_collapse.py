"""Why does a latent ListOps parser collapse to a trivial tree? Two measurements on a run's
folder (its config.json and vocabulary; results/listops/README.md, "Why they collapse"), and
one of the data:

    .venv/bin/python scripts/parser_collapse.py inspect RUN RUN/model_state_e4_b0.th
    .venv/bin/python scripts/parser_collapse.py reward RUN --batches 400
    .venv/bin/python scripts/parser_collapse.py positions RUN

``inspect``: on dev lines (at most ``--max-tokens`` tokens, the first ``--lines``), the parser's
legal-move distribution at the steps where both moves are legal: its mean entropy (ln 2 =
0.693 is uniform), the share of steps where the move drawn has probability > 0.99, the mean
and standard deviation of the REDUCE - SHIFT logit gap, and the share of sentences whose drawn
tree, and whose greedy tree (the self-critical baseline's), is exactly right- or
left-branching; and the mean norm of the sentence vectors (what the composition's nodes have
grown to). For each weights file: the trained model, the trained model with its parser's
weights (the encoder's ``parser_parameters()``: its tracker and classifiers, or the whole
network of a ``parser`` block) put back to a fresh initialisation, and the fresh model with
the trained parser: which of the two moved the parser to its trivial tree.

``reward``: a fresh model whose parser is frozen at its initialisation (near-uniform moves)
trains its composition on the trees that parser draws (Adam 10^-3, batches of 128, training
lines of the config's reader); every few batches, the dev loss under the gold, balanced, left-
and right-branching trees and the drawn ones, and the push REINFORCE would give the parser's
REDUCE - SHIFT bias: the gradient of ``-mean(A log p(tree))`` over 8 draws per line, with the
greedy tree's loss as the baseline and with the draws' mean (x 1000; > 0: a descent step
favours SHIFT, towards right-branching trees); and, with gold trees, the bracket F1 against
them of a draw taken at random, of each line's lowest-loss draw and of its highest-loss draw
(does the loss single out gold-like trees among a line's draws?). With ``--trees FILE`` (the
dev file with a parser's trees as its brackets, ``scripts/listops_with_trees.py``), also the
dev loss under those trees and, of the lines where they are not the gold tree, the share whose
loss is lower under gold: would a composition that has seen every tree, judging a trained
parser's trees against gold, point that parser towards gold?

``positions``: how much a line's first and last few tokens each tell of its label (mutual
information, over the training lines of at most ``--max-tokens`` tokens the config's reader
keeps): which token a trivial tree puts next to its root matters to a composition that has
not yet learned to read the rest.
"""

import argparse
import copy
import json
import math
import random
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import torch
from allennlp.common import Params
from allennlp.common.util import import_module_and_submodules
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.dataset_readers import DatasetReader
from allennlp.models import Model
from allennlp.nn import util

from spinn_allennlp.modules.tree_encoder import encode, parser_reads_token_ids
from spinn_allennlp.testing import pad_batch
from spinn_core import transitions as tr
from spinn_core.policies import Given, Greedy, Sampled, TransitionPolicy
from spinn_core.tree_scores import bracket_f1

DEV = "data/listops/generated/dev_d20s.tsv"
TRAIN = "data/listops/generated/train_d20s.tsv"
SHAPES: Dict[str, Callable[[int], List[int]]] = {
    "balanced": tr.balanced_transitions,
    "left": tr.left_branching_transitions,
    "right": tr.right_branching_transitions,
}


class Run:
    """A run's model as its config builds it, with its vocabulary."""

    def __init__(self, folder: Path) -> None:
        import_module_and_submodules("spinn_allennlp")
        self.config = json.loads((folder / "config.json").read_text())
        self.vocab = Vocabulary.from_files(folder / "vocabulary")

    def model(self, weights: Optional[Path] = None) -> Model:
        model = Model.from_params(
            vocab=self.vocab, params=Params(copy.deepcopy(self.config["model"]))
        )
        if weights is not None:
            model.load_state_dict(torch.load(weights, map_location="cpu"))
        return model

    def read(self, path: str, reader_key: str, max_tokens: int, lines: int) -> List[Instance]:
        reader = DatasetReader.from_params(Params(copy.deepcopy(self.config[reader_key])))
        kept = []
        for instance in reader.read(path):
            if len(instance["tokens"]) <= max_tokens:
                instance.index_fields(self.vocab)
                kept.append(instance)
                if len(kept) == lines:
                    break
        return kept


def parser_names(model: Model) -> List[str]:
    parser = {id(p) for p in model._encoder.parser_parameters()}
    return [name for name, p in model.named_parameters() if id(p) in parser]


def with_parser_of(model: Model, donor: Model) -> Model:
    """A copy of ``model`` whose parser's weights are ``donor``'s."""
    mixed = copy.deepcopy(model)
    state = mixed.state_dict()
    donor_state = donor.state_dict()
    for name in parser_names(model):
        state[name] = donor_state[name]
    mixed.load_state_dict(state)
    return mixed


def tensors(instances: Sequence[Instance]):
    batch = Batch(list(instances)).as_tensor_dict()
    return batch, util.get_text_field_mask(batch["tokens"])


def shaped(mask: torch.Tensor, shape: Callable[[int], List[int]]) -> torch.Tensor:
    """Each sentence's transitions of one fixed tree shape, padded."""
    return pad_batch([shape(int(n)) for n in mask.sum(1)], tr.PAD)


def losses(model: Model, batch, mask, policy: TransitionPolicy, transitions=None):
    embedded = model._embedder(batch["tokens"])
    # A parser with a network of its own (the encoder's `parser` block) reads the token ids.
    parser_tokens = (
        util.get_token_ids_from_text_field_tensors(batch["tokens"])
        if parser_reads_token_ids(model._encoder)
        else None
    )
    tree = encode(
        model._encoder, embedded, mask, transitions, policy=policy, parser_tokens=parser_tokens
    ).tree
    logits = model._output_layer(model._mlp(tree.sentence))
    gold = batch["label"].long().view(-1)
    return torch.nn.functional.cross_entropy(logits, gold, reduction="none"), tree


def is_shape(transitions: torch.Tensor, mask: torch.Tensor, shape) -> float:
    same = [
        [t for t in row if t != tr.PAD] == shape(int(n))
        for row, n in zip(transitions.tolist(), mask.sum(1))
    ]
    return sum(same) / len(same)


def parser_statistics(model: Model, instances: Sequence[Instance], seed: int) -> Dict[str, float]:
    model.eval()
    batch, mask = tensors(instances)
    with torch.no_grad():
        torch.manual_seed(seed)
        _, tree = losses(model, batch, mask, Sampled())
        greedy = losses(model, batch, mask, Greedy())[1].transitions
    free = tree.action_entropy > 0  # steps where both moves were legal
    gap = (tree.transition_logits[..., tr.REDUCE] - tree.transition_logits[..., tr.SHIFT])[free]
    return {
        "free steps": int(free.sum()),
        "entropy": tree.action_entropy[free].mean().item(),
        "p(drawn) > 0.99": (tree.action_log_probs[free].exp() > 0.99).float().mean().item(),
        "gap mean": gap.mean().item(),
        "gap sd": gap.std().item(),
        "right-branching": is_shape(tree.transitions, mask, tr.right_branching_transitions),
        "left-branching": is_shape(tree.transitions, mask, tr.left_branching_transitions),
        "greedy right-branching": is_shape(greedy, mask, tr.right_branching_transitions),
        "greedy left-branching": is_shape(greedy, mask, tr.left_branching_transitions),
        "|sentence|": tree.sentence.norm(dim=-1).mean().item(),
    }


def inspect(args) -> None:
    run = Run(args.run)
    dev = run.read(args.data or DEV, "validation_dataset_reader", args.max_tokens, args.lines)
    torch.manual_seed(args.seed)
    fresh = run.model()
    rows = [("fresh initialisation", parser_statistics(fresh, dev, args.seed))]
    for weights in args.weights:
        trained = run.model(weights)
        rows += [
            (f"{weights.name}", parser_statistics(trained, dev, args.seed)),
            (
                "  its parser reset",
                parser_statistics(with_parser_of(trained, fresh), dev, args.seed),
            ),
            (
                "  fresh, its parser",
                parser_statistics(with_parser_of(fresh, trained), dev, args.seed),
            ),
        ]
    keys = list(rows[0][1])
    print("| model | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, values in rows:
        print(f"| {name} | " + " | ".join(f"{values[k]:.3g}" for k in keys) + " |")
    if args.json:
        args.json.write_text(json.dumps([{"model": n, **v} for n, v in rows], indent=2) + "\n")


def best_of_draws(
    draw_losses: torch.Tensor, draw_transitions: Sequence[torch.Tensor], gold: torch.Tensor
) -> Dict[str, float]:
    """Does the task's loss pick out gold-like trees among a line's draws? ``draw_losses``
    (K, B): each draw's loss on each line; ``draw_transitions``: the K drawn (B, T) transition
    tensors. Mean sentence-level bracket F1 against ``gold`` of a draw taken at random (the
    mean over the K), of each line's lowest-loss draw and of its highest-loss draw, over the
    lines whose gold tree has a bracket to score."""
    best, worst = draw_losses.argmin(0).tolist(), draw_losses.argmax(0).tolist()
    drawn = [t.tolist() for t in draw_transitions]
    sums = {"drawn F1": 0.0, "lowest-loss draw F1": 0.0, "highest-loss draw F1": 0.0}
    lines = 0
    for b, gold_row in enumerate(gold.tolist()):
        gold_tree = [t for t in gold_row if t != tr.PAD]
        f1 = [bracket_f1([t for t in rows[b] if t != tr.PAD], gold_tree) for rows in drawn]
        if f1[0] is None:
            continue
        lines += 1
        sums["drawn F1"] += sum(f1) / len(f1)
        sums["lowest-loss draw F1"] += f1[best[b]]
        sums["highest-loss draw F1"] += f1[worst[b]]
    return {name: 100 * total / max(lines, 1) for name, total in sums.items()}


def transition_bias(model: Model) -> torch.nn.Parameter:
    """The parser's REDUCE / SHIFT bias: its own network's tracker's with a `parser` block,
    else the encoder's tracker's."""
    parser = model._encoder.parser
    spinn = parser.spinn if parser is not None else model._encoder.spinn
    return spinn.tracker.transition_classifier.bias


def reinforce_push(
    model: Model, batch, mask, step: int, draws: int = 8, gold: Optional[torch.Tensor] = None
) -> Dict[str, float]:
    """The gradient of REINFORCE's loss on the REDUCE - SHIFT bias of the parser (x 1000), and
    with ``gold`` transitions :func:`best_of_draws` of the same draws."""
    with torch.no_grad():
        greedy = losses(model, batch, mask, Greedy())[0]
    bias = transition_bias(model)
    was = bias.requires_grad
    bias.requires_grad_(True)
    drawn, drawn_transitions = [], []
    for k in range(draws):
        torch.manual_seed(20_000 + 100 * step + k)
        loss, tree = losses(model, batch, mask, Sampled())
        drawn.append((loss.detach(), tree.action_log_probs.sum(1)))
        drawn_transitions.append(tree.transitions)
    mean = torch.stack([loss for loss, _ in drawn]).mean(0)
    push = {}
    for name, baseline in (("greedy", greedy), ("mean", mean)):
        bias.grad = None
        total = sum(-((baseline - loss) * log_p).mean() / draws for loss, log_p in drawn)
        total.backward(retain_graph=name == "greedy")
        push[f"push ({name} baseline)"] = 1000 * (bias.grad[tr.REDUCE] - bias.grad[tr.SHIFT]).item()
    bias.grad = None
    bias.requires_grad_(was)
    if gold is not None:
        draw_losses = torch.stack([loss for loss, _ in drawn])
        push.update(best_of_draws(draw_losses, drawn_transitions, gold))
    return push


def their_trees(run: Run, args, dev: Sequence[Instance]) -> torch.Tensor:
    """The transitions of ``--trees``: the same dev lines, in order, bracketed otherwise."""
    lines = run.read(args.trees, "validation_dataset_reader", args.max_tokens, args.lines)
    words = [[t.text for t in line["tokens"]] for line in lines]  # type: ignore[attr-defined]
    if words != [[t.text for t in line["tokens"]] for line in dev]:  # type: ignore[attr-defined]
        raise ValueError(f"{args.trees}: not the dev lines ({args.data or DEV}) in their order")
    return tensors(lines)[0]["transitions"]


def gold_against(model: Model, batch, mask, gold: torch.Tensor, theirs: torch.Tensor):
    """The dev loss under ``theirs`` and, of the lines where ``theirs`` is not ``gold``, the
    share whose loss is lower under gold."""
    gold_loss = losses(model, batch, mask, Given(), gold)[0]
    their_loss = losses(model, batch, mask, Given(), theirs)[0]
    width = max(gold.size(1), theirs.size(1))
    padded = [
        torch.nn.functional.pad(t, (0, width - t.size(1)), value=tr.PAD) for t in (gold, theirs)
    ]
    differ = (padded[0] != padded[1]).any(dim=1)
    preferred = (gold_loss < their_loss)[differ].float()
    return {
        "their trees": their_loss.mean().item(),
        "their trees not gold": differ.float().mean().item(),
        "gold preferred": preferred.mean().item() if bool(differ.any()) else float("nan"),
    }


def reward(args) -> None:
    run = Run(args.run)
    train = run.read(args.train or TRAIN, "dataset_reader", 10**9, 10**9)
    dev = run.read(args.data or DEV, "validation_dataset_reader", args.max_tokens, args.lines)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = run.model()
    for parameter in model._encoder.parser_parameters():
        parameter.requires_grad_(False)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    dev_batch, dev_mask = tensors(dev)
    gold = dev_batch.get("transitions")
    theirs = their_trees(run, args, dev) if args.trees else None
    report_at = {
        b
        for b in (0, 25, 50, 100, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200)
        if b < args.batches
    }
    report_at.add(args.batches)
    rows = []

    def report(step: int) -> None:
        model.eval()
        row: Dict[str, float] = {"batches": step}
        with torch.no_grad():
            if gold is not None:
                row["gold"] = losses(model, dev_batch, dev_mask, Given(), gold)[0].mean().item()
            for name, shape in SHAPES.items():
                given = shaped(dev_mask, shape)
                row[name] = losses(model, dev_batch, dev_mask, Given(), given)[0].mean().item()
            if theirs is not None and gold is not None:
                row.update(gold_against(model, dev_batch, dev_mask, gold, theirs))
            torch.manual_seed(10_000 + step)
            row["drawn"] = losses(model, dev_batch, dev_mask, Sampled())[0].mean().item()
        row.update(reinforce_push(model, dev_batch, dev_mask, step, gold=gold))
        model.train()
        rows.append(row)
        print(json.dumps({k: round(v, 4) for k, v in row.items()}), flush=True)

    report(0)
    order = list(range(len(train)))
    step, start = 0, time.time()
    model.train()
    while step < args.batches:
        random.shuffle(order)
        for first in range(0, len(order), args.batch_size):
            batch, mask = tensors([train[i] for i in order[first : first + args.batch_size]])
            loss = losses(model, batch, mask, Sampled())[0].mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            step += 1
            if step in report_at:
                report(step)
            if step >= args.batches:
                break
    print(f"{time.time() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


def mutual_information(pairs: Sequence[tuple]) -> float:
    """I(X; Y) in nats of the empirical joint distribution of ``pairs`` (x, y)."""
    joint = Counter(pairs)
    xs, ys = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    n = len(pairs)
    return sum(c / n * math.log(c * n / (xs[x] * ys[y])) for (x, y), c in joint.items())


def positions(args) -> None:
    """How much the token at each of a line's first and last few positions tells of its
    label: the mutual information (nats) between the label and that token, over the training
    lines the config's reader keeps (the label's entropy beside it)."""
    run = Run(args.run)
    lines = [
        (instance["label"].label, [token.text for token in instance["tokens"].tokens])
        for instance in run.read(args.train or TRAIN, "dataset_reader", args.max_tokens, 10**9)
    ]
    labels = Counter(label for label, _ in lines)
    row = {
        "lines": len(lines),
        "H(label)": -sum(c / len(lines) * math.log(c / len(lines)) for c in labels.values()),
    }
    long_enough = [(label, tokens) for label, tokens in lines if len(tokens) > 2]
    for index in (0, 1, 2, -3, -2, -1):
        pairs = [(tokens[index], label) for label, tokens in long_enough]
        row[f"I(label; token {index})"] = mutual_information(pairs)
    print(json.dumps({k: round(v, 4) for k, v in row.items()}))
    if args.json:
        args.json.write_text(json.dumps(row, indent=2) + "\n")


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("inspect", "reward", "positions"):
        command = commands.add_parser(name)
        command.add_argument("run", type=Path, help="a run's folder (config.json, vocabulary)")
        command.add_argument("--max-tokens", type=int, default=40 if name == "inspect" else 25)
        command.add_argument("--json", type=Path, default=None, help="also write the rows here")
        if name != "positions":  # `positions` reads training lines only, and draws nothing
            command.add_argument("--data", default=None, help=f"dev lines (default {DEV})")
            command.add_argument("--lines", type=int, default=256 if name == "inspect" else 1024)
            command.add_argument("--seed", type=int, default=0)
        if name != "inspect":
            command.add_argument("--train", default=None, help=f"default {TRAIN}")
    commands.choices["inspect"].add_argument("weights", type=Path, nargs="*")
    commands.choices["reward"].add_argument("--batches", type=int, default=400)
    commands.choices["reward"].add_argument("--batch-size", type=int, default=128)
    commands.choices["reward"].add_argument(
        "--trees", default=None, help="the dev lines with a parser's trees as their brackets"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    {"inspect": inspect, "reward": reward, "positions": positions}[args.command](args)


if __name__ == "__main__":
    main()
