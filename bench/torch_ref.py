"""PyTorch reference figures on the same GPU, for bench/RESULTS.md.

- eager launch cost: torch.add(a, b, out=c) on 64 floats, host time per call;
- a 200-launch step plus one small read (.item()), wall time per step;
- fp32 matmul (TF32 off) at 1024^3, 2048^3, 4096^3, in TFLOP/s.

Run: python3 bench/torch_ref.py
"""
import time
import torch

assert torch.cuda.is_available()
dev = torch.device("cuda")
print("torch", torch.__version__, torch.cuda.get_device_name(0))
a = torch.rand(64, device=dev)
b = torch.rand(64, device=dev)
c = torch.empty(64, device=dev)
for _ in range(2000):
    torch.add(a, b, out=c)
torch.cuda.synchronize()
for rep in range(3):
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        torch.add(a, b, out=c)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    print(f"eager torch.add(out=) host cost: {(t1 - t0) / n * 1e6:.2f} us/launch (rep {rep})")

steps = []
for rep in range(60):
    t0 = time.perf_counter()
    for _ in range(200):
        torch.add(a, b, out=c)
    v = c[0].item()
    steps.append(time.perf_counter() - t0)
steps.sort()
print(f"200-launch step + read: p50 {steps[len(steps)//2]*1e3:.3f} ms, min {steps[0]*1e3:.3f} ms")

small = []
for rep in range(60):
    t0 = time.perf_counter()
    v = c[0].item()
    small.append(time.perf_counter() - t0)
small.sort()
print(f"small read (.item()): p50 {small[len(small)//2]*1e3:.4f} ms")

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
for n in (1024, 2048, 4096):
    x = torch.rand(n, n, device=dev)
    y = torch.rand(n, n, device=dev)
    for _ in range(3):
        z = x @ y
    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    reps = 20
    e0.record()
    for _ in range(reps):
        z = x @ y
    e1.record()
    torch.cuda.synchronize()
    ms = e0.elapsed_time(e1) / reps
    print(f"fp32 matmul {n}^3 (TF32 off): {ms:.3f} ms, {2 * n**3 / ms / 1e9:.1f} TFLOP/s")
