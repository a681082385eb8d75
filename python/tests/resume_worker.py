"""A stand-in training loop for test_distributed.py: it logs a checksum of each
batch, then saves the dataset state with the step number, atomically, after
every step; started again, it resumes from the saved state.

With RANK WORLD SHARDS STEPS: one rank of a sharded run (no process group: a
sharded rank needs none), STEPS steps, its own state file. With EPOCHS too
(and STEPS 0): a finite sharded run, to its end."""

import hashlib
import json
import os
import sys

import tokenfeed


def main(uri: str, workdir: str, rank: int = 0, world: int = 1, shards: int = 1, steps: int = 0,
         epochs: int = 0) -> None:
    state_file = os.path.join(workdir, "state.json")
    if shards > 1:
        ds = tokenfeed.TokenDataset(uri, seq_len=64, batch_size=4, seed=21, epochs=epochs, shards=shards, rank=rank,
                                    world_size=world)
    else:
        ds = tokenfeed.TokenDataset(uri, seq_len=64, batch_size=4, seed=21, epochs=2)
    step = 0
    if os.path.exists(state_file):
        with open(state_file) as f:
            saved = json.load(f)
        ds.load_state_dict(saved["data"])
        step = saved["step"]
    with open(os.path.join(workdir, "log.txt"), "a") as log:
        for batch in ds:
            if steps and step >= steps:
                break
            digest = hashlib.sha256(batch["input_ids"].numpy().tobytes()).hexdigest()[:16]
            log.write(f"{step} {digest}\n")
            log.flush()
            step += 1
            tmp = state_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"step": step, "data": ds.state_dict()}, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, state_file)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:]))
