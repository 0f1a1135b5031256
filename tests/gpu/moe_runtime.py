#!/usr/bin/env python3
"""The experiment that decides issue 13's MoE question, for a session lent a GPU.

Two measured profiles disagree by 2.6x about the routed experts at equal work
(samples/README.md, "Why each kind misses"): deepseek-16b's routed part takes about
120 us per expert per forward, gpt-oss-20b's about 630 us. Both were measured with
Hugging Face training loops, whose expert code differs:

  deepseek (remote code): one nn.Linear module per expert (gate, up, down), tokens
      picked with a boolean mask, results written back with a masked assignment;
  gpt-oss (transformers): all experts in one (E, h, 2f) parameter, each expert's
      slice taken by indexing it with a 0-dim CUDA tensor (a host sync each), gate and
      up interleaved (strided slices), a clamped SwiGLU of 8 elementwise kernels,
      index_add_ back. Indexing a parameter makes its backward write a gradient as
      large as the whole parameter for every expert (select/index backward), which
      a module per expert never does.

This script times both loops with random weights at the profiles' shapes (deepseek:
4096 tokens, top-6 of 64 experts of 2048 x 1408; gpt-oss: 2048 tokens, top-4 of 32 of
2880 x 2880), forward alone and forward + backward, and the gpt-oss loop once more with
its expert weights frozen (no weight gradient), so the three candidate causes separate:
the per-expert host syncs (forward), the whole-parameter gradients (backward only, gone
when frozen), the elementwise chain (both). It needs PyTorch with CUDA (the device
machine's venv has it); it is not part of `make check` and has not been run yet.

usage: python3 tests/gpu/moe_runtime.py [--iters N]      (prints a Markdown table)
"""
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, iters):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / iters * 1e3


def deepseek_loop(x, idx, w, experts):
    """DeepseekMoE.forward in training mode (routed part only)."""
    k = idx.shape[1]
    flat = idx.view(-1)
    xs = x.repeat_interleave(k, dim=0)
    y = torch.empty_like(xs)
    for i, (g, u, d) in enumerate(experts):
        sel = flat == i
        h = xs[sel]
        y[sel] = F.linear(F.silu(F.linear(h, g)) * F.linear(h, u), d)
    return (y.view(*w.shape, -1) * w.unsqueeze(-1)).sum(dim=1)


def gptoss_loop(x, idx, scores, gu, gub, dn, dnb, limit=7.0, alpha=1.702):
    """GptOssExperts.forward in training mode."""
    E = gu.shape[0]
    out = torch.zeros_like(x)
    with torch.no_grad():
        mask = F.one_hot(idx, num_classes=E + 1).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
    for e in hit[:]:
        e = e[0]
        if e == E:
            continue
        with torch.no_grad():
            _, tok = torch.where(mask[e])
        cur = x[tok]
        gate_up = cur @ gu[e] + gub[e]
        gate, up = gate_up[..., ::2], gate_up[..., 1::2]
        gate = gate.clamp(min=None, max=limit)
        up = up.clamp(min=-limit, max=limit)
        glu = gate * torch.sigmoid(gate * alpha)
        o = ((up + 1) * glu) @ dn[e] + dnb[e]
        out.index_add_(0, tok, (o * scores[tok, e, None]).to(x.dtype))
    return out


def route(tokens, E, k, dev):
    logits = torch.randn(tokens, E, device=dev)
    w, idx = torch.topk(logits.softmax(-1), k, dim=-1)
    return idx, w.to(torch.bfloat16)


def main():
    iters = int(sys.argv[sys.argv.index('--iters') + 1]) if '--iters' in sys.argv else 5
    dev, bf = 'cuda', torch.bfloat16
    torch.manual_seed(0)
    rows = []

    # deepseek-16b: 4096 tokens, 64 experts of 2048 x 1408, top 6
    T, h, f, E, k = 4096, 2048, 1408, 64, 6
    x = torch.randn(T, h, device=dev, dtype=bf, requires_grad=True)
    idx, w = route(T, E, k, dev)
    ex = [tuple(torch.nn.Parameter(torch.randn(o, i, device=dev, dtype=bf) * 0.02)
                for o, i in ((f, h), (f, h), (h, f))) for _ in range(E)]
    fwd = timed(lambda: deepseek_loop(x, idx, w, ex), iters)
    both = timed(lambda: deepseek_loop(x, idx, w, ex).sum().backward(), iters)
    rows.append(('deepseek-16b', 'module per expert', E, fwd, both - fwd))

    # gpt-oss-20b: 2048 tokens, 32 experts of 2880 x 2880, top 4
    T, h, f, E, k = 2048, 2880, 2880, 32, 4
    x = torch.randn(T, h, device=dev, dtype=bf, requires_grad=True)
    idx, w = route(T, E, k, dev)
    scores = torch.zeros(T, E, device=dev, dtype=bf).scatter_(1, idx, w)
    for frozen in (False, True):
        ps = [torch.nn.Parameter(t, requires_grad=not frozen) for t in (
            torch.randn(E, h, 2 * f, device=dev, dtype=bf) * 0.02, torch.zeros(E, 2 * f, device=dev, dtype=bf),
            torch.randn(E, f, h, device=dev, dtype=bf) * 0.02, torch.zeros(E, h, device=dev, dtype=bf))]
        fwd = timed(lambda: gptoss_loop(x, idx, scores, *ps), iters)
        both = timed(lambda: gptoss_loop(x, idx, scores, *ps).sum().backward(), iters)
        rows.append(('gpt-oss-20b', 'indexed parameter' + (', frozen' if frozen else ''), E, fwd, both - fwd))

    print('| model | expert weights | experts | F ms | B+W ms | F us per expert | B+W us per expert |')
    print('|---|---|---|---|---|---|---|')
    for name, how, n, fwd, bwd in rows:
        print('| %s | %s | %d | %.2f | %.2f | %.0f | %.0f |' % (name, how, n, fwd, bwd, 1e3 * fwd / n, 1e3 * bwd / n))
    print('profiles (samples/README.md): deepseek about 7.6 ms F / 10.5 ms B+W, gpt-oss about 20 / 31 ms')


if __name__ == '__main__':
    main()
