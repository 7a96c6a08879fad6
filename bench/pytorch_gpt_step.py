"""PyTorch eager's CPU training step for the three GPT shapes `bench_gpt_step` trains, for the
tokens/s ratio that bench/compare_pytorch measures (issue 30's acceptance).

    python bench/pytorch_gpt_step.py --threads N [--shapes 110k,3.3M,20M] [--dtype fp32|bf16]

The model is bench_gpt_step's (nn/models/gpt.cpp at its defaults): pre-LayerNorm GPT-2 blocks
with biases, tanh GELU, causal scaled_dot_product_attention, an untied lm_head without bias
(model.tie_embeddings defaults to false), fp32. The optimizer is torch.optim.AdamW with its
defaults except weight_decay, which is 0.0 as zerotrain's optimizer.weight_decay default
(PyTorch's default is 0.01); lr 1e-3, betas (0.9, 0.999) and eps 1e-8 are both sides' defaults
and what bench_gpt_step sets. `--dtype bf16` runs the forward and the loss under
torch.autocast("cpu", dtype=torch.bfloat16), PyTorch's CPU mixed precision, against
`bench_gpt_step --dtype bf16` (bf16 weights and activations, fp32 master weights and AdamW
states): the parameters and the optimizer stay fp32, the Linear and attention products run
in bf16 (oneDNN with AMX where the CPU has it), LayerNorm and the loss in fp32. Each shape
trains as many steps as bench_gpt_step does and, as it does, times the mean of steps 2..n.
Prints one line per shape starting with "pytorch-gpt-step", which bench/compare_pytorch reads.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

from torch_gpt_step import Gpt

# bench_gpt_step's CPU shapes (bench/gpt_step.cpp, main): name -> (n_layer, n_head, d_model,
# vocab, seq_len, micro_batch, steps).
SHAPES = {
    "110k": (2, 4, 64, 64, 32, 16, 8),
    "3.3M": (4, 4, 256, 256, 128, 8, 6),
    "20M": (6, 8, 512, 1024, 256, 4, 4),
}


def measure(name, dtype):
    n_layer, n_head, d_model, vocab, seq_len, micro_batch, steps = SHAPES[name]
    torch.manual_seed(0)
    model = Gpt(n_layer, n_head, d_model, vocab, seq_len, tie_embeddings=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    parameters = sum(p.numel() for p in model.parameters())
    step_seconds = []
    for _ in range(steps):
        ids = torch.randint(0, vocab, (micro_batch, seq_len))
        targets = torch.randint(0, vocab, (micro_batch, seq_len))
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bf16"):
            loss = model(ids, targets)
        loss.backward()
        optimizer.step()
        step_seconds.append(time.perf_counter() - start)
    # The first step allocates the optimizer's state and warms caches: time the rest.
    ms = 1000 * sum(step_seconds[1:]) / (steps - 1)
    tokens = micro_batch * seq_len
    print(f"pytorch-gpt-step shape {name} dtype {dtype} params {parameters} "
          f"threads {torch.get_num_threads()} "
          f"step_ms {ms:.2f} tokens_per_s {tokens / (ms / 1000):.0f} loss {loss.item():.4f}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, required=True,
                        help="intra-op threads (torch.set_num_threads): zerotrain's thread count")
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated subset of " + ", ".join(SHAPES))
    parser.add_argument("--dtype", choices=("fp32", "bf16"), default="fp32",
                        help="fp32, or bf16 autocast (against bench_gpt_step --dtype bf16)")
    args = parser.parse_args()
    names = [name for name in args.shapes.split(",") if name]
    unknown = [name for name in names if name not in SHAPES]
    if unknown or not names or args.threads < 1:
        parser.error(f"--shapes: expected names from {', '.join(SHAPES)}, got {args.shapes!r}"
                     if unknown or not names else f"--threads: expected >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    # One step's ops run one after another: no inter-op pool competing for the cores.
    torch.set_num_interop_threads(1)
    print(f"# torch {torch.__version__}, {torch.get_num_threads()} thread(s), "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"MKL_NUM_THREADS={os.environ.get('MKL_NUM_THREADS', 'unset')}", flush=True)
    for name in names:
        measure(name, args.dtype)


if __name__ == "__main__":
    sys.exit(main())
