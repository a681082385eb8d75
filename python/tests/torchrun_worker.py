"""Run by torchrun in test_distributed.py: each rank reads its share and rank 0
writes every rank's rows, in step order, to the output file."""

import json
import sys

import torch.distributed as dist

import tokenfeed


def main(uri: str, out: str, batch_size: int) -> None:
    dist.init_process_group("gloo")
    ds = tokenfeed.TokenDataset(uri, seq_len=48, batch_size=batch_size, seed=11)  # rank, world from dist
    mine = [b["input_ids"].tolist() for b in ds]
    states = [None] * dist.get_world_size()
    dist.all_gather_object(states, ds.state_dict())
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, mine)
    if dist.get_rank() == 0:
        with open(out, "w") as f:
            json.dump({"rows": gathered, "states": states}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
