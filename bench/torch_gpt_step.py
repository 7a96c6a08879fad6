"""PyTorch's training step for the GPT shape `bench_gpt_step --cuda` trains, for a ratio
measured in the same call on the same GPU: pre-LayerNorm GPT-2 blocks, tied head, bf16 autocast
over fp32 parameters, causal scaled_dot_product_attention (flash on Hopper), fused AdamW.

    python3 bench/torch_gpt_step.py [--model small|medium] [--steps N] [--compile]

Prints one line per mode starting with "torch-gpt-step", which scripts/gpu-check reads.
"""

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.ln_attention = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.attention_out = nn.Linear(d_model, d_model)
        self.ln_mlp = nn.LayerNorm(d_model)
        self.mlp_in = nn.Linear(d_model, 4 * d_model)
        self.mlp_out = nn.Linear(4 * d_model, d_model)

    def forward(self, x):
        batch, seq, d_model = x.shape
        heads = [
            t.view(batch, seq, self.n_head, d_model // self.n_head).transpose(1, 2)
            for t in self.qkv(self.ln_attention(x)).split(d_model, dim=2)
        ]
        attended = F.scaled_dot_product_attention(*heads, is_causal=True)
        x = x + self.attention_out(attended.transpose(1, 2).reshape(batch, seq, d_model))
        hidden = F.gelu(self.mlp_in(self.ln_mlp(x)), approximate="tanh")
        return x + self.mlp_out(hidden)


class Gpt(nn.Module):
    def __init__(self, n_layer, n_head, d_model, vocab, seq_len, tie_embeddings=True):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, d_model)
        self.position_embedding = nn.Embedding(seq_len, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_head) for _ in range(n_layer))
        self.ln_final = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        if tie_embeddings:
            self.head.weight = self.token_embedding.weight

    def forward(self, ids, targets):
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.token_embedding(ids) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_final(x)).float()
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


# GPT-2's published shapes: (n_layer, n_head, d_model).
SHAPES = {"small": (12, 12, 768), "medium": (24, 16, 1024)}


def measure(compiled, steps, model_name, vocab=50304, seq_len=1024, micro_batch=8,
            peak_tflops=989.4):
    n_layer, n_head, d_model = SHAPES[model_name]
    torch.manual_seed(0)
    model = Gpt(n_layer, n_head, d_model, vocab, seq_len).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, fused=True)
    parameters = sum(p.numel() for p in model.parameters())
    step_model = torch.compile(model) if compiled else model
    torch.cuda.reset_peak_memory_stats()
    step_seconds = []
    for _ in range(steps):
        ids = torch.randint(0, vocab, (micro_batch, seq_len), device="cuda")
        targets = torch.randint(0, vocab, (micro_batch, seq_len), device="cuda")
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step_model(ids, targets)
        loss.backward()
        optimizer.step()
        torch.cuda.synchronize()
        step_seconds.append(time.perf_counter() - start)
    # Compilation happens in the first steps: time what follows, as for eager's first step.
    warmup = 3 if compiled else 1
    ms = 1000 * sum(step_seconds[warmup:]) / (steps - warmup)
    tokens = micro_batch * seq_len
    flops = tokens * (6.0 * parameters + 12.0 * n_layer * seq_len * d_model)
    tflops = flops / (ms / 1000) / 1e12
    mode = "compile" if compiled else "eager"
    print(f"torch-gpt-step model {model_name} mode {mode} params {parameters} step_ms {ms:.2f} "
          f"tokens_per_s {tokens / (ms / 1000):.0f} tflops {tflops:.1f} "
          f"mfu {tflops / peak_tflops:.3f} "
          f"peak_mib {torch.cuda.max_memory_allocated() / 2**20:.0f}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(SHAPES), default="small")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name(0)}, "
          f"cuDNN {torch.backends.cudnn.version()}", flush=True)
    measure(False, max(args.steps, 2), args.model)
    if args.compile:
        measure(True, max(args.steps, 4), args.model)


if __name__ == "__main__":
    main()
