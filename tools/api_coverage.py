"""How much of Paddle's public API oar provides, per module.

Paddle's names are each module's ``__all__`` (for ``Tensor``: its public
attributes), read from the PaddlePaddle installed in the peers' environment
(benchmarks/setup_peers.sh); a name counts as provided when oar's module of
the same path has it. Names oar deliberately leaves out are listed in
DELIBERATELY_ABSENT with the reason, and counted apart.

    python tools/api_coverage.py [--peers .venv-peers/bin/python] [--out docs/api_coverage.md]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The modules measured, as dotted paths under paddle ("" is paddle itself).
MODULES = ["", "nn", "nn.functional", "linalg", "Tensor", "static", "static.nn", "autograd", "device",
           "distributed", "distributed.fleet", "vision.models", "vision.ops", "text", "utils", "amp", "inference",
           "profiler", "fft", "signal", "sparse", "sparse.nn", "sparse.nn.functional", "distribution",
           "audio.features", "audio.functional", "incubate.autograd"]

# "module:name" -> why oar does not provide it.
_NO_LOD = "LoD (variable-length) tensors: oar has none; use padded [batch, time, dim] tensors with masks"
_NO_IPU = "Graphcore IPU: oar has no IPU backend"
_NO_PS = "parameter-server training: oar has no parameter servers"
DELIBERATELY_ABSENT = {
    ":float8_e4m3fn": "oar has no float8 dtypes (no FP8 kernels on its CPU or CUDA backends)",
    ":float8_e5m2": "oar has no float8 dtypes (no FP8 kernels on its CPU or CUDA backends)",
    ":uint16": "oar's only unsigned dtype is uint8",
    ":uint32": "oar's only unsigned dtype is uint8",
    ":uint64": "oar's only unsigned dtype is uint8",
    ":pstring": "string tensors: oar tensors hold numbers only",
    ":raw": "raw-byte tensors: oar tensors hold numbers only",
    ":MmapStorage": "oar.load maps safetensors files itself; there is no separate storage class",
    ":enable_compat": "it makes `import torch` load Paddle; oar does not stand in for other frameworks",
    ":disable_compat": "it makes `import torch` load Paddle; oar does not stand in for other frameworks",
    "linalg:fp8_fp8_half_gemm_fused": "an FP8 GEMM for NVIDIA Hopper GPUs; oar has no float8 dtypes",
    "static:IpuCompiledProgram": _NO_IPU, "static:IpuStrategy": _NO_IPU, "static:ipu_shard_guard": _NO_IPU,
    "static:set_ipu_shard": _NO_IPU,
    "static.nn:sequence_conv": _NO_LOD, "static.nn:sequence_expand": _NO_LOD, "static.nn:sequence_first_step": _NO_LOD,
    "static.nn:sequence_last_step": _NO_LOD, "static.nn:sequence_pool": _NO_LOD, "static.nn:sequence_softmax": _NO_LOD,
    "device:get_stream_from_external": "it wraps a native stream handle; oar exposes none",
    "distributed:InMemoryDataset": _NO_PS, "distributed:QueueDataset": _NO_PS, "distributed:CountFilterEntry": _NO_PS,
    "distributed:ProbabilityEntry": _NO_PS, "distributed:ShowClickEntry": _NO_PS,
    "inference:_get_phi_kernel_name": "a private name of Paddle's kernel registry",
    "Tensor:rows": "Paddle's SelectedRows type: oar has no such tensor kind",
    "Tensor:get_selected_rows": "Paddle's SelectedRows type: oar has no such tensor kind",
    "Tensor:is_selected_rows": "Paddle's SelectedRows type: oar has no such tensor kind",
    "Tensor:set_string_list": "string tensors: oar tensors hold numbers only",
    "Tensor:set_vocab": "vocabulary tensors: oar tensors hold numbers only",
    "Tensor:get_map_tensor": "vocabulary tensors: oar tensors hold numbers only",
    "Tensor:get_tensor": "it returns Paddle's internal DenseTensor holder, which has its own API; oar has none",
    "Tensor:set_tensor": "it sets Paddle's internal DenseTensor holder, which has its own API; oar has none",
}

# "module:name" -> the module whose own measure covers it (names of the
# sparse, FFT/signal and similar areas that Paddle also hangs on Tensor).
# Names of the sparse layouts that Paddle hangs on Tensor: oar's sparse tensors
# are their own classes (oar.sparse.SparseCooTensor / SparseCsrTensor), which
# have them; a dense Tensor has only the conversions and the is_sparse* tests.
_SPARSE = "paddle.sparse: oar's sparse tensor classes have it; a dense Tensor is never sparse"
MEASURED_ELSEWHERE = {f"Tensor:{n}": _SPARSE for n in (
    "coalesce", "cols", "crows", "indices", "values", "nnz", "dense_dim", "sparse_dim", "is_coalesced", "to_dense")}

_COLLECT = r"""
import json, sys, warnings
warnings.filterwarnings("ignore")
import paddle
out = {}
for mod in json.loads(sys.argv[1]):
    if mod == "Tensor":
        out[mod] = sorted(n for n in dir(paddle.Tensor) if not n.startswith("_"))
        continue
    obj = paddle
    try:
        for part in [p for p in mod.split(".") if p]:
            obj = getattr(obj, part) if hasattr(obj, part) else __import__(obj.__name__ + "." + part, fromlist=["x"])
    except Exception as e:
        out[mod] = {"error": str(e)}
        continue
    names = getattr(obj, "__all__", None)
    if names is None:
        names = [n for n in dir(obj) if not n.startswith("_")]
    out[mod] = sorted(set(names))
