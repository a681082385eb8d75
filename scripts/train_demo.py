#!/usr/bin/env python3
"""Trains a small GPT-style model on the CPU, fed by tokenfeed.TokenDataset.

Prints, per step: the loss, tokens/s, and the share of the step spent waiting
for data. Saves the model and the dataset state every --checkpoint-every
steps, and --resume continues from the last checkpoint with exactly the
batches an uninterrupted run would have seen.

The DeepSeek-V3 vocabulary has 129k entries, too many for a one-minute CPU
run: the demo maps the 2047 most frequent ids of its first batch to a small
vocabulary (the rest to one "other" id). The data path is the real one.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import tokenfeed


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab: int, d: int, layers: int, heads: int, seq_len: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    def forward(self, ids, positions, documents):
        x = self.tok(ids) + self.pos(positions)
        T = ids.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool).triu(1)
        # Documents packed into one row do not attend to each other.
        other_doc = documents[:, :, None] != documents[:, None, :]
        mask = (causal[None] | other_doc).repeat_interleave(self.blocks[0].attn.num_heads, dim=0)
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln(x))


def frequent_id_table(uri: str, vocab: int, seq_len: int) -> torch.Tensor:
    """Maps the vocab-1 most frequent ids of the first ~400k tokens to 1..vocab-1, the rest to 0."""
    sample = tokenfeed.TokenDataset(uri, seq_len=seq_len, batch_size=64, shuffle=True, seed=1)
    counts = torch.zeros(1 << 18, dtype=torch.long)
    for i, b in zip(range(50), sample):
        counts += torch.bincount(b["input_ids"].flatten(), minlength=len(counts))[: len(counts)]
    top = torch.argsort(counts, descending=True)[: vocab - 1]
    lut = torch.zeros(len(counts), dtype=torch.long)
    lut[top] = torch.arange(1, len(top) + 1)
    return lut


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", required=True, help="log:DIR/TOPIC or kafka://HOST:PORT/TOPIC")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--checkpoint-dir", default="")
    ap.add_argument("--checkpoint-every", type=int, default=50)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--print-every", type=int, default=10)
    ap.add_argument("--plot", default="", help="write a PNG of the loss and the per-step data wait here")
    args = ap.parse_args()

    torch.manual_seed(0)
    ds = tokenfeed.TokenDataset(args.uri, seq_len=args.seq_len, batch_size=args.batch_size, seed=0, epochs=0)
    model = TinyGPT(args.vocab, args.d_model, args.layers, 4, args.seq_len)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    lut = None
    step = 0
    ckpt = os.path.join(args.checkpoint_dir, "checkpoint.pt") if args.checkpoint_dir else ""
    if args.resume and ckpt and os.path.exists(ckpt):
        saved = torch.load(ckpt)
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        ds.load_state_dict(saved["data"])
        lut, step = saved["lut"], saved["step"]
        print(f"resumed at step {step}")

    if lut is None:
        lut = frequent_id_table(args.uri, args.vocab, args.seq_len)
    it = iter(ds)
    t_start = time.perf_counter()
    waited = computed = first_wait = 0.0
    tokens = 0
    loss_avg = None
    history = []  # (step, loss, ms waiting for the batch, ms of the whole step)
    while time.perf_counter() - t_start < args.seconds:
        t0 = time.perf_counter()
        batch = next(it, None)
        t1 = time.perf_counter()
        if batch is None:
            print("end of data")
            break
        ids, labels = batch["input_ids"], batch["labels"]
        x = lut[ids.clamp(max=len(lut) - 1)]
        y = torch.where(labels >= 0, lut[labels.clamp(min=0, max=len(lut) - 1)], torch.full_like(labels, -100))
        logits = model(x, batch["position_ids"], batch["document_ids"])
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        t2 = time.perf_counter()
        step += 1
        if step == 1:
            first_wait = t1 - t0
        else:  # the first batch (loader start-up) is reported on its own
            waited += t1 - t0
            computed += t2 - t1
        tokens += int(batch["tokens"])
        loss_avg = loss.item() if loss_avg is None else 0.9 * loss_avg + 0.1 * loss.item()
        history.append((step, loss.item(), 1000 * (t1 - t0), 1000 * (t2 - t0)))
        if step % args.print_every == 0 or step == 1:
            wall = time.perf_counter() - t_start
            print(f"step {step:5d}  loss {loss_avg:7.4f}  tokens/s {tokens / wall:9.0f}  "
                  f"data-wait {100 * waited / max(waited + computed, 1e-9):5.2f}%  (this step {1000 * (t1 - t0):6.2f} ms "
                  f"of {1000 * (t2 - t0):7.1f} ms)", flush=True)
        if ckpt and step % args.checkpoint_every == 0:
            os.makedirs(args.checkpoint_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "data": ds.state_dict(),
                        "lut": lut, "step": step}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
    wall = time.perf_counter() - t_start
    m = ds.metrics()
    print(f"done: {step} steps, {tokens} tokens in {wall:.1f} s ({tokens / wall:.0f} tokens/s); first batch after "
          f"{1000 * first_wait:.1f} ms; data-wait {100 * waited / max(waited + computed, 1e-9):.3f}% of the "
          f"later steps' time; loader prefetch {m['ready_batches']}/{m['ready_capacity']} ready")
    if args.plot and history:
        plot(history, args.plot, f"{args.uri}: {step} steps, data-wait {100 * waited / max(waited + computed, 1e-9):.2f}%")
        print(f"plot: {os.path.abspath(args.plot)}")
    if loss_avg is not None and not math.isfinite(loss_avg):
        raise SystemExit("the loss is not finite")


def plot(history, path: str, title: str) -> None:
    """Two panels sharing the step axis: the loss, and how long each step
    waited for its batch next to how long the step took."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(f"cannot draw {path}: matplotlib is missing (scripts/setup.sh installs Debian's "
                         "python3-matplotlib, which the virtual environment sees)") from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h[0] for h in history]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 6), dpi=110)
    top.plot(steps, [h[1] for h in history], lw=0.6, color="tab:blue", alpha=0.35, label="loss")
    smooth, avg = [], None
    for h in history:
        avg = h[1] if avg is None else 0.9 * avg + 0.1 * h[1]
        smooth.append(avg)
    top.plot(steps, smooth, lw=1.6, color="tab:blue", label="loss (moving average)")
    top.set_ylabel("cross-entropy")
    top.legend(loc="upper right")
    top.set_title(title, fontsize=10)
    bottom.plot(steps, [h[3] for h in history], lw=0.8, color="tab:gray", label="whole step")
    bottom.plot(steps, [h[2] for h in history], lw=0.8, color="tab:red", label="waiting for data")
    bottom.set_yscale("log")
    bottom.set_ylabel("ms per step (log)")
    bottom.set_xlabel("step")
    bottom.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


if __name__ == "__main__":
    main()
