"""Run by torchrun in test_distributed.py: each rank reads its share and rank 0
writes every rank's rows, in step order, to the output file.

With SHARDS and STEPS (sharded, endless): STEPS batches of each rank, with
each rank's state and metrics. With SHARDS, STEPS 0 and EPOCHS: a finite
sharded run, each rank to its end."""

import itertools
import json
import sys

import torch.distributed as dist

import tokenfeed


def main(uri: str, out: str, batch_size: int, shards: int = 1, steps: int = 0, epochs: int = 0) -> None:
    dist.init_process_group("gloo")
    extra = dict(shards=shards, epochs=epochs) if shards > 1 else {}
    ds = tokenfeed.TokenDataset(uri, seq_len=48, batch_size=batch_size, seed=11, **extra)  # rank, world from dist
    batches = itertools.islice(ds, steps) if steps else ds
    mine = [b["input_ids"].tolist() for b in batches]
    world = dist.get_world_size()
    states, gathered, metrics = [None] * world, [None] * world, [None] * world
    dist.all_gather_object(states, ds.state_dict())
    dist.all_gather_object(gathered, mine)
    dist.all_gather_object(metrics, {k: v for k, v in ds.metrics().items() if k in ("records_read", "bytes_read")})
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump({"rows": gathered, "states": states, "metrics": metrics}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