print(json.dumps({"version": paddle.__version__, "names": out}))
"""


def paddle_names(peers_python):
    r = subprocess.run([peers_python, "-c", _COLLECT, json.dumps(MODULES)], capture_output=True, text=True,
                       check=True)
    got = json.loads(r.stdout.strip().splitlines()[-1])
    return got["names"], got["version"]


def oar_object(path):
    import importlib
    import oar
    if path == "Tensor":
        return oar.Tensor
    obj = oar
    for part in [p for p in path.split(".") if p]:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(obj.__name__ + "." + part)
            except ImportError:
                return None
    return obj


def coverage(names):
    rows = []
    for mod in MODULES:
        want = names.get(mod)
        if not isinstance(want, list):
            rows.append((mod, 0, 0, 0, [], f"not importable from Paddle: {want}"))
            continue
        obj = oar_object(mod)
        absent = [n for n in want if f"{mod}:{n}" in DELIBERATELY_ABSENT or f"{mod}:{n}" in MEASURED_ELSEWHERE]
        counted = [n for n in want if n not in absent]
        have = [n for n in counted if obj is not None and hasattr(obj, n)]
        missing = [n for n in counted if n not in have]
        rows.append((mod, len(have), len(counted), len(absent), missing, ""))
    return rows


def report(rows, version):
    total_have = sum(r[1] for r in rows)
    total = sum(r[2] for r in rows)
    lines = ["# Paddle API coverage", "",
             f"Measured by `tools/api_coverage.py` against PaddlePaddle {version}: a name counts when oar's "
             "module of the same path has it. Deliberate omissions, and names that belong to another module's "
             "measure, are counted apart and listed with the reason.",
             "", "| module | provided | of Paddle's | coverage | counted apart |", "|---|---|---|---|---|"]
    for mod, have, n, absent, _, err in rows:
        name = "paddle" + ("." + mod if mod else "")
        pct = f"{100 * have / n:.0f}%" if n else "-"
        lines.append(f"| `{name}` | {have} | {n} | {pct} | {absent} |" + (f" {err}" if err else ""))
    lines.append(f"| **all** | {total_have} | {total} | {100 * total_have / max(total, 1):.0f}% | |")
    lines += ["", "## Deliberately absent", ""]
    lines += [f"- `paddle{'.' + k.split(':')[0] if k.split(':')[0] else ''}.{k.split(':')[1]}`: {v}"
              for k, v in sorted(DELIBERATELY_ABSENT.items())]
    lines += ["", "## Measured with another module", ""]
    lines += [f"- `paddle.{k.split(':')[0]}.{k.split(':')[1]}`: {v}" for k, v in sorted(MEASURED_ELSEWHERE.items())]
    lines += ["", "## Missing", ""]
    for mod, _, _, _, missing, _ in rows:
        if missing:
            lines.append(f"- `paddle{'.' + mod if mod else ''}` ({len(missing)}): " +
                         ", ".join(f"`{m}`" for m in missing))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", default=os.path.join(ROOT, ".venv-peers", "bin", "python"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "api_coverage.md"))
    args = ap.parse_args()
    if not os.path.exists(args.peers):
        sys.exit(f"api_coverage: no Paddle environment at {args.peers}; run benchmarks/setup_peers.sh")
    names, version = paddle_names(args.peers)
    rows = coverage(names)
    text = report(rows, version)
    with open(args.out, "w") as f:
        f.write(text)
    print("\n".join(text.splitlines()[4:4 + len(rows) + 3]))


if __name__ == "__main__":
    main()
