#!/usr/bin/env python3
"""PyTorch's side of the GPU benchmark (bench/gpu/README.md), run on the GPU machine with its own PyTorch and
torchvision: each model eager and as a CUDA graph, batch 1, float32, TF32 off, cuDNN on, random weights (the
speed does not depend on them), the same architectures as bench/peer's ONNX models.

usage: torch_bench.py OUT.json [--models resnet18 mobilenetv2] [--runs N]
Writes {"torch": version, "gpu": name, "models": {name: {"eager_ms": {...}, "graph_ms": {...}}}} with the
median / p90 / min per run (each run waited for with torch.cuda.synchronize). Exits 3 with "skipped: reason"
when torch, torchvision or a CUDA device is missing.
"""
import argparse
import json
import sys
import time


def stats(samples):
    s = sorted(samples)
    return {"median": s[len(s) // 2], "p90": s[int(0.9 * (len(s) - 1))], "min": s[0], "runs": len(s)}


def timed(fn, runs, torch):
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) * 1e3)
    return stats(samples)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--models", nargs="*", default=["resnet18", "mobilenetv2"])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args(argv[1:])
    try:
        import torch
        import torchvision
    except ImportError as e:
        print("skipped: %s" % e)
        return 3
    if not torch.cuda.is_available():
        print("skipped: torch sees no CUDA device")
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.enabled = True
    makers = {"resnet18": torchvision.models.resnet18, "mobilenetv2": torchvision.models.mobilenet_v2}
    result = {"torch": torch.__version__, "torchvision": torchvision.__version__,
              "gpu": torch.cuda.get_device_name(0), "models": {}}
    for name in args.models:
        model = makers[name](weights=None).cuda().eval()
        x = torch.randn(1, 3, 224, 224, device="cuda")
        with torch.inference_mode():
            for _ in range(20):
                model(x)
            torch.cuda.synchronize()
            eager = timed(lambda: model(x), args.runs, torch)
        # CUDA graph: captured on a side stream after warm-up, as PyTorch's documentation does it.
        static_x = x.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.inference_mode(), torch.cuda.stream(stream):
            for _ in range(3):
                model(static_x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.inference_mode(), torch.cuda.graph(graph):
            model(static_x)
        for _ in range(20):
            graph.replay()
        torch.cuda.synchronize()
        replay = timed(graph.replay, args.runs, torch)
        result["models"][name] = {"eager_ms": eager, "graph_ms": replay}
        print("%s: eager %.3f ms, CUDA graph %.3f ms (median)" % (name, eager["median"], replay["median"]), flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
